/**
 * What a committed change of a sequence's head means for the journeys in
 * flight: called once per change the table's stream delivers (at least
 * once, so each effect tolerates a repeat), never by the request that
 * wrote it — a crash after the write loses none of them.
 */
import type { QueueSender } from '../ports.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import type { Sequence } from './model.ts';
import type { SequencesDeps } from './ports.ts';
import type { CleanupMessage, ResumeMessage } from './resume-and-cleanup.ts';
import { cancelSeriesSteps, scheduleSeriesSteps } from './series-schedule.ts';

/** What reacting to a head's change needs. */
export type HeadChangeDeps = Pick<
  SequencesDeps,
  'sequences' | 'organizations' | 'clock'
> &
  SchedulingDeps & { queues: { steps: QueueSender } };

/**
 * Reacts to one change of a head: a deleted sequence is cleaned up, a
 * sequence active again resumes the steps that came due while paused. A
 * series' schedules follow its live calendar (the published version of an
 * active series): activated or published anew, its steps still to come
 * are scheduled; paused, deleted or published anew, the old version's are
 * cancelled.
 */
export const headChanged = async (
  deps: HeadChangeDeps,
  orgId: string,
  before: Sequence | undefined,
  after: Sequence | undefined,
): Promise<void> => {
  const sequence = after ?? before;
  if (sequence?.kind === 'series') {
    const wasLive =
      before?.status === 'active' ? before.publishedVersionId : null;
    const isLive = after?.status === 'active' ? after.publishedVersionId : null;
    if (wasLive && wasLive !== isLive) {
      await cancelSeriesSteps(deps, orgId, sequence.id, wasLive);
    }
    if (after && isLive && isLive !== wasLive) {
      await scheduleSeriesSteps(deps, orgId, after);
    }
    return;
  }
  if (sequence?.kind !== 'sequence') return;
  if (before && !after) {
    await deps.queues.steps.send(
      {
        kind: 'cleanup',
        orgId,
        sequenceId: before.id,
      } satisfies CleanupMessage,
      { group: orgId },
    );
    return;
  }
  if (before?.status === 'paused' && after?.status === 'active') {
    await deps.queues.steps.send(
      {
        kind: 'resume',
        orgId,
        sequenceId: after.id,
      } satisfies ResumeMessage,
      { group: orgId },
    );
  }
};
