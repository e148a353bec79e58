/**
 * The calendar of a series, put on the scheduler: one schedule per step of
 * the published version, each at its instant in the organization's time
 * zone (`seriesCalendar`), delivering a {@link SeriesStepMessage} to the
 * `steps` queue; and their cancel (a pause, a delete, a new version).
 * Firing a step, which makes it a campaign, is `series-steps.ts`: the
 * stream consumer that schedules and cancels loads none of the send path.
 */
import * as v from 'valibot';
import { timeZoneOf } from '../organizations/model.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import { scheduleName } from '../scheduling/ports.ts';
import { Id } from '../validation.ts';
import { MAX_NODES_PER_VERSION, type Sequence } from './model.ts';
import type { SequencesDeps } from './ports.ts';
import { STEPS_QUEUE } from './queue.ts';
import { seriesCalendar } from './timing.ts';

/** The message a series step's schedule delivers to the `steps` queue. */
export const SeriesStepMessage = v.object({
  kind: v.literal('seriesStep'),
  orgId: Id,
  seriesId: Id,
  /** The published version whose calendar the schedule was made from. */
  versionId: Id,
  /** The step: 1 for the version's first send_email node, and so on. */
  step: v.pipe(v.number(), v.integer(), v.minValue(1)),
});
export type SeriesStepMessage = v.InferOutput<typeof SeriesStepMessage>;

/** What scheduling a series' steps reads and writes. */
export type SeriesScheduleDeps = Pick<
  SequencesDeps,
  'sequences' | 'organizations' | 'clock'
> &
  SchedulingDeps;

/** What cancelling a version's steps needs: the scheduler only. */
export type SeriesCancelDeps = SchedulingDeps;

/**
 * The schedule of one step of one version: the same name for the same step,
 * so scheduling again replaces it and a cancel needs no read.
 */
export const seriesStepScheduleName = (
  orgId: string,
  seriesId: string,
  versionId: string,
  step: number,
): string => scheduleName('series', orgId, seriesId, versionId, String(step));

/** One step of a series on its calendar. */
export interface ScheduledStep {
  /** 1 for the version's first send_email node, and so on. */
  step: number;
  at: Date;
}

/**
 * Schedules the steps of an active series' published version, one schedule
 * per step, each at its instant on the calendar (in the organization's
 * time zone, read now), delivering a {@link SeriesStepMessage} to the
 * `steps` queue. Idempotent: a step keeps its schedule's name, so calling
 * it again (an activation after a pause, a retry) replaces them.
 *
 * Steps whose instant has passed are not scheduled, and so never sent: a
 * series activated (or re-activated) after some of its days goes on with
 * the steps still to come, it does not catch up. A paused series, a
 * sequence, or a series with no published version or no day 1 schedules
 * nothing.
 *
 * 1. Read the published version with its nodes, and the organization.
 * 2. Lay the calendar out; keep the steps still in the future.
 * 3. Schedule each (same name, same step).
 *
 * @returns the steps scheduled.
 */
export const scheduleSeriesSteps = async (
  deps: SeriesScheduleDeps,
  orgId: string,
  series: Sequence,
): Promise<ScheduledStep[]> => {
  const versionId = series.publishedVersionId;
  if (series.kind !== 'series' || series.status !== 'active' || !versionId) {
    return [];
  }
  // 1. The version and the organization's time zone.
  const [found, org] = await Promise.all([
    deps.sequences.getVersionWithNodes(orgId, series.id, versionId),
    deps.organizations.get(orgId),
  ]);
  if (!found?.version.startsAt || !org) return [];
  // 2. The calendar; the past is not sent.
  const now = deps.clock.now().getTime();
  const steps = seriesCalendar(
    new Date(found.version.startsAt),
    found.nodes,
    timeZoneOf(org),
  )
    .map(({ at }, index) => ({ step: index + 1, at }))
    .filter(({ at }) => at.getTime() > now);
  // 3. One schedule per step.
  for (const { step, at } of steps) {
    const message: SeriesStepMessage = {
      kind: 'seriesStep',
      orgId,
      seriesId: series.id,
      versionId,
      step,
    };
    await deps.scheduler.schedule({
      name: seriesStepScheduleName(orgId, series.id, versionId, step),
      at,
      queue: STEPS_QUEUE,
      message,
    });
  }
  return steps;
};

/** Schedules cancelled at once. */
const CANCEL_CONCURRENCY = 10;

/**
 * Cancels the schedules of a version's steps (a pause, a delete, a new
 * version published): every name a step of a version can have, from 1 to
 * {@link MAX_NODES_PER_VERSION}, so nothing is read (after a delete the
 * version is gone). A step with no schedule is no error. A schedule that
 * fires anyway does nothing: the fire re-reads the series.
 */
export const cancelSeriesSteps = async (
  deps: SeriesCancelDeps,
  orgId: string,
  seriesId: string,
  versionId: string,
): Promise<void> => {
  const names = Array.from({ length: MAX_NODES_PER_VERSION }, (_, i) =>
    seriesStepScheduleName(orgId, seriesId, versionId, i + 1),
  );
  for (let i = 0; i < names.length; i += CANCEL_CONCURRENCY) {
    await Promise.all(
      names
        .slice(i, i + CANCEL_CONCURRENCY)
        .map((name) => deps.scheduler.cancel(name)),
    );
  }
};
