/**
 * A journey's next step: the send step it comes to (past the waits before
 * it), when that falls due, and what makes it fire — one schedule per
 * journey at a time, named after (sequence, contact, position), or a
 * delayed message to the steps queue when it is due within a minute.
 * Either delivers the `step` message that `run-step.ts` runs.
 */
import * as v from 'valibot';
import type { QueueSender } from '../ports.ts';
import { type SchedulingDeps, scheduleName } from '../scheduling/ports.ts';
import { Id } from '../validation.ts';
import {
  type Enrolment,
  MAX_NODES_PER_VERSION,
  type SendEmailNode,
  type SequenceNode,
} from './model.ts';
import type { SequencesDeps } from './ports.ts';
import { STEPS_QUEUE } from './queue.ts';
import { sequenceStepTime } from './timing.ts';

/**
 * A due instant nearer than this is sent to the queue (delayed) rather
 * than scheduled: a schedule takes a moment to be created and fire.
 */
export const DIRECT_LEAD_MS = 60_000;

const Position = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(0),
  v.maxValue(MAX_NODES_PER_VERSION - 1),
);

/** A step of one journey fell due (a schedule's fire, or sent directly). */
export const StepMessage = v.object({
  kind: v.literal('step'),
  orgId: Id,
  sequenceId: Id,
  contactId: Id,
  position: Position,
});
export type StepMessage = v.InferOutput<typeof StepMessage>;

/** The schedule of a journey's step. */
export const stepScheduleName = (
  orgId: string,
  sequenceId: string,
  contactId: string,
  position: number,
): string => scheduleName('step', orgId, sequenceId, contactId, `${position}`);

/** What scheduling a journey's next step needs. */
export type ScheduleStepDeps = Pick<
  SequencesDeps,
  'clock' | 'sequences' | 'organizations'
> &
  SchedulingDeps & { queues: { steps: QueueSender } };

/**
 * The first send step at or after `from`, with the hours of the waits
 * before it; undefined when none is left.
 */
export const nextSendStep = (
  nodes: readonly SequenceNode[],
  from: number,
): { position: number; node: SendEmailNode; waitHours: number } | undefined => {
  let waitHours = 0;
  for (let position = from; position < nodes.length; position++) {
    const node = nodes[position];
    if (!node) break;
    if (node.type === 'wait') {
      waitHours += node.waitHours;
      continue;
    }
    return { position, node, waitHours };
  }
  return undefined;
};

/** When a step found after waiting `waitHours` from `base` falls due. */
export const stepDueAt = (
  base: Date,
  step: { node: SendEmailNode; waitHours: number },
  zone: string,
): Date =>
  sequenceStepTime(
    new Date(base.getTime() + step.waitHours * 3_600_000),
    step.node.sendTimeMinutes,
    zone,
  );

/**
 * Makes sure the step at the journey's position will fire: a schedule at
 * its due instant, or a delayed message when that is within a minute.
 * Idempotent: the same journey and position give the same schedule.
 */
export const scheduleStep = async (
  deps: ScheduleStepDeps,
  orgId: string,
  journey: Pick<
    Enrolment,
    'sequenceId' | 'contactId' | 'position' | 'dueAt' | 'status'
  >,
): Promise<void> => {
  if (journey.status !== 'active' || !journey.dueAt) return;
  const message: StepMessage = {
    kind: 'step',
    orgId,
    sequenceId: journey.sequenceId,
    contactId: journey.contactId,
    position: journey.position,
  };
  const at = new Date(journey.dueAt);
  const lead = at.getTime() - deps.clock.now().getTime();
  if (lead <= DIRECT_LEAD_MS) {
    await deps.queues.steps.send(message, {
      group: orgId,
      delaySeconds: Math.max(0, Math.ceil(lead / 1000)),
    });
    return;
  }
  await deps.scheduler.schedule({
    name: stepScheduleName(
      orgId,
      journey.sequenceId,
      journey.contactId,
      journey.position,
    ),
    at,
    queue: STEPS_QUEUE,
    message,
  });
};
