/**
 * The queues of webhook delivery and what their messages say. The fan-out
 * queue takes events (what emitters publish); the deliveries queue takes
 * one attempt of one delivery, a redelivery asked for, or the release of
 * the deliveries that waited for an endpoint to recover; the slow lane
 * takes the attempts the deliveries consumer passes on to it.
 */
import * as v from 'valibot';
import { Id } from '../validation.ts';
import { MAX_ATTEMPTS, RELEASE_LARGEST_PAGE } from './model.ts';

/** The consumer group that turns an event into its deliveries. */
export const WEBHOOK_FANOUT_QUEUE = 'webhookFanout';

/** The consumer group that makes the attempts. */
export const WEBHOOK_DELIVERIES_QUEUE = 'webhookDeliveries';

/**
 * The slow lane: the attempts to endpoints whose last attempts took a
 * second or more, one per batch, so that they hold no other delivery.
 */
export const WEBHOOK_SLOW_DELIVERIES_QUEUE = 'webhookSlowDeliveries';

const EventId = v.pipe(v.string(), v.regex(/^evt_[0-9a-f]{32}$/));

const Reference = {
  orgId: v.pipe(v.string(), v.minLength(1)),
  webhookId: Id,
};

/**
 * Attempt `attempt` of a delivery, by its schedule. `manual`: asked for
 * (a test call), so it goes out even while the endpoint is failing.
 */
export const AttemptMessage = v.object({
  kind: v.literal('attempt'),
  ...Reference,
  deliveryId: Id,
  /** The delivery's event: its body is read with the delivery. */
  eventId: v.optional(EventId),
  attempt: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.maxValue(MAX_ATTEMPTS),
  ),
  manual: v.optional(v.boolean()),
});
export type AttemptMessage = v.InferOutput<typeof AttemptMessage>;

/** A redelivery someone asked for (`token` names it on the delivery). */
export const RedeliverMessage = v.object({
  kind: v.literal('redeliver'),
  ...Reference,
  deliveryId: Id,
  eventId: v.optional(EventId),
  token: Id,
});
export type RedeliverMessage = v.InferOutput<typeof RedeliverMessage>;

/**
 * Sends the parked deliveries of an endpoint on their way again, `page`
 * of them (the first page when absent), then asks for the next page.
 */
export const ReleaseMessage = v.object({
  kind: v.literal('release'),
  ...Reference,
  page: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(RELEASE_LARGEST_PAGE),
    ),
  ),
});
export type ReleaseMessage = v.InferOutput<typeof ReleaseMessage>;

/** Every message of the deliveries queue. */
export const DeliveryMessage = v.variant('kind', [
  AttemptMessage,
  RedeliverMessage,
  ReleaseMessage,
]);
export type DeliveryMessage = v.InferOutput<typeof DeliveryMessage>;
