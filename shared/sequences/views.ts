/**
 * Sequences and series as the API shows them: the views of a head, a
 * version and a node (valibot schemas, read by the routes and the OpenAPI
 * document), the details that gather them, and the mappers from the model.
 */
import * as v from 'valibot';
import { Count, Timestamp, ViewId } from '../validation.ts';
import {
  NODE_TYPES,
  SEQUENCE_STATUSES,
  type Sequence,
  type SequenceNode,
  type SequenceVersion,
  type SeriesCalendar,
  TRIGGER_TYPES,
  VERSION_STATUSES,
} from './model.ts';
import type { VersionWithNodes } from './ports.ts';

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

/** A version's calendar as the views show it: each field, or null. */
export const calendarOf = (version: SeriesCalendar | undefined) => ({
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

/** A version as the API shows it, without its nodes. */
export const versionView = (version: SequenceVersion): VersionView => ({
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

/** A node as the API shows it, at its index in its version (0 first). */
export const nodeView = (node: SequenceNode, index: number): NodeView => ({
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

/** A version with its nodes, in order. */
export const versionDetail = ({
  version,
  nodes,
}: VersionWithNodes): VersionDetail => ({
  ...versionView(version),
  nodes: nodes.map(nodeView),
});
