/**
 * The `send` consumer: sends one batch of a campaign per message — each
 * recipient claimed before SES is called, every send paced to the
 * account's rate — then counts the batch and asks the dispatcher for the
 * next.
 */
import {
  addressKey,
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  queue,
  sendingQuota,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import { BatchMessage, deliverBatch } from '../../shared/campaigns/deliver.ts';
import { DISPATCH_QUEUE, SEND_QUEUE } from '../../shared/campaigns/send.ts';
import { consumer } from '../../shared/queue/consumer.ts';

/** What the `send` consumer may use. */
export const sendBindings = [
  table({
    stores: [
      'organizations',
      'appSettings',
      'identities',
      'domains',
      'lists',
      'contacts',
      'segments',
      'campaigns',
      'audience',
      'sendWindows',
      'topics',
      'sends',
      'pacer',
      'delivery',
      // What the content merges: read once per batch, if it reads them.
      'fields',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      // A batch's recipients read again over its range of the list.
      'dynamodb:Query',
    ],
  }),
  endpoints,
  mail,
  // Per-recipient unsubscribe and topic links.
  linkSecret,
  sendingStatus,
  sendingQuota,
  queue(DISPATCH_QUEUE),
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `send` consumer. */
export type SendConsumerDeps = DepsOf<typeof sendBindings>;

/** The `send` consumer group. */
export const sendConsumer = consumer<SendConsumerDeps, typeof BatchMessage>({
  name: SEND_QUEUE,
  entry: 'functions/sender/lambda.ts',
  queue: {
    // Six times the function's timeout (50 s): a sender stops by 40 s.
    visibilityTimeoutSeconds: 300,
    // One batch per invocation: batches of all sends interleave.
    batchSize: 1,
    // A send runs up to 4 senders at once and parks as many batches
    // (`ratePlan`); 50 carries an account of 5,000 mails a second across
    // a dozen campaigns (deploy guide).
    maxConcurrency: 50,
    // A batch waits out recipients' leases after a crash (15 minutes).
    maxReceiveCount: 20,
  },
  message: BatchMessage,
  handle: (deps, message) => deliverBatch(deps, message),
});
