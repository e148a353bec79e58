/**
 * The segments a series holds: the segment of each of its versions that
 * counts (the published one, the open draft) is held, so that it cannot be
 * deleted while the series uses it. Each series write says how it moves
 * them, in its own transaction.
 */
import type { SeriesCalendar } from './model.ts';
import type { SegmentChange, SegmentRef } from './ports.ts';

/**
 * How a series write moves the segments it holds: the segments of the
 * versions that count (published and draft) before and after it. With
 * `refresh` (a rename), every segment held is written again, so that a
 * refused segment deletion names the series by its new name.
 */
export const segmentChange = (
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
