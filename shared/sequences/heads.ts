/**
 * Application logic of the heads of sequences and series: created (paused,
 * with a version 1 draft; a sequence within the plan's cap), renamed,
 * paused or activated, their topic changed, a series' calendar edited on
 * its draft, and deleted with their versions and nodes.
 */
import {
  ConflictError,
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../errors.ts';
import { sequenceCapOf } from '../organizations/organizations.ts';
import { analyzeTemplate } from '../rendering/engine.ts';
import { requireSegmentOfList } from '../segments/segments.ts';
import type {
  Sequence,
  SequenceNode,
  SequenceVersion,
  SeriesCalendar,
} from './model.ts';
import {
  CapReachedError,
  type SequencesDeps as Deps,
  type SegmentChange,
} from './ports.ts';
import { detailOf, requireSequence, requireSeries } from './reads.ts';
import {
  CALENDAR_FIELDS,
  type CreateSequenceInput,
  type CreateSeriesInput,
  type UpdateSequenceInput,
  type UpdateSeriesInput,
} from './sequence.schema.ts';
import { segmentChange } from './series-segments.ts';
import { NO_CALENDAR, newVersion } from './versions.ts';
import {
  type Deleted,
  type SequenceView,
  type SeriesView,
  sequenceView,
  seriesView,
} from './views.ts';

/** 404 or 400 unless the segment exists and filters the series' list. */
const checkSegment = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  calendar: SeriesCalendar,
) => {
  if (calendar.audienceSegmentId && calendar.listId) {
    await requireSegmentOfList(
      deps,
      orgId,
      calendar.audienceSegmentId,
      calendar.listId,
      'audienceSegmentId',
    );
  }
};

/** 404 for a list, tag or topic that is not the organization's. */
const checkReferences = async (
  deps: Pick<Deps, 'lists' | 'tags' | 'topics'>,
  orgId: string,
  refs: {
    listId?: string | null;
    tagId?: string | null;
    topicId?: string | null;
  },
) => {
  const [list, tag, topic] = await Promise.all([
    refs.listId ? deps.lists.get(orgId, refs.listId) : undefined,
    refs.tagId ? deps.tags.get(orgId, refs.tagId) : undefined,
    refs.topicId ? deps.topics.get(orgId, refs.topicId) : undefined,
  ]);
  if (refs.listId && !list) {
    throw new NotFoundError('list.notFound', `No list ${refs.listId}`);
  }
  if (refs.tagId && !tag) {
    throw new NotFoundError('tag.notFound', `No tag ${refs.tagId}`);
  }
  if (refs.topicId && !topic) {
    throw new NotFoundError('topic.notFound', `No topic ${refs.topicId}`);
  }
};

/**
 * Creates a sequence, paused, with its version 1 draft in one transaction.
 * The trigger's list or tag must be the organization's (404). The plan's
 * cap is checked inside that transaction: concurrent creates cannot pass it.
 */
export const createSequence = async (
  deps: Pick<
    Deps,
    | 'sequences'
    | 'organizations'
    | 'lists'
    | 'tags'
    | 'topics'
    | 'ids'
    | 'clock'
  >,
  orgId: string,
  input: CreateSequenceInput,
): Promise<SequenceView> => {
  const id = deps.ids.createdId();
  const draftId = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun
    ? await deps.sequences.get(orgId, id)
    : undefined;
  if (earlier) return sequenceView(earlier);
  const byList = input.triggerType === 'list_joined';
  const [organization] = await Promise.all([
    deps.organizations.get(orgId),
    checkReferences(
      deps,
      orgId,
      byList
        ? { listId: input.triggerTargetId }
        : { tagId: input.triggerTargetId },
    ),
  ]);
  const cap = organization ? sequenceCapOf(organization) : 0;
  const now = deps.clock.now().toISOString();
  const draft = newVersion(id, draftId, 1, now, NO_CALENDAR);
  const sequence: Sequence = {
    id,
    kind: 'sequence',
    name: input.name,
    status: 'paused',
    topicId: null,
    trigger: { type: input.triggerType, targetId: input.triggerTargetId },
    publishedVersionId: null,
    draftVersionId: draft.id,
    versionCount: 1,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  try {
    await deps.sequences.create(orgId, sequence, draft, { cap });
  } catch (error) {
    if (!(error instanceof CapReachedError)) throw error;
    const count = await deps.sequences.count(orgId, 'sequence');
    throw new RuleViolationError(
      'sequence.capReached',
      `The plan allows ${cap} sequences and the organization has ${count} (paused ones count): delete one, or ask the operator to raise the cap`,
      { cause: error },
    );
  }
  return sequenceView(sequence);
};

/**
 * Creates a series, paused, with its version 1 draft holding the calendar
 * (list, optional start, segment and tag). A `triggerType` sent along
 * changes nothing: a series' trigger is its calendar.
 */
export const createSeries = async (
  deps: Pick<
    Deps,
    'sequences' | 'segments' | 'lists' | 'tags' | 'topics' | 'ids' | 'clock'
  >,
  orgId: string,
  input: CreateSeriesInput,
): Promise<SeriesView> => {
  const id = deps.ids.createdId();
  const draftId = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun
    ? await deps.sequences.get(orgId, id)
    : undefined;
  if (earlier) {
    const { calendar } = await detailOf(deps, orgId, earlier);
    return seriesView(earlier, calendar);
  }
  await checkReferences(deps, orgId, {
    listId: input.listId,
    tagId: input.audienceTagId,
    topicId: input.topicId,
  });
  const calendar: SeriesCalendar = {
    startsAt: input.startsAt ? new Date(input.startsAt).toISOString() : null,
    listId: input.listId,
    audienceSegmentId: input.audienceSegmentId,
    audienceTagId: input.audienceTagId,
  };
  await checkSegment(deps, orgId, calendar);
  const now = deps.clock.now().toISOString();
  const draft = newVersion(id, draftId, 1, now, calendar);
  const series: Sequence = {
    id,
    kind: 'series',
    name: input.name,
    status: 'paused',
    topicId: input.topicId,
    trigger: null,
    publishedVersionId: null,
    draftVersionId: draft.id,
    versionCount: 1,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await deps.sequences.create(orgId, series, draft, {
    segments: segmentChange(series.name, [], [draft]),
  });
  return seriesView(series, draft);
};

/** The nodes of `version` whose content uses {{topicOptOutUrl}}. */
const topicLinkNodes = async (nodes: SequenceNode[]) => {
  const linking = await Promise.all(
    nodes.map(
      async (node) =>
        node.type === 'send_email' &&
        (await analyzeTemplate(node.content)).variables.includes(
          'topicOptOutUrl',
        ),
    ),
  );
  return nodes.filter((_, index) => linking[index]);
};

/**
 * The head after a change of name, status or topic. Activation needs a
 * published version; the topic must be the organization's, and cannot be
 * removed while the published version links to it.
 */
const changedHead = async (
  deps: Pick<Deps, 'sequences' | 'topics' | 'lists' | 'tags' | 'clock'>,
  orgId: string,
  s: Sequence,
  input: Pick<UpdateSequenceInput, 'name' | 'status' | 'topicId'>,
): Promise<Sequence> => {
  if (input.status === 'active' && !s.publishedVersionId) {
    throw new RuleViolationError(
      'sequence.notPublished',
      `${s.kind === 'series' ? 'Series' : 'Sequence'} ${s.id} has no published version: publish one (POST /sequences/${s.id}/versions/{versionId}/publish) before activating`,
    );
  }
  if (input.topicId) {
    await checkReferences(deps, orgId, { topicId: input.topicId });
  }
  if (input.topicId === null && s.topicId && s.publishedVersionId) {
    const published = await deps.sequences.getVersionWithNodes(
      orgId,
      s.id,
      s.publishedVersionId,
    );
    const using = await topicLinkNodes(published?.nodes ?? []);
    if (using.length) {
      throw new RuleViolationError(
        'sequence.topicInUse',
        `The published version links to {{topicOptOutUrl}} in node ${using.map((n) => n.id).join(', ')}: publish a version without it before removing the topic`,
      );
    }
  }
  return {
    ...s,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.topicId !== undefined ? { topicId: input.topicId } : {}),
    updatedAt: deps.clock.now().toISOString(),
  };
};

/**
 * Renames, pauses or activates a sequence (or series), or changes its
 * topic. Activation needs a published version.
 */
export const updateSequence = async (
  deps: Pick<Deps, 'sequences' | 'topics' | 'lists' | 'tags' | 'clock'>,
  orgId: string,
  sequenceId: string,
  input: UpdateSequenceInput,
): Promise<SequenceView> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  const after = await changedHead(deps, orgId, s, input);
  // A series renamed here too: its segments learn its new name.
  let segments: SegmentChange | undefined;
  if (s.kind === 'series' && after.name !== s.name) {
    const { published, draft } = await heldVersions(deps, orgId, s);
    const held = [published, draft];
    segments = segmentChange(after.name, held, held, true);
  }
  await deps.sequences.update(orgId, s, after, undefined, segments);
  return sequenceView(after);
};

/**
 * Edits a series: name, status and topic on the series; start, list,
 * segment and tag on the open draft (never on a published version). A
 * calendar field with no draft open is a 400 and nothing changes.
 */
export const updateSeries = async (
  deps: Pick<
    Deps,
    'sequences' | 'segments' | 'topics' | 'lists' | 'tags' | 'clock'
  >,
  orgId: string,
  seriesId: string,
  input: UpdateSeriesInput,
): Promise<SeriesView> => {
  const s = await requireSeries(deps, orgId, seriesId);
  const calendarFields = CALENDAR_FIELDS.filter(
    (field) => input[field] !== undefined,
  );
  const { published, draft: openDraft } = await heldVersions(deps, orgId, s);
  let draft: SequenceVersion | undefined;
  if (calendarFields.length) {
    if (!s.draftVersionId) {
      throw new ValidationError(
        `No draft is open: ${calendarFields.join(', ')} ${calendarFields.length > 1 ? 'are' : 'is'} written on a draft (open one with POST /sequences/${s.id}/versions); nothing changed`,
        calendarFields.map((field) => ({
          field,
          message: 'needs an open draft',
        })),
        { code: 'sequence.noDraft' },
      );
    }
    draft = openDraft;
    if (!draft) throw changedMeanwhile();
    await checkReferences(deps, orgId, {
      listId: input.listId,
      tagId: input.audienceTagId,
    });
  }
  const after = await changedHead(deps, orgId, s, input);
  const draftAfter: SequenceVersion | undefined = draft && {
    ...draft,
    ...(input.startsAt !== undefined
      ? {
          startsAt: input.startsAt
            ? new Date(input.startsAt).toISOString()
            : null,
        }
      : {}),
    ...(input.listId !== undefined ? { listId: input.listId } : {}),
    ...(input.audienceSegmentId !== undefined
      ? { audienceSegmentId: input.audienceSegmentId }
      : {}),
    ...(input.audienceTagId !== undefined
      ? { audienceTagId: input.audienceTagId }
      : {}),
    updatedAt: after.updatedAt,
  };
  if (draftAfter) await checkSegment(deps, orgId, draftAfter);
  const segments = segmentChange(
    after.name,
    [published, openDraft],
    [published, draftAfter ?? openDraft],
    after.name !== s.name,
  );
  await deps.sequences.update(
    orgId,
    s,
    after,
    draft && draftAfter ? { before: draft, after: draftAfter } : undefined,
    segments,
  );
  if (draftAfter) return seriesView(after, draftAfter);
  const { calendar } = await detailOf(deps, orgId, after);
  return seriesView(after, calendar);
};

/** The published version and the open draft of a series (no nodes). */
const heldVersions = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  s: Sequence,
) => {
  const read = (versionId: string | null) =>
    versionId
      ? deps.sequences.getVersion(orgId, s.id, versionId)
      : Promise.resolve(undefined);
  const [published, draft] = await Promise.all([
    read(s.publishedVersionId),
    read(s.draftVersionId),
  ]);
  return { published, draft };
};

const changedMeanwhile = () =>
  new ConflictError(
    'sequence.changed',
    'The sequence changed while the request ran; read it again and retry',
  );

/**
 * Deletes a sequence with its versions and nodes (a series' id is a 400:
 * DELETE /series/{seriesId} deletes a series).
 */
export const deleteSequence = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
): Promise<Deleted> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  if (s.kind !== 'sequence') {
    throw new RuleViolationError(
      'sequence.isSeries',
      `${sequenceId} is a series: delete it with DELETE /series/${sequenceId}`,
    );
  }
  await deps.sequences.delete(orgId, s);
  return { id: sequenceId };
};

/**
 * Deletes a series with its versions and nodes; the campaigns its steps
 * sent remain. A sequence's id is a 400.
 */
export const deleteSeries = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  seriesId: string,
): Promise<Deleted> => {
  const s = await requireSeries(deps, orgId, seriesId);
  // The live versions (published, draft) hold its segments.
  const { published, draft } = await heldVersions(deps, orgId, s);
  await deps.sequences.delete(
    orgId,
    s,
    segmentChange(s.name, [published, draft], []),
  );
  return { id: seriesId };
};
