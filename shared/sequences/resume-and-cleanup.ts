/**
 * What a change of a sequence's head asks of its journeys (messages that
 * `head-changes.ts` sends from the table's stream), a page of journeys per
 * message:
 * - Resume: a sequence active again sends each step that came due while
 *   it was paused (its journey marked waiting) once; the next ones follow
 *   at their normal spacing from then.
 * - Cleanup: a deleted sequence's journeys have their pending schedules
 *   cancelled, and are deleted.
 */
import * as v from 'valibot';
import type { QueueSender } from '../ports.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import { Id } from '../validation.ts';
import type { SequencesDeps } from './ports.ts';
import { type StepMessage, stepScheduleName } from './step-schedule.ts';

/** Journeys read (or cleaned up) per resume or cleanup message. */
export const JOURNEYS_PER_MESSAGE = 100;

/** A sequence became active again: send the steps that came due meanwhile. */
export const ResumeMessage = v.object({
  kind: v.literal('resume'),
  orgId: Id,
  sequenceId: Id,
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
});
export type ResumeMessage = v.InferOutput<typeof ResumeMessage>;

/** A sequence was deleted: cancel its journeys' schedules, delete them. */
export const CleanupMessage = v.object({
  kind: v.literal('cleanup'),
  orgId: Id,
  sequenceId: Id,
});
export type CleanupMessage = v.InferOutput<typeof CleanupMessage>;

/**
 * Sends the steps that fell due while the sequence was paused, once each
 * (the `resume` message, a page of journeys at a time).
 */
export const resumeSequence = async (
  deps: Pick<SequencesDeps, 'sequences' | 'enrolments'> & {
    queues: { steps: QueueSender };
  },
  message: ResumeMessage,
): Promise<void> => {
  const { orgId, sequenceId } = message;
  const head = await deps.sequences.get(orgId, sequenceId);
  if (head?.kind !== 'sequence' || head.status !== 'active') return;
  const page = await deps.enrolments.page(orgId, sequenceId, {
    limit: JOURNEYS_PER_MESSAGE,
    waiting: true,
    ...(message.cursor ? { cursor: message.cursor } : {}),
  });
  for (const journey of page.items) {
    if (journey.status !== 'active') continue;
    const step: StepMessage = {
      kind: 'step',
      orgId,
      sequenceId,
      contactId: journey.contactId,
      position: journey.position,
    };
    await deps.queues.steps.send(step, { group: orgId });
  }
  if (page.cursor) {
    await deps.queues.steps.send(
      { ...message, cursor: page.cursor } satisfies ResumeMessage,
      { group: orgId },
    );
  }
};

/**
 * Removes a deleted sequence's journeys (the `cleanup` message): each
 * one's pending schedule is cancelled, then the journeys are deleted, a
 * page at a time until none is left. Nothing is done while the head
 * exists.
 */
export const cleanupSequence = async (
  deps: Pick<SequencesDeps, 'sequences' | 'enrolments'> &
    SchedulingDeps & {
      queues: { steps: QueueSender };
    },
  message: CleanupMessage,
): Promise<void> => {
  const { orgId, sequenceId } = message;
  if (await deps.sequences.get(orgId, sequenceId)) return;
  const page = await deps.enrolments.page(orgId, sequenceId, {
    limit: JOURNEYS_PER_MESSAGE,
  });
  for (const journey of page.items) {
    if (journey.status === 'active') {
      await deps.scheduler.cancel(
        stepScheduleName(
          orgId,
          sequenceId,
          journey.contactId,
          journey.position,
        ),
      );
    }
  }
  await deps.enrolments.deleteMany(
    orgId,
    sequenceId,
    page.items.map((journey) => journey.contactId),
  );
  if (page.cursor) {
    await deps.queues.steps.send(message, { group: orgId });
  }
};
