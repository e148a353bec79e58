/**
 * Application logic of publishing a draft: checked whole first, each
 * problem naming its field, then made the version new journeys take (a
 * series' calendar), the one published before superseded.
 */
import { type FieldIssue, ValidationError } from '../errors.ts';
import { timeZoneOf } from '../organizations/model.ts';
import { checkRenders } from '../rendering/check-renders.ts';
import { analyzeTemplate } from '../rendering/engine.ts';
import type { Sequence, SequenceVersion } from './model.ts';
import type { SequencesDeps as Deps, VersionWithNodes } from './ports.ts';
import { requireDraft, requireSequence } from './reads.ts';
import { segmentChange } from './series-segments.ts';
import { seriesCalendar } from './timing.ts';
import { type VersionDetail, versionDetail } from './views.ts';

/**
 * What stops a draft from being published, each naming its field: an
 * email without a subject, content without {{unsubscribeUrl}} or that does
 * not render, {{topicOptOutUrl}} without a topic, no email at all; for a
 * series, no start in the future, or a list, tag or segment gone; for a
 * sequence, its trigger's list or tag gone.
 */
const publishProblems = async (
  deps: Pick<Deps, 'lists' | 'tags' | 'segments' | 'clock' | 'organizations'>,
  orgId: string,
  s: Sequence,
  { version, nodes }: VersionWithNodes,
): Promise<FieldIssue[]> => {
  const problems: FieldIssue[] = [];
  if (!nodes.some((node) => node.type === 'send_email')) {
    problems.push({
      field: 'nodes',
      message: 'has no send_email node: a version must send something',
    });
  }
  for (const [index, node] of nodes.entries()) {
    if (node.type !== 'send_email') continue;
    const at = `nodes.${index}`;
    if (!node.subject) {
      problems.push({
        field: `${at}.subject`,
        message: `node ${node.id} has no subject`,
      });
    }
    let variables: string[] | undefined;
    try {
      variables = (await analyzeTemplate(node.content)).variables;
      await checkRenders({
        content: node.content,
        ...(node.subject ? { subject: node.subject } : {}),
      });
    } catch (error) {
      problems.push({
        field: `${at}.content`,
        message: `node ${node.id} does not render: ${(error as Error).message}`,
      });
    }
    // What it uses is unknown until it parses: nothing more to say.
    if (!variables) continue;
    if (!variables.includes('unsubscribeUrl')) {
      problems.push({
        field: `${at}.content`,
        message: `node ${node.id} has no {{unsubscribeUrl}}: every email must let its reader unsubscribe`,
      });
    }
    if (variables.includes('topicOptOutUrl') && !s.topicId) {
      problems.push({
        field: `${at}.content`,
        message: `node ${node.id} uses {{topicOptOutUrl}} but the ${s.kind} has no topic: set topicId, or remove the link`,
      });
    }
  }
  if (s.kind === 'series') {
    const now = deps.clock.now();
    if (!version.startsAt) {
      problems.push({
        field: 'startsAt',
        message: 'is not set: a series needs its day 1 to be published',
      });
    } else if (new Date(version.startsAt) <= now) {
      problems.push({
        field: 'startsAt',
        message: `${version.startsAt} is in the past: day 1 must be in the future`,
      });
    } else {
      // A step's time of day may come before startsAt on its day: that
      // step would never be sent (the past is not scheduled).
      const org = await deps.organizations.get(orgId);
      const zone = org ? timeZoneOf(org) : 'UTC';
      for (const step of seriesCalendar(
        new Date(version.startsAt),
        nodes,
        zone,
      )) {
        if (step.at > now) continue;
        problems.push({
          field: `nodes.${step.index}.sendTimeMinutes`,
          message: `node ${step.nodeId} would go out at ${step.at.toISOString()} (${zone}), which is past: move startsAt or the time of day`,
        });
      }
    }
    const [list, tag] = await Promise.all([
      version.listId ? deps.lists.get(orgId, version.listId) : undefined,
      version.audienceTagId
        ? deps.tags.get(orgId, version.audienceTagId)
        : undefined,
    ]);
    if (!list) {
      problems.push({
        field: 'listId',
        message: version.listId
          ? `list ${version.listId} no longer exists`
          : 'is not set: a series sends to a list',
      });
    }
    if (version.audienceSegmentId) {
      const segment = await deps.segments.get(orgId, version.audienceSegmentId);
      if (!segment || segment.listId !== version.listId) {
        problems.push({
          field: 'audienceSegmentId',
          message: segment
            ? `segment ${segment.id} filters another list than ${version.listId}`
            : `segment ${version.audienceSegmentId} no longer exists`,
        });
      }
    }
    if (version.audienceTagId && !tag) {
      problems.push({
        field: 'audienceTagId',
        message: `tag ${version.audienceTagId} no longer exists`,
      });
    }
  } else if (s.trigger) {
    const { type, targetId } = s.trigger;
    const target =
      type === 'list_joined'
        ? await deps.lists.get(orgId, targetId)
        : await deps.tags.get(orgId, targetId);
    if (!target) {
      problems.push({
        field: 'triggerTargetId',
        message: `the trigger's ${type === 'list_joined' ? 'list' : 'tag'} ${targetId} no longer exists`,
      });
    }
  }
  return problems;
};

/**
 * Publishes a draft: checked whole first (400 `sequence.publishInvalid`
 * naming each problem), then, in one transaction, it becomes the version
 * new journeys take and the one published before is superseded (journeys
 * in flight on it go on with it).
 */
export const publishVersion = async (
  deps: Pick<
    Deps,
    'sequences' | 'segments' | 'lists' | 'tags' | 'clock' | 'organizations'
  >,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionDetail> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  const draft = await requireDraft(deps, orgId, sequenceId, versionId);
  const problems = await publishProblems(deps, orgId, s, draft);
  if (problems.length) {
    throw new ValidationError(
      `Version ${draft.version.number} cannot be published: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
      problems,
      { code: 'sequence.publishInvalid' },
    );
  }
  const now = deps.clock.now().toISOString();
  const previous = s.publishedVersionId
    ? await deps.sequences.getVersion(orgId, s.id, s.publishedVersionId)
    : undefined;
  const published: SequenceVersion = {
    ...draft.version,
    status: 'published',
    publishedAt: now,
    updatedAt: now,
  };
  await deps.sequences.publish(orgId, {
    before: s,
    after: {
      ...s,
      publishedVersionId: published.id,
      draftVersionId: null,
      updatedAt: now,
    },
    draft: draft.version,
    published,
    ...(previous
      ? {
          superseded: {
            before: previous,
            after: {
              ...previous,
              status: 'superseded',
              supersededAt: now,
              updatedAt: now,
            },
          },
        }
      : {}),
    segments: segmentChange(s.name, [previous, draft.version], [published]),
  });
  return versionDetail({ version: published, nodes: draft.nodes });
};
