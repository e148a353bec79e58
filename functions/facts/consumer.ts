/**
 * The `facts` stream consumer: every committed write of a contact, read
 * from the table's change stream, becomes the audience events it implies
 * (a first join, each new tag), published through `AudienceEvents`, and
 * enrols the contact in the sequences they trigger. The writers publish
 * nothing themselves, so a crash after a write loses no enrolment.
 */
import {
  type ContactImage,
  contactImageOf,
} from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import { publishContactFacts } from '../../shared/audience/facts.ts';
import { type DepsOf, queue, scheduler, table } from '../../shared/bindings.ts';
import { enrolFromEvents } from '../../shared/sequences/journeys.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import { streamConsumer } from '../../shared/streams/consumer.ts';

/**
 * What the `facts` consumer may use: the sequences a fact triggers, the
 * contact, the published version (reads); the journey (a conditional
 * put); its first step's schedule, or its message when due at once.
 */
export const factsBindings = [
  table({
    stores: ['organizations', 'sequences', 'enrolments', 'contacts'],
    actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem'],
  }),
  scheduler(STEPS_QUEUE),
  queue(STEPS_QUEUE),
] as const;

/** The deps of the `facts` consumer. */
export type FactsDeps = DepsOf<typeof factsBindings>;

/** The `facts` stream consumer. */
export const factsConsumer = streamConsumer<FactsDeps, ContactImage>({
  name: 'facts',
  entry: 'functions/facts/lambda.ts',
  stream: {
    // An import of 500 lines writes 500 contacts: a few invocations, each
    // publishing nothing. A lone add waits up to a second for company.
    batchSize: 100,
    batchWindowSeconds: 1,
    retryAttempts: 10,
    bisectOnError: true,
  },
  filter: { eventNames: ['INSERT', 'MODIFY'], entityTypes: ['Contact'] },
  image: contactImageOf,
  handle: async (deps, { before, after }) => {
    if (!after) return;
    const events = await publishContactFacts(deps, {
      orgId: after.orgId,
      ...(before ? { before: before.contact } : {}),
      after: after.contact,
      origin: after.origin,
    });
    if (events.length > 0) await enrolFromEvents(deps, events);
  },
});
