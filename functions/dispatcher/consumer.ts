/**
 * The `dispatch` consumer: starts campaign sends (told by the API, or by a
 * schedule's fire), walks their audience by cursor and hands the senders a
 * few batches at a time; each finished batch asks for the next.
 */
import {
  addressKey,
  type DepsOf,
  endpoints,
  PIPELINE_ACTIONS,
  queue,
  sendingQuota,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import {
  DispatchMessage,
  dispatchCampaign,
} from '../../shared/campaigns/dispatch.ts';
import { DISPATCH_QUEUE, SEND_QUEUE } from '../../shared/campaigns/send.ts';
import { consumer } from '../../shared/queue/consumer.ts';

/** What the `dispatch` consumer may use. */
export const dispatchBindings = [
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
      'delivery',
      // A send that starts takes its block of the pacer's lanes.
      'pacer',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
    ],
  }),
  // Readiness when a schedule fires (the From is checked, not used).
  endpoints,
  sendingStatus,
  sendingQuota,
  queue(SEND_QUEUE),
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `dispatch` consumer. */
export type DispatchConsumerDeps = DepsOf<typeof dispatchBindings>;

/** The `dispatch` consumer group. */
export const dispatchConsumer = consumer<
  DispatchConsumerDeps,
  typeof DispatchMessage
>({
  name: DISPATCH_QUEUE,
  entry: 'functions/dispatcher/lambda.ts',
  queue: {
    // A run walks at most one batch's range ahead: seconds.
    visibilityTimeoutSeconds: 60,
    batchSize: 5,
    maxConcurrency: 5,
    maxReceiveCount: 10,
  },
  message: DispatchMessage,
  handle: (deps, message) => dispatchCampaign(deps, message),
});
