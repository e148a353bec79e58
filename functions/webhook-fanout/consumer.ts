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
    // Six times the function's 10 s: an event is a few small writes.
    visibilityTimeoutSeconds: 60,
    batchSize: 10,
    maxConcurrency: 10,
    maxReceiveCount: 5,
  },
  message: WebhookEventMessage,
  handle: async (deps, event) => {
    await fanOut(deps, event);
  },
});
