/**
 * The `webhookSlowDeliveries` consumer: the slow lane. The attempts to
 * endpoints whose last attempts took a second or more, one per batch, so
 * that each holds no other delivery while its endpoint takes its time (up
 * to the attempt's 5 s). Its retries go back to the deliveries queue,
 * which passes them on here while the endpoint stays slow.
 */
import {
  type DepsOf,
  queue,
  scheduler,
  table,
  webhookCalls,
} from '../../shared/bindings.ts';
import { consumer } from '../../shared/queue/consumer.ts';
import { handleDeliveryMessage } from '../../shared/webhooks/attempts.ts';
import {
  DeliveryMessage,
  WEBHOOK_DELIVERIES_QUEUE,
  WEBHOOK_SLOW_DELIVERIES_QUEUE,
} from '../../shared/webhooks/queues.ts';
import { webhookDeliveriesBindings } from '../webhook-deliveries/consumer.ts';

/** What the `webhookSlowDeliveries` consumer may use: the fast lane's but its queue. */
export const webhookSlowDeliveriesBindings = [
  table({
    stores: ['webhooks', 'webhookDeliveries'],
    actions: webhookDeliveriesBindings[0].actions,
  }),
  queue(WEBHOOK_DELIVERIES_QUEUE),
  scheduler(WEBHOOK_DELIVERIES_QUEUE),
  webhookCalls,
] as const;

/** The deps of the `webhookSlowDeliveries` consumer. */
export type WebhookSlowDeliveriesDeps = DepsOf<
  typeof webhookSlowDeliveriesBindings
>;

/** The `webhookSlowDeliveries` consumer group. */
export const webhookSlowDeliveriesConsumer = consumer<
  WebhookSlowDeliveriesDeps,
  typeof DeliveryMessage
>({
  name: WEBHOOK_SLOW_DELIVERIES_QUEUE,
  entry: 'functions/webhook-slow-deliveries/lambda.ts',
  queue: {
    // Six times the function's 10 s: one attempt, 5 s at most, its writes.
    visibilityTimeoutSeconds: 60,
    // One attempt per batch: a slow one holds nobody else's.
    batchSize: 1,
    maxConcurrency: 50,
    maxReceiveCount: 10,
    // Locally too, many at once: each waits on its endpoint, not the engine.
    localConcurrency: 10,
  },
  message: DeliveryMessage,
  handle: (deps, message) => handleDeliveryMessage(deps, message, 'slow'),
});
