/**
 * The `tagIndex` stream consumer: keeps the tag index — one small item per
 * list × tag × contact — in line with the committed contacts, so that
 * `GET /contacts?tagId=` reads the tag's contacts and nothing else. Every
 * write path (a single add, a tag call, an import) is covered by reading
 * the change stream instead of each writer, like a secondary index the
 * table maintains itself; the per-list counts beside it move in the
 * writers' own transactions, so totals are exact at once.
 */
import {
  type ContactImage,
  contactImageOf,
} from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import { type DepsOf, table } from '../../shared/bindings.ts';
import { streamConsumer } from '../../shared/streams/consumer.ts';

/** What the `tagIndex` consumer may use: puts and deletes of entries. */
export const tagIndexBindings = [
  table({ stores: ['contacts'], actions: ['dynamodb:BatchWriteItem'] }),
] as const;

/** The deps of the `tagIndex` consumer. */
export type TagIndexDeps = DepsOf<typeof tagIndexBindings>;

/** The `tagIndex` stream consumer. */
export const tagIndexConsumer = streamConsumer<TagIndexDeps, ContactImage>({
  name: 'tagIndex',
  entry: 'functions/tag-index/lambda.ts',
  stream: {
    // An import of 500 lines: one invocation. A lone tag call waits up to
    // a second for company.
    batchSize: 500,
    batchWindowSeconds: 1,
    retryAttempts: 10,
    bisectOnError: true,
  },
  // Contacts are never deleted: a tag comes and goes by a change.
  filter: { eventNames: ['INSERT', 'MODIFY'], entityTypes: ['Contact'] },
  image: contactImageOf,
  handle: async (deps, { before, after }) => {
    if (!after) return;
    await deps.contacts.indexTags(after.orgId, before?.contact, after.contact);
  },
});
