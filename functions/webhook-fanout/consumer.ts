/**
 * The `webhookFanout` consumer: each webhook event an emitter published
 * becomes one delivery per enabled endpoint of its organization that takes
 * its type, its body stored once, each first attempt queued.
 */
import { type DepsOf, queue, table } from '../../shared/bindings.ts';
import { consumer } from '../../shared/queue/consumer.ts';
import { WebhookEventMessage } from '../../shared/webhooks/events.ts';
import { fanOut } from '../../shared/webhooks/fan-out.ts';
import {
  WEBHOOK_DELIVERIES_QUEUE,
  WEBHOOK_FANOUT_QUEUE,
} from '../../shared/webhooks/queues.ts';

/** What the `webhookFanout` consumer may use. */
export const webhookFanoutBindings = [
  table({
    stores: ['webhooks', 'webhookDeliveries'],
    actions: [
      // The organization's endpoints.
      'dynamodb:Query',
      // The event's body, each delivery put if absent (and read if there).
      'dynamodb:PutItem',
      'dynamodb:GetItem',
    ],
  }),
  queue(WEBHOOK_DELIVERIES_QUEUE),
] as const;

/** The deps of the `webhookFanout` consumer. */
export type WebhookFanoutDeps = DepsOf<typeof webhookFanoutBindings>;

/** The `webhookFanout` consumer group. */
export const webhookFanoutConsumer = consumer<
  WebhookFanoutDeps,
  typeof WebhookEventMessage
>({
  name: WEBHOOK_FANOUT_QUEUE,
  entry: 'functions/webhook-fanout/lambda.ts',
  queue: {
    // Six times the function's 10 s: an event is a few small writes, and
    // a batch's events are handled together.
    visibilityTimeoutSeconds: 60,
    // Up to 100 events an invocation, waiting a second at most to gather
    // them: an organization's endpoints read once per batch, the first
    // attempts sent ten to a request. Measured at 10 and no window, a
    // stream of events came one per invocation (985 per 1,000 events).
    batchSize: 100,
    batchWindowSeconds: 1,
    maxConcurrency: 10,
    maxReceiveCount: 5,
  },
  message: WebhookEventMessage,
  handle: async (deps, event, delivery) => {
    await fanOut(deps, event, delivery.batch);
  },
});
