/**
 * The `contacts` stream consumer: every committed write of a contact, read
 * from the table's change stream, feeds four readers in one function, so
 * that the table's stream keeps at most two readers per shard (AWS
 * throttles past two):
 * - the **tag index** (one small item per list × tag × contact, so that
 *   `GET /contacts?tagId=` reads the tag's contacts and nothing else): an
 *   entry put per tag gained, deleted per tag lost. Every write path (a
 *   single add, a tag call, an import) is covered, like a secondary index
 *   the table maintains itself; the per-list counts move in the writers'
 *   own transactions, so totals are exact at once; a removed contact's
 *   entries all go;
 * - the **audience facts**: the events the write implies (a first join,
 *   each new tag), published through `AudienceEvents`, which enrol the
 *   contact in the sequences they trigger. The writers publish nothing
 *   themselves, so a crash after a write loses no enrolment;
 * - the **contact's activity**: what the write says happened to the
 *   contact (a status entered and how, a sign-up, a confirmation, tags,
 *   field values), one item per event, an import's writes included;
 * - its **webhook events** (`contact.*`, `signup.submitted`): the same
 *   derivation as the activity, plus its creation and removal, published
 *   only when an endpoint of the organization takes them.
 *
 * Each handler is idempotent on its own (index entries derived from the
 * record's two images; an enrolment put only if absent; activity items
 * keyed by the contact's version), so a retried record runs them all
 * again harmlessly. All run for every record, even when another fails: a
 * failing enrolment does not hold back the index or the activity of the
 * same record; the record fails (and is retried) if any did.
 */

import { recordContactActivity } from '../../shared/activity/contact-activity.ts';
import {
  type ContactImage,
  contactImageOf,
} from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import { publishContactFacts } from '../../shared/audience/facts.ts';
import {
  type DepsOf,
  queue,
  scheduler,
  table,
  webhookEvents,
} from '../../shared/bindings.ts';
import { enrolFromEvents } from '../../shared/sequences/enrolment.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import {
  type StreamChange,
  streamConsumer,
} from '../../shared/streams/consumer.ts';
import { contactWebhookEvents } from '../../shared/webhooks/contact-events.ts';
import { emitInBatch } from '../../shared/webhooks/emit.ts';

/**
 * What the `contacts` consumer may use: the tag index's puts and deletes;
 * the activity's puts; the sequences a fact triggers, the contact, the
 * published version (reads); the journey (a conditional put); its first
 * step's schedule, or its message when due at once; the names of its tags
 * (a batch read) for its webhook events, and their sink.
 */
export const contactChangesBindings = [
  table({
    stores: [
      'organizations',
      'sequences',
      'enrolments',
      'contacts',
      'activity',
      'tags',
    ],
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:BatchWriteItem',
    ],
  }),
  scheduler(STEPS_QUEUE),
  queue(STEPS_QUEUE),
  webhookEvents,
] as const;

/** The deps of the `contacts` consumer. */
export type ContactChangesDeps = DepsOf<typeof contactChangesBindings>;

/** The tag index's part of a record: entries for tags gained and lost. */
export const indexTagsOf = async (
  deps: Pick<ContactChangesDeps, 'contacts'>,
  { before, after }: StreamChange<ContactImage>,
): Promise<void> => {
  const orgId = (after ?? before)?.orgId;
  if (!orgId) return;
  await deps.contacts.indexTags(orgId, before?.contact, after?.contact);
};

/** The audience facts' part of a record: its events, and enrolments. */
export const publishFactsOf = async (
  deps: ContactChangesDeps,
  { before, after }: StreamChange<ContactImage>,
): Promise<void> => {
  if (!after) return;
  const events = await publishContactFacts(deps, {
    orgId: after.orgId,
    ...(before ? { before: before.contact } : {}),
    after: after.contact,
    origin: after.origin,
  });
  if (events.length > 0) await enrolFromEvents(deps, events);
};

/** The activity's part of a record: the events the write implies. */
export const recordActivityOf = async (
  deps: Pick<ContactChangesDeps, 'activity'>,
  { before, after }: StreamChange<ContactImage>,
): Promise<void> => {
  if (!after) {
    // A contact removed (erased): its activity goes, here after every
    // earlier record of the contact, so an event one of them writes late
    // is deleted too.
    if (before) await deps.activity.forget(before.orgId, before.contact.id);
    return;
  }
  await recordContactActivity(deps, {
    orgId: after.orgId,
    ...(before ? { before: before.contact } : {}),
    after: after.contact,
    origin: after.origin,
  });
};

/**
 * The webhook events' part of a record (a removal's too), published with
 * those of the batch's other records: one publish per batch.
 */
export const emitWebhookEventsOf = async (
  deps: Pick<ContactChangesDeps, 'webhookEvents' | 'tags'>,
  { before, after, writtenAt, batch }: StreamChange<ContactImage>,
): Promise<void> => {
  const orgId = (after ?? before)?.orgId;
  if (!orgId) return;
  const events = await contactWebhookEvents(deps, {
    orgId,
    ...(before ? { before: before.contact } : {}),
    ...(after ? { after: after.contact, origin: after.origin } : {}),
    ...(writtenAt ? { writtenAt } : {}),
  });
  await emitInBatch(deps, events, batch);
};

/** The `contacts` stream consumer. */
export const contactChangesConsumer = streamConsumer<
  ContactChangesDeps,
  ContactImage
>({
  name: 'contacts',
  entry: 'functions/contact-changes/lambda.ts',
  stream: {
    // An import of 500 lines writes 500 contacts: five invocations, each
    // one BatchWriteItem per 25 index entries, no facts, and one write of
    // activity per contact. A lone add waits up to a second for company.
    batchSize: 100,
    batchWindowSeconds: 1,
    retryAttempts: 10,
    bisectOnError: true,
  },
  // A contact removed (erased) takes its index entries with it: handled
  // here, after every earlier record of the contact, so an entry an older
  // record puts late is still deleted. A removal publishes no fact.
  filter: {
    eventNames: ['INSERT', 'MODIFY', 'REMOVE'],
    entityTypes: ['Contact'],
  },
  image: contactImageOf,
  handle: async (deps, change) => {
    const outcomes = await Promise.allSettled([
      indexTagsOf(deps, change),
      publishFactsOf(deps, change),
      recordActivityOf(deps, change),
      emitWebhookEventsOf(deps, change),
    ]);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') throw outcome.reason;
    }
  },
});
