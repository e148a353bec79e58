/**
 * Application logic of reading sequences and series: the head, a version
 * or a draft, required (a 404, or a 400 for the wrong kind or status); one
 * sequence or series with its versions and live nodes; the pages of them.
 */
import { NotFoundError, RuleViolationError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import type { Sequence } from './model.ts';
import type { SequencesDeps as Deps, VersionWithNodes } from './ports.ts';
import {
  type SequenceDetail,
  type SequenceView,
  type SeriesDetail,
  type SeriesView,
  sequenceView,
  seriesView,
  type VersionDetail,
  type VersionView,
  versionDetail,
  versionView,
} from './views.ts';

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
export const requireSeries = async (
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

/** A version of the sequence with its nodes, or 404. */
export const requireVersion = async (
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

/** The open draft with its nodes: 404 for no such version, 400 for one no longer a draft. */
export const requireDraft = async (
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

/**
 * The versions and live nodes of a head, and the calendar its view shows
 * (the open draft's, else the published version's).
 */
export const detailOf = async (
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
