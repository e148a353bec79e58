/**
 * Application logic of sequences and series as resources: the head (name,
 * status, topic, trigger), versions (draft, published, superseded) and
 * their nodes, publishing and the plan's cap. What runs them (enrolments,
 * steps, schedules) is in `journeys.ts`.
 */
import * as v from 'valibot';
import {
  ConflictError,
  type FieldIssue,
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../errors.ts';
import { timeZoneOf } from '../organizations/model.ts';
import { sequenceCapOf } from '../organizations/organizations.ts';
import type { Page, PageRequest } from '../ports.ts';
import { checkRenders } from '../rendering/check-renders.ts';
import { analyzeTemplate } from '../rendering/engine.ts';
import { requireSegmentOfList } from '../segments/segments.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import {
  DEFAULT_NODE_CONTENT,
  MAX_NODES_PER_VERSION,
  MAX_VERSION_CONTENT_BYTES,
  NODE_TYPES,
  SEQUENCE_STATUSES,
  type Sequence,
  type SequenceNode,
  type SequenceVersion,
  type SeriesCalendar,
  TRIGGER_TYPES,
  VERSION_STATUSES,
} from './model.ts';
import {
  CapReachedError,
  type SequencesDeps as Deps,
  type SegmentChange,
  type SegmentRef,
  type VersionWithNodes,
} from './ports.ts';
import {
  CALENDAR_FIELDS,
  type CreateNodeInput,
  type CreateSequenceInput,
  type CreateSeriesInput,
  NODE_FAMILIES,
  type UpdateNodeInput,
  type UpdateSequenceInput,
  type UpdateSeriesInput,
} from './sequence.schema.ts';
import { seriesCalendar } from './timing.ts';

// ---------------------------------------------------------------- views

const nullableId = (what: string) =>
  v.pipe(v.nullable(ViewId), v.description(what));

const headEntries = {
  id: ViewId,
  name: v.string(),
  status: v.pipe(
    v.picklist(SEQUENCE_STATUSES),
    v.description('active (enrols and sends) or paused (does neither)'),
  ),
  topicId: nullableId('The topic of its steps, if any'),
  publishedVersionId: nullableId(
    'The version new journeys take; null until one is published',
  ),
  draftVersionId: nullableId('The open draft, if any (at most one)'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

/** A sequence as the API shows it (a series, read on this route, too). */
export const SequenceView = v.pipe(
  v.object({
    ...headEntries,
    kind: v.pipe(
      v.picklist(['sequence', 'series']),
      v.description(
        'sequence (per contact, on a trigger) or series (a calendar for an audience); a series id works on the sequence routes',
      ),
    ),
    triggerType: v.pipe(
      v.nullable(v.picklist(TRIGGER_TYPES)),
      v.description('What enrols a contact; null for a series'),
    ),
    triggerTargetId: nullableId(
      'The list (list_joined) or tag (tag_added) of the trigger; null for a series',
    ),
  }),
  v.title('Sequence'),
);
export type SequenceView = v.InferOutput<typeof SequenceView>;

const calendarEntries = {
  startsAt: v.pipe(
    v.nullable(Timestamp),
    v.description('Day 1 of the series; null until set'),
  ),
  listId: nullableId('The list it sends to'),
  audienceSegmentId: nullableId('A segment of the list narrowing it'),
  audienceTagId: nullableId('A tag narrowing it further'),
};

/**
 * A series as the API shows it: its calendar is the open draft's when one
 * is open (what an edit changes), else the published version's.
 */
export const SeriesView = v.pipe(
  v.object({
    ...headEntries,
    ...calendarEntries,
    // A series always has a version holding its list (its only draft
    // cannot be discarded).
    listId: v.pipe(ViewId, v.description('The list it sends to')),
  }),
  v.title('Series'),
);
export type SeriesView = v.InferOutput<typeof SeriesView>;

/** A node as the API shows it; fields of the other type are null. */
export const NodeView = v.pipe(
  v.object({
    id: ViewId,
    versionId: ViewId,
    position: v.pipe(
      Count,
      v.description('1 for the first step of its version, then 2, 3…'),
    ),
    type: v.picklist(NODE_TYPES),
    waitHours: v.pipe(
      v.nullable(Count),
      v.description('Hours a wait node waits; null on send_email'),
    ),
    subject: v.pipe(
      v.nullable(v.string()),
      v.description('Liquid, one line; null until set, and on a wait'),
    ),
    content: v.pipe(
      v.nullable(v.string()),
      v.description('The HTML (Liquid); null on a wait'),
    ),
    sendTimeMinutes: v.pipe(
      v.nullable(Count),
      v.description(
        "Minutes from midnight in the organization's time zone; null: as soon as the wait before ends",
      ),
    ),
    templateId: nullableId('The template the content started from'),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('SequenceNode'),
);
export type NodeView = v.InferOutput<typeof NodeView>;

const versionEntries = {
  id: ViewId,
  sequenceId: ViewId,
  number: v.pipe(Count, v.description('1, 2, 3… in the order opened')),
  status: v.pipe(
    v.picklist(VERSION_STATUSES),
    v.description(
      'draft (being edited), published (new journeys take it) or superseded (a newer one was published; journeys that entered it go on with it)',
    ),
  ),
  nodeCount: Count,
  ...calendarEntries,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  publishedAt: v.pipe(
    v.nullable(Timestamp),
    v.description('When it was published'),
  ),
  supersededAt: v.pipe(
    v.nullable(Timestamp),
    v.description('When a newer version replaced it'),
  ),
};

/** A version without its nodes. */
export const VersionView = v.pipe(
  v.object(versionEntries),
  v.title('SequenceVersion'),
);
export type VersionView = v.InferOutput<typeof VersionView>;

/** A version with its nodes, in order. */
export const VersionDetail = v.pipe(
  v.object({ ...versionEntries, nodes: v.array(NodeView) }),
  v.title('SequenceVersionWithNodes'),
);
export type VersionDetail = v.InferOutput<typeof VersionDetail>;

const versionsEntry = {
  versions: v.pipe(
    v.array(VersionView),
    v.description('Every version, by number'),
  ),
  published: v.pipe(
    v.nullable(VersionDetail),
    v.description('The published version with its nodes'),
  ),
  draft: v.pipe(
    v.nullable(VersionDetail),
    v.description('The open draft with its nodes'),
  ),
};

/** GET /sequences/{sequenceId}: the head, its versions and live nodes. */
export const SequenceDetail = v.pipe(
  v.object({ ...SequenceView.entries, ...versionsEntry }),
  v.title('SequenceWithVersions'),
);
export type SequenceDetail = v.InferOutput<typeof SequenceDetail>;

/** GET /series/{seriesId}: the series, its versions and live nodes. */
export const SeriesDetail = v.pipe(
  v.object({ ...SeriesView.entries, ...versionsEntry }),
  v.title('SeriesWithVersions'),
);
export type SeriesDetail = v.InferOutput<typeof SeriesDetail>;

/** The answer of a DELETE of a sequence, series, version or node. */
export const Deleted = v.pipe(
  v.object({ id: v.pipe(ViewId, v.description('The id of what was removed')) }),
  v.title('Deleted'),
);
export type Deleted = v.InferOutput<typeof Deleted>;

const headOf = (s: Sequence) => ({
  id: s.id,
  name: s.name,
  status: s.status,
  topicId: s.topicId,
  publishedVersionId: s.publishedVersionId,
  draftVersionId: s.draftVersionId,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

const calendarOf = (version: SeriesCalendar | undefined) => ({
  startsAt: version?.startsAt ?? null,
  listId: version?.listId ?? null,
  audienceSegmentId: version?.audienceSegmentId ?? null,
  audienceTagId: version?.audienceTagId ?? null,
});

/** The head as the sequence routes show it. */
export const sequenceView = (s: Sequence): SequenceView => ({
  ...headOf(s),
  kind: s.kind,
  triggerType: s.trigger?.type ?? null,
  triggerTargetId: s.trigger?.targetId ?? null,
});

/**
 * The series as its routes show it, with the calendar of `version` (its
 * open draft, else its published version: a series always has one, which
 * names its list — created with it, copied by every new draft).
 */
export const seriesView = (
  s: Sequence,
  version: SeriesCalendar | undefined,
): SeriesView => {
  const calendar = calendarOf(version);
  if (!calendar.listId) {
    throw new Error(`Series ${s.id} has no version naming its list`);
  }
  return { ...headOf(s), ...calendar, listId: calendar.listId };
};

const versionView = (version: SequenceVersion): VersionView => ({
  id: version.id,
  sequenceId: version.sequenceId,
  number: version.number,
  status: version.status,
  nodeCount: version.nodeCount,
  ...calendarOf(version),
  createdAt: version.createdAt,
  updatedAt: version.updatedAt,
  publishedAt: version.publishedAt,
  supersededAt: version.supersededAt,
});

const nodeView = (node: SequenceNode, index: number): NodeView => ({
  id: node.id,
  versionId: node.versionId,
  position: index + 1,
  type: node.type,
  waitHours: node.type === 'wait' ? node.waitHours : null,
  subject: node.type === 'send_email' ? node.subject : null,
  content: node.type === 'send_email' ? node.content : null,
  sendTimeMinutes: node.type === 'send_email' ? node.sendTimeMinutes : null,
  templateId: node.type === 'send_email' ? node.templateId : null,
  createdAt: node.createdAt,
  updatedAt: node.updatedAt,
});

const versionDetail = ({
  version,
  nodes,
}: VersionWithNodes): VersionDetail => ({
  ...versionView(version),
  nodes: nodes.map(nodeView),
});

// ---------------------------------------------------------------- reads

/** The head, or 404 for a missing one or another organization's. */
export const requireSequence = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
): Promise<Sequence> => {
  const sequence = await deps.sequences.get(orgId, sequenceId);
  if (!sequence) {
    throw new NotFoundError(
      'sequence.notFound',
      `No sequence or series ${sequenceId}`,
    );
  }
  return sequence;
};

/** The head of a series; a sequence's id is a 400. */
const requireSeries = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  seriesId: string,
): Promise<Sequence> => {
  const series = await requireSequence(deps, orgId, seriesId);
  if (series.kind !== 'series') {
    throw new RuleViolationError(
      'sequence.notSeries',
      `${seriesId} is a sequence, not a series: use the sequence routes`,
    );
  }
  return series;
};

const requireVersion = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionWithNodes> => {
  const found = await deps.sequences.getVersionWithNodes(
    orgId,
    sequenceId,
    versionId,
  );
  if (!found) {
    throw new NotFoundError(
      'sequenceVersion.notFound',
      `No version ${versionId} of ${sequenceId}`,
    );
  }
  return found;
};

const requireDraft = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionWithNodes> => {
  const found = await requireVersion(deps, orgId, sequenceId, versionId);
  if (found.version.status !== 'draft') {
    throw new RuleViolationError(
      'sequence.versionNotDraft',
      `Version ${found.version.number} is ${found.version.status}: only a draft can change (open one with POST /sequences/${sequenceId}/versions)`,
    );
  }
  return found;
};

/** The published version and the open draft, each with its nodes. */
const liveVersions = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  s: Sequence,
) => {
  const read = (versionId: string | null) =>
    versionId
      ? deps.sequences.getVersionWithNodes(orgId, s.id, versionId)
      : Promise.resolve(undefined);
  const [versions, published, draft] = await Promise.all([
    deps.sequences.versions(orgId, s.id),
    read(s.publishedVersionId),
    read(s.draftVersionId),
  ]);
  return { versions, published, draft };
};

const detailOf = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  s: Sequence,
) => {
  const { versions, published, draft } = await liveVersions(deps, orgId, s);
  return {
    calendar: (draft ?? published)?.version,
    entries: {
      versions: versions.map(versionView),
      published: published ? versionDetail(published) : null,
      draft: draft ? versionDetail(draft) : null,
    },
  };
};

/** One sequence (or series) with its versions and live nodes. */
export const getSequence = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
): Promise<SequenceDetail> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  const { entries } = await detailOf(deps, orgId, s);
  return { ...sequenceView(s), ...entries };
};

/** One series with its versions and live nodes. */
export const getSeries = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  seriesId: string,
): Promise<SeriesDetail> => {
  const s = await requireSeries(deps, orgId, seriesId);
  const { calendar, entries } = await detailOf(deps, orgId, s);
  return { ...seriesView(s, calendar), ...entries };
};

/** Sequences, newest first. */
export const listSequences = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<SequenceView>> => {
  const page = await deps.sequences.page(orgId, 'sequence', request);
  return { items: page.items.map(sequenceView), total: page.total };
};

/** Series, newest first, each with its current calendar. */
export const listSeries = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<SeriesView>> => {
  const page = await deps.sequences.page(orgId, 'series', request);
  const items = await Promise.all(
    page.items.map(async (s) => {
      const versionId = s.draftVersionId ?? s.publishedVersionId;
      const version = versionId
        ? await deps.sequences.getVersion(orgId, s.id, versionId)
        : undefined;
      return seriesView(s, version);
    }),
  );
  return { items, total: page.total };
};

/** Every version of a sequence, by number, without nodes. */
export const listVersions = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
): Promise<VersionView[]> => {
  await requireSequence(deps, orgId, sequenceId);
  const versions = await deps.sequences.versions(orgId, sequenceId);
  return versions.map(versionView);
};

/** One version with its nodes. */
export const getVersion = async (
  deps: Pick<Deps, 'sequences'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionDetail> => {
  await requireSequence(deps, orgId, sequenceId);
  return versionDetail(
    await requireVersion(deps, orgId, sequenceId, versionId),
  );
};

// --------------------------------------------------------------- writes

const NO_CALENDAR: SeriesCalendar = {
  startsAt: null,
  listId: null,
  audienceSegmentId: null,
  audienceTagId: null,
};

/**
 * How a series write moves the segments it holds: the segments of the
 * versions that count (published and draft) before and after it. With
 * `refresh` (a rename), every segment held is written again, so that a
 * refused segment deletion names the series by its new name.
 */
const segmentChange = (
  seriesName: string,
  before: readonly (SeriesCalendar | undefined)[],
  after: readonly (SeriesCalendar | undefined)[],
  refresh = false,
): SegmentChange | undefined => {
  const refs = (versions: readonly (SeriesCalendar | undefined)[]) =>
    versions.flatMap((version) =>
      version?.audienceSegmentId && version.listId
        ? [{ segmentId: version.audienceSegmentId, listId: version.listId }]
        : [],
    );
  const held = refs(before);
  const kept = refs(after);
  const same = (a: SegmentRef, b: SegmentRef) =>
    a.segmentId === b.segmentId && a.listId === b.listId;
  const use = kept.filter(
    (ref, index) =>
      kept.findIndex((other) => same(other, ref)) === index &&
      (refresh || !held.some((other) => same(other, ref))),
  );
  const release = [
    ...new Set(
      held
        .map((ref) => ref.segmentId)
        .filter((id) => !kept.some((ref) => ref.segmentId === id)),
    ),
  ];
  return use.length || release.length
    ? { seriesName, use, release }
    : undefined;
};

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

const newVersion = (
  sequenceId: string,
  id: string,
  number: number,
  now: string,
  calendar: SeriesCalendar,
): SequenceVersion => ({
  id,
  sequenceId,
  number,
  status: 'draft',
  nodeSeq: 0,
  nodeCount: 0,
  contentBytes: 0,
  createdAt: now,
  updatedAt: now,
  publishedAt: null,
  supersededAt: null,
  revision: 1,
  ...calendar,
});

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
  const id = deps.ids.id();
  const draft = newVersion(id, deps.ids.id(), 1, now, NO_CALENDAR);
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
  const id = deps.ids.id();
  const draft = newVersion(id, deps.ids.id(), 1, now, calendar);
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

/**
 * Opens a draft: a copy of the published version (its nodes and, for a
 * series, its calendar), or an empty version when none is published. A
 * draft already open is a 409.
 */
export const openVersion = async (
  deps: Pick<Deps, 'sequences' | 'ids' | 'clock'>,
  orgId: string,
  sequenceId: string,
): Promise<VersionDetail> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  if (s.draftVersionId) {
    throw new ConflictError(
      'sequence.draftOpen',
      `Draft ${s.draftVersionId} is already open: edit or publish it (one draft at a time)`,
    );
  }
  const base = s.publishedVersionId
    ? await deps.sequences.getVersionWithNodes(
        orgId,
        s.id,
        s.publishedVersionId,
      )
    : undefined;
  const now = deps.clock.now().toISOString();
  const id = deps.ids.id();
  const version: SequenceVersion = {
    ...newVersion(
      s.id,
      id,
      s.versionCount + 1,
      now,
      base ? calendarOf(base.version) : NO_CALENDAR,
    ),
    nodeSeq: base?.version.nodeSeq ?? 0,
    nodeCount: base?.nodes.length ?? 0,
    contentBytes: base?.version.contentBytes ?? 0,
  };
  // Nodes keep their ids from version to version: a step is the same step.
  const nodes = (base?.nodes ?? []).map((node) => ({
    ...node,
    versionId: id,
    createdAt: now,
    updatedAt: now,
  }));
  const after: Sequence = {
    ...s,
    draftVersionId: id,
    versionCount: s.versionCount + 1,
    updatedAt: now,
  };
  await deps.sequences.openDraft(orgId, s, after, { version, nodes });
  return versionDetail({ version, nodes });
};

/** Discards the open draft with its nodes. */
export const discardVersion = async (
  deps: Pick<Deps, 'sequences' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<Deleted> => {
  const s = await requireSequence(deps, orgId, sequenceId);
  const { version } = await requireDraft(deps, orgId, sequenceId, versionId);
  if (s.kind === 'series' && !s.publishedVersionId) {
    // The draft is all the series has: its list lives there.
    throw new ValidationError(
      `Version ${version.number} is the only version of series ${s.id}, never published: edit it, or delete the series`,
      [{ field: 'versionId', message: 'is the only version of the series' }],
      { code: 'sequence.onlyVersion' },
    );
  }
  const after: Sequence = {
    ...s,
    draftVersionId: null,
    updatedAt: deps.clock.now().toISOString(),
  };
  const published = s.publishedVersionId
    ? await deps.sequences.getVersion(orgId, s.id, s.publishedVersionId)
    : undefined;
  await deps.sequences.discardDraft(
    orgId,
    s,
    after,
    version,
    segmentChange(s.name, [published, version], [published]),
  );
  return { id: versionId };
};

const bytesOf = (node: SequenceNode) =>
  node.type === 'send_email' ? Buffer.byteLength(node.content) : 0;

const withinBudget = (version: SequenceVersion, bytes: number) => {
  if (bytes > MAX_VERSION_CONTENT_BYTES) {
    throw new ValidationError(
      `The nodes of version ${version.number} would hold ${bytes} bytes of content, above ${MAX_VERSION_CONTENT_BYTES}`,
      [
        {
          field: 'content',
          message: `the version's emails may hold ${MAX_VERSION_CONTENT_BYTES} bytes together`,
        },
      ],
    );
  }
  return bytes;
};

/**
 * Adds a node at the end of a draft: a wait, or an email with the starter
 * content (or a template's content and default subject).
 */
export const addNode = async (
  deps: Pick<Deps, 'sequences' | 'templates' | 'ids' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  input: CreateNodeInput,
): Promise<NodeView> => {
  await requireSequence(deps, orgId, sequenceId);
  const { version, nodes } = await requireDraft(
    deps,
    orgId,
    sequenceId,
    versionId,
  );
  if (version.nodeCount >= MAX_NODES_PER_VERSION) {
    throw new RuleViolationError(
      'sequence.nodeLimit',
      `Version ${version.number} has ${version.nodeCount} nodes, the most one version may hold (${MAX_NODES_PER_VERSION})`,
    );
  }
  const now = deps.clock.now().toISOString();
  const base = {
    id: deps.ids.id(),
    versionId,
    order: version.nodeSeq + 1,
    createdAt: now,
    updatedAt: now,
  };
  let node: SequenceNode;
  if (input.type === 'wait') {
    node = { ...base, type: 'wait', waitHours: input.waitHours };
  } else {
    const template = input.templateId
      ? await deps.templates.get(orgId, input.templateId)
      : undefined;
    if (input.templateId && !template) {
      throw new NotFoundError(
        'template.notFound',
        `No template ${input.templateId}`,
      );
    }
    node = {
      ...base,
      type: 'send_email',
      subject: template?.defaultSubject || null,
      content: template?.content ?? DEFAULT_NODE_CONTENT,
      sendTimeMinutes: null,
      templateId: template?.id ?? null,
    };
  }
  const after: SequenceVersion = {
    ...version,
    nodeSeq: version.nodeSeq + 1,
    nodeCount: version.nodeCount + 1,
    contentBytes: withinBudget(version, version.contentBytes + bytesOf(node)),
    updatedAt: now,
  };
  await deps.sequences.addNode(orgId, version, after, node);
  return nodeView(node, nodes.length);
};

/** The families an edit touches, by the fields it sends. */
const familiesOf = (input: UpdateNodeInput) =>
  Object.entries(NODE_FAMILIES).filter(([, fields]) =>
    fields.some((field) => input[field] !== undefined),
  );

const findNode = (found: VersionWithNodes, nodeId: string) => {
  const index = found.nodes.findIndex((node) => node.id === nodeId);
  if (index < 0) {
    throw new NotFoundError(
      'sequenceNode.notFound',
      `No node ${nodeId} in version ${found.version.number}`,
    );
  }
  return { node: found.nodes[index] as SequenceNode, index };
};

/**
 * Edits one node of a draft, one family of fields per call: {subject,
 * content} or {sendTimeMinutes} on an email, {waitHours} on a wait. Two
 * families, or a family of the other type, are a 400 naming the fields.
 */
export const updateNode = async (
  deps: Pick<Deps, 'sequences' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  nodeId: string,
  input: UpdateNodeInput,
): Promise<NodeView> => {
  await requireSequence(deps, orgId, sequenceId);
  const found = await requireDraft(deps, orgId, sequenceId, versionId);
  const { node, index } = findNode(found, nodeId);
  const families = familiesOf(input);
  const sent = families.flatMap(([, fields]) =>
    fields.filter((field) => input[field] !== undefined),
  );
  if (families.length > 1) {
    throw new ValidationError(
      `One family of fields per call: ${families.map(([, fields]) => `{${fields.join(', ')}}`).join(' and ')} were sent together`,
      sent.map((field) => ({
        field,
        message: 'belongs to another family than the other fields sent',
      })),
    );
  }
  const family = families[0]?.[0];
  const fitsType = node.type === 'wait' ? family === 'wait' : family !== 'wait';
  if (!fitsType) {
    throw new ValidationError(
      `A ${node.type} node has no ${sent.join(', ')}`,
      sent.map((field) => ({
        field,
        message: `is not a field of a ${node.type} node`,
      })),
    );
  }
  const now = deps.clock.now().toISOString();
  let after: SequenceNode;
  if (node.type === 'wait') {
    after = { ...node, waitHours: input.waitHours ?? node.waitHours };
  } else {
    await checkRenders({ subject: input.subject, content: input.content });
    after = {
      ...node,
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(input.content !== undefined ? { content: input.content } : {}),
      ...(input.sendTimeMinutes !== undefined
        ? { sendTimeMinutes: input.sendTimeMinutes }
        : {}),
    };
  }
  after = { ...after, updatedAt: now };
  const { version } = found;
  const versionAfter: SequenceVersion = {
    ...version,
    contentBytes: withinBudget(
      version,
      version.contentBytes - bytesOf(node) + bytesOf(after),
    ),
    updatedAt: now,
  };
  await deps.sequences.updateNode(orgId, version, versionAfter, after);
  return nodeView(after, index);
};

/** Removes one node of a draft. */
export const deleteNode = async (
  deps: Pick<Deps, 'sequences' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  nodeId: string,
): Promise<Deleted> => {
  await requireSequence(deps, orgId, sequenceId);
  const found = await requireDraft(deps, orgId, sequenceId, versionId);
  const { node } = findNode(found, nodeId);
  const { version } = found;
  const after: SequenceVersion = {
    ...version,
    nodeCount: version.nodeCount - 1,
    contentBytes: Math.max(0, version.contentBytes - bytesOf(node)),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.sequences.deleteNode(orgId, version, after, node);
  return { id: nodeId };
};

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
