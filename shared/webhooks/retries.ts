/**
 * When a delivery's next attempt falls due, and how it is made to come
 * then: a wait of up to `queueDelayMaxSeconds` (SQS's limit, 15 minutes,
 * on AWS) is a delayed message to the deliveries queue, a longer one an
 * EventBridge Scheduler one-shot to the same queue, named after the
 * delivery and the attempt (scheduling it again replaces it).
 */
import type { QueueSender } from '../ports.ts';
import { type SchedulingDeps, scheduleName } from '../scheduling/ports.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from './model.ts';
import { type AttemptMessage, WEBHOOK_DELIVERIES_QUEUE } from './queues.ts';

/**
 * When attempt `failed + 1` falls due after attempt `failed` failed at
 * `at`; undefined after the last one (the delivery gives up).
 */
export const nextAttemptAt = (failed: number, at: Date): Date | undefined => {
  if (failed >= MAX_ATTEMPTS) return undefined;
  const delay = RETRY_DELAYS_SECONDS[failed - 1];
  if (delay === undefined) return undefined;
  return new Date(at.getTime() + delay * 1000);
};

/** The schedule of one attempt of one delivery. */
export const attemptScheduleName = (
  deliveryId: string,
  attempt: number,
): string => scheduleName('webhook', deliveryId, String(attempt));

/** What sending an attempt later needs. */
export type SendLaterDeps = SchedulingDeps & {
  clock: { now(): Date };
  queues: { webhookDeliveries: QueueSender };
  queueDelayMaxSeconds: number;
};

/**
 * Makes `message` reach the deliveries queue at `at`: at once when due,
 * by queue delay when near, by a schedule when further. The fair queue's
 * group is the organization (a schedule's delivery carries none).
 */
export const sendAttemptAt = async (
  deps: SendLaterDeps,
  message: AttemptMessage,
  at: Date,
): Promise<void> => {
  const leadSeconds = Math.max(
    0,
    Math.ceil((at.getTime() - deps.clock.now().getTime()) / 1000),
  );
  if (leadSeconds <= deps.queueDelayMaxSeconds) {
    await deps.queues.webhookDeliveries.send(message, {
      group: message.orgId,
      ...(leadSeconds > 0 ? { delaySeconds: leadSeconds } : {}),
    });
    return;
  }
  await deps.scheduler.schedule({
    name: attemptScheduleName(message.deliveryId, message.attempt),
    at,
    queue: WEBHOOK_DELIVERIES_QUEUE,
    message,
  });
};
