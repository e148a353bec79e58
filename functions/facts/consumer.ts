/**
 * The `facts` stream consumer: every committed write of a contact, read
 * from the table's change stream, becomes the audience events it implies
 * (a first join, each new tag), published through `AudienceEvents`. The
 * writers publish nothing themselves, so a crash after a write loses none.
 */
import {
  type ContactImage,
  contactImageOf,
} from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import { publishContactFacts } from '../../shared/audience/facts.ts';
import { type DepsOf, table } from '../../shared/bindings.ts';
import { streamConsumer } from '../../shared/streams/consumer.ts';

/**
 * What the `facts` consumer may use: the table's stores, for the
 * `AudienceEvents` built with them (the logging one reads nothing; give
 * the table actions the implementation needs when it changes).
 */
export const factsBindings = [table()] as const;

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
    await publishContactFacts(deps, {
      orgId: after.orgId,
      ...(before ? { before: before.contact } : {}),
      after: after.contact,
      origin: after.origin,
    });
  },
});
