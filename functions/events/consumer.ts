/**
 * The `events` consumer: SES's email events of every organization's
 * configuration set (event publishing → EventBridge → this queue), each
 * message being one event's `detail`. One service call per event: record
 * it (and write it in its contact's activity), and suppress the address
 * of a permanent bounce or a complaint.
 */
import {
  addressKey,
  type DepsOf,
  mailboxLookup,
  PIPELINE_ACTIONS,
  table,
  webhookEvents,
} from '../../shared/bindings.ts';
import { ReputationTally } from '../../shared/campaigns/guardrail.ts';
import {
  KnownOrganizations,
  recordSesEvent,
  subjectKey,
} from '../../shared/delivery/events.ts';
import { DETAIL_TYPES, SesEvent } from '../../shared/delivery/ses-event.ts';
import { consumer } from '../../shared/queue/consumer.ts';
import { MailboxProviders } from '../../shared/statistics/mailbox-providers.ts';
import { emitInBatch } from '../../shared/webhooks/emit.ts';
import {
  mailEventsOf,
  withoutErased,
} from '../../shared/webhooks/mail-events.ts';

/** What the `events` consumer may use: the table and the address key. */
export const eventsBindings = [
  // Organizations, suppressions and contacts read; a campaign's events
  // recorded on their recipients, a batch's counts in one transaction;
  // other events and their counters in one; contacts changed with theirs;
  // each event put in its contact's activity.
  table({
    stores: [
      'organizations',
      'lists',
      'contacts',
      'delivery',
      'campaignStats',
      'activity',
      // Each organization's reputation counters, added to once per batch;
      // past a threshold, its guardrail stored and its campaigns paused.
      'reputation',
      'campaigns',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  // Suppressions are keyed by address key.
  addressKey,
  // Each event's webhook events (mail.*), published once per batch.
  webhookEvents,
  // The mailbox provider of a recipient whose domain is not a consumer one.
  mailboxLookup,
] as const;

/** The deps of the `events` consumer. */
export type EventsDeps = DepsOf<typeof eventsBindings>;

/** The organizations this container has seen exist. */
const known = new KnownOrganizations();

/** The mailbox providers of the domains this container looked up. */
const providers = new MailboxProviders();

/** The `events` consumer group. */
export const eventsConsumer = consumer<EventsDeps, typeof SesEvent>({
  name: 'events',
  entry: 'functions/events/lambda.ts',
  queue: {
    // A batch changes at most a few contacts per event: seconds.
    visibilityTimeoutSeconds: 60,
    // A campaign's events arrive by the thousand: batches of up to 100,
    // gathered over 2 s, make one invocation, ten receives and ten deletes
    // of a hundred events instead of a hundred invocations (records are
    // handled in parallel). A lone bounce waits those 2 s more.
    batchSize: 100,
    batchWindowSeconds: 2,
    // Bounces of one big campaign must not starve the API of the table.
    maxConcurrency: 5,
    maxReceiveCount: 5,
  },
  message: SesEvent,
  // A campaign's (or a sequence step's) events are recorded one by one and
  // counted together: one counter write per campaign (or step) and batch,
  // once the batch is handled (see `dynamo-stats-tally.ts`); if it fails,
  // their messages come again.
  // Its webhook events (mail.*) are published with the batch's, once
  // every event was recorded; if that fails, the batch comes again (the
  // events are the same, with the same ids). An erased person's are not.
  handle: async (deps, event, delivery) => {
    const { batch } = delivery;
    await recordSesEvent(
      deps,
      event,
      known,
      batch &&
        ((orgId, subject) =>
          batch.share(
            `${orgId}#${subjectKey(subject)}`,
            () => deps.campaignStats.tally(orgId, subject, deps.clock.now()),
            (tally) => tally.commit(),
          )),
      // After the campaign's tally: each batch's counts of an organization
      // added once its events were recorded (see `reputation.ts`).
      (orgId, type, bounceType) => {
        if (!batch) {
          const alone = new ReputationTally(deps, orgId);
          alone.count(type, bounceType);
          return alone.commit();
        }
        batch
          .share(
            `reputation#${orgId}`,
            () => new ReputationTally(deps, orgId),
            (tally) => tally.commit(),
          )
          .count(type, bounceType);
        return undefined;
      },
      providers,
    );
    // Those wanted, but an erased person's (their addresses read once).
    await emitInBatch(deps, mailEventsOf(event), batch, (taken) =>
      withoutErased(deps, taken),
    );
  },
});

/** The events the consumer subscribes to: every SES email event. */
export const sesEvents = {
  source: ['aws.ses'],
  detailTypes: Object.values(DETAIL_TYPES),
} as const;
