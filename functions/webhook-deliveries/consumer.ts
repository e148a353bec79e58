/**
 * The `webhookDeliveries` consumer: one attempt per message — a delivery's
 * scheduled attempt, a redelivery asked for — each a signed POST with its
 * own 5 s, the attempts of a batch made at once; and the release of the
 * deliveries parked while an endpoint failed. The attempts to an endpoint
 * known slow are passed on to the slow lane (`webhookSlowDeliveries`), so
 * that no batch here waits on one.
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

/** What the `webhookDeliveries` consumer may use. */
export const webhookDeliveriesBindings = [
  table({
    stores: ['webhooks', 'webhookDeliveries'],
    actions: [
      'dynamodb:GetItem',
      // Deliveries and health replaced on their version; parked entries.
      'dynamodb:PutItem',
      // Parked deliveries, oldest first.
      'dynamodb:Query',
      // Released ones removed.
      'dynamodb:BatchWriteItem',
      // An endpoint disabled after 5 days of failures, with its summary.
      'dynamodb:UpdateItem',
    ],
  }),
  // The next attempt: by queue delay when near, by a schedule when far.
  queue(WEBHOOK_DELIVERIES_QUEUE),
  scheduler(WEBHOOK_DELIVERIES_QUEUE),
  // A slow endpoint's attempts, passed on.
  queue(WEBHOOK_SLOW_DELIVERIES_QUEUE),
  webhookCalls,
] as const;

/** The deps of the `webhookDeliveries` consumer. */
export type WebhookDeliveriesDeps = DepsOf<typeof webhookDeliveriesBindings>;

/** The `webhookDeliveries` consumer group. */
export const webhookDeliveriesConsumer = consumer<
  WebhookDeliveriesDeps,
  typeof DeliveryMessage
>({
  name: WEBHOOK_DELIVERIES_QUEUE,
  entry: 'functions/webhook-deliveries/lambda.ts',
  queue: {
    // Six times the function's 20 s: a batch's attempts run at once, 5 s
    // each at most, and their writes.
    visibilityTimeoutSeconds: 120,
    batchSize: 10,
    // Headroom for slow endpoints: a batch is held by its slowest attempt.
    maxConcurrency: 50,
    maxReceiveCount: 10,
  },
  message: DeliveryMessage,
  handle: (deps, message) => handleDeliveryMessage(deps, message, 'fast'),
});
