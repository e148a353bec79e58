/**
 * Application logic of a sequence's (or series') versions: a new draft,
 * empty or the copy of the published version, opened one at a time, and
 * discarded with its nodes.
 */
import { ConflictError, ValidationError } from '../errors.ts';
import type { Sequence, SequenceVersion, SeriesCalendar } from './model.ts';
import type { SequencesDeps as Deps } from './ports.ts';
import { requireDraft, requireSequence } from './reads.ts';
import { segmentChange } from './series-segments.ts';
import {
  calendarOf,
  type Deleted,
  type VersionDetail,
  versionDetail,
} from './views.ts';

/** The calendar of a sequence's version: a sequence has none. */
export const NO_CALENDAR: SeriesCalendar = {
  startsAt: null,
  listId: null,
  audienceSegmentId: null,
  audienceTagId: null,
};

/** A new, empty draft numbered `number`, with `calendar`. */
export const newVersion = (
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
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) opened it: that one.
  const earlier = deps.ids.rerun
    ? await deps.sequences.getVersionWithNodes(orgId, s.id, id)
    : undefined;
  if (earlier) return versionDetail(earlier);
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
