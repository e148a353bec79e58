/**
 * Driven adapter: contacts in their list's partition, keyed by normalized
 * email (the upsert key), with a small pointer item per contact id.
 *
 * Every save is a transaction: each contact write is conditional on the
 * version read (or on absence for a new contact), and the same transaction
 * moves the list's counters (total and per status) and the tags' carrier
 * counters by exactly what the changes imply. Counters therefore never drift,
 * whatever the interleaving.
 */
import {
  GetCommand,
  paginateQuery,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { Contact, ContactWriteOrigin } from '../../audience/model.ts';
import { CONTACT_STATUSES } from '../../audience/model.ts';
import type {
  ContactChange,
  ContactFilter,
  ContactRepository,
} from '../../audience/ports.ts';
import {
  entityType,
  ItemSchemaError,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keyParsers, keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { retryOnConflict } from '../../retry.ts';
import { statusCountAttribute } from './dynamo-list-repository.ts';
import {
  batchGet,
  type DynamoTable,
  failedConditions,
  isTransactionConflict,
  type TransactItem,
} from './dynamo-table.ts';

/** DynamoDB's limit of items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

const OPTIONAL_FIELDS = [
  'firstName',
  'lastName',
  'optinAt',
  'optinIp',
  'confirmedAt',
  'confirmedIp',
  'joinedAt',
  'unsubscribedAt',
  'confirmationNonce',
] as const;

/**
 * The attribute naming the origin of a contact's last write when it was a
 * bulk import (absent otherwise): every write puts the whole item, so any
 * later write by another path drops it. The change stream's consumer reads
 * it to publish nothing for an import.
 */
const WRITTEN_BY = 'writtenBy';

const toItem = (
  orgId: string,
  contact: Contact,
  origin: ContactWriteOrigin = 'change',
) => ({
  ...keys.contact(orgId, contact.listId, contact.email),
  ...entityType('Contact'),
  ...(origin === 'import' ? { [WRITTEN_BY]: origin } : {}),
  id: contact.id,
  listId: contact.listId,
  email: contact.email,
  status: contact.status,
  createdAt: contact.createdAt,
  updatedAt: contact.updatedAt,
  version: contact.version,
  // DynamoDB stores no empty set: leave the attribute out instead.
  ...(contact.tagIds.length ? { tagIds: new Set(contact.tagIds) } : {}),
  // Lower-cased haystack of the search filter.
  search: [contact.email, contact.firstName, contact.lastName]
    .filter(Boolean)
    .join(' ')
    .toLowerCase(),
  ...Object.fromEntries(
    OPTIONAL_FIELDS.flatMap((field) =>
      contact[field] === undefined ? [] : [[field, contact[field]]],
    ),
  ),
  ...(contact.consents?.length ? { consents: contact.consents } : {}),
});

const optionalText = v.optional(v.string());

/** The optional text attributes, each written only when set. */
const optionalFields = {
  firstName: optionalText,
  lastName: optionalText,
  optinAt: optionalText,
  optinIp: optionalText,
  confirmedAt: optionalText,
  confirmedIp: optionalText,
  joinedAt: optionalText,
  unsubscribedAt: optionalText,
  confirmationNonce: optionalText,
} satisfies Record<(typeof OPTIONAL_FIELDS)[number], typeof optionalText>;

const ContactItem = itemSchema('Contact', {
  id: v.string(),
  listId: v.string(),
  email: v.string(),
  status: v.picklist(CONTACT_STATUSES),
  // DynamoDB stores no empty set: no attribute means no tag.
  tagIds: v.optional(v.set(v.string()), () => new Set<string>()),
  createdAt: v.string(),
  updatedAt: v.string(),
  version: v.number(),
  ...optionalFields,
  consents: v.optional(
    v.array(
      v.object({
        pageId: v.string(),
        pageVersion: v.number(),
        consentText: v.string(),
        ip: optionalText,
        userAgent: optionalText,
        referrer: optionalText,
        signedUpAt: v.string(),
        confirmedAt: optionalText,
      }),
    ),
  ),
  [WRITTEN_BY]: v.optional(v.literal('import')),
});

/** Where a contact id points: its list and its email. */
const ContactPointerItem = itemSchema('ContactPointer', {
  listId: v.string(),
  email: v.string(),
});

/** A contact item parsed, with the origin of its last write. */
const readContact = (item: Record<string, unknown>) => {
  const { tagIds, writtenBy, consents, ...contact } = parseItem(
    ContactItem,
    item,
  );
  const origin: ContactWriteOrigin = writtenBy ?? 'change';
  return {
    contact: {
      ...contact,
      tagIds: [...tagIds].sort(),
      ...(consents ? { consents } : {}),
    },
    origin,
  };
};

/** A stored contact item as the domain sees it. */
export const contactFromItem = (item: Record<string, unknown>): Contact =>
  readContact(item).contact;

/** A contact item's image, as the table's change stream carries it. */
export interface ContactImage {
  orgId: string;
  contact: Contact;
  /** The path of the write that left this image. */
  origin: ContactWriteOrigin;
}

/**
 * Reads a whole contact item (with its keys): the contact, its
 * organization (from the key) and the origin of the write. Throws
 * `ItemSchemaError` for an item that is not a well-formed contact.
 */
export const contactImageOf = (item: Record<string, unknown>): ContactImage => {
  const { contact, origin } = readContact(item);
  const key = keyParsers.contact(item);
  if (!key) {
    throw new ItemSchemaError(
      'Contact',
      `${String(item.PK)} / ${String(item.SK)}`,
      ['PK'],
      'PK: not the key of a contact',
    );
  }
  return { orgId: key.orgId, contact, origin };
};

/**
 * How many transaction items a group of changes writes: each contact (and
 * the id pointer of a new one), one counter item per list, and one per tag
 * whose carrier count really moves. Tags a contact keeps write nothing, so
 * an unsubscribe of a contact with many tags stays small.
 */
const itemsNeeded = (changes: ContactChange[]) => {
  const lists = new Set(changes.map((c) => c.after.listId));
  const tagDeltas = new Map<string, number>();
  for (const { before, after } of changes) {
    for (const tagId of after.tagIds) {
      if (!before?.tagIds.includes(tagId)) {
        tagDeltas.set(tagId, (tagDeltas.get(tagId) ?? 0) + 1);
      }
    }
    for (const tagId of before?.tagIds ?? []) {
      if (!after.tagIds.includes(tagId)) {
        tagDeltas.set(tagId, (tagDeltas.get(tagId) ?? 0) - 1);
      }
    }
  }
  const tags = [...tagDeltas.values()].filter((by) => by !== 0).length;
  const contacts = changes.reduce((n, c) => n + (c.before ? 1 : 2), 0);
  return contacts + lists.size + tags;
};

/** Contacts, their id pointers, and the counters they move. */
export class DynamoContactRepository implements ContactRepository {
  constructor(private readonly table: DynamoTable) {}

  async get(
    orgId: string,
    listId: string,
    email: string,
  ): Promise<Contact | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.contact(orgId, listId, email),
        ConsistentRead: true,
      }),
    );
    return Item ? contactFromItem(Item) : undefined;
  }

  async getMany(
    orgId: string,
    listId: string,
    emails: string[],
  ): Promise<Map<string, Contact>> {
    const items = await batchGet(
      this.table,
      [...new Set(emails)].map((email) => keys.contact(orgId, listId, email)),
    );
    return new Map(items.map(contactFromItem).map((c) => [c.email, c]));
  }

  async findById(
    orgId: string,
    contactId: string,
  ): Promise<Contact | undefined> {
    const { Item: pointer } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.contactById(orgId, contactId),
        ConsistentRead: true,
      }),
    );
    if (!pointer) return undefined;
    const { listId, email } = parseItem(ContactPointerItem, pointer);
    return this.get(orgId, listId, email);
  }

  async save(orgId: string, changes: ContactChange[]): Promise<void> {
    // The domain caps the tags of a contact so that one contact's change
    // always fits; more than one transaction here is a programming error.
    if (itemsNeeded(changes) > MAX_TRANSACTION_ITEMS) {
      throw new Error(
        `${changes.length} contact changes write ${itemsNeeded(changes)} items, more than one transaction holds`,
      );
    }
    await this.saveChunk(orgId, changes);
  }

  async saveMany(
    orgId: string,
    changes: ContactChange[],
  ): Promise<ContactChange[]> {
    // Greedy chunks that fit one transaction each.
    const chunks: ContactChange[][] = [[]];
    for (const change of changes) {
      const current = chunks.at(-1) ?? [];
      if (
        current.length &&
        itemsNeeded([...current, change]) > MAX_TRANSACTION_ITEMS
      ) {
        chunks.push([change]);
      } else {
        current.push(change);
      }
    }
    const conflicted: ContactChange[] = [];
    for (const chunk of chunks.filter((c) => c.length)) {
      try {
        await this.saveChunk(orgId, chunk);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        conflicted.push(...chunk);
      }
    }
    return conflicted;
  }

  async page(
    orgId: string,
    listId: string,
    filter: ContactFilter,
    { page, limit }: PageRequest,
    knownTotal?: number,
    after?: string,
  ): Promise<Page<Contact>> {
    // After a cursor's email the page starts at once; a page number needs
    // the items before it.
    const offset = after === undefined ? (page - 1) * limit : 0;
    if (knownTotal !== undefined && offset >= knownTotal) {
      return { items: [], total: knownTotal };
    }
    const query = keys.contactsOfList(orgId, listId);
    const conditions: string[] = [];
    const values: Record<string, unknown> = {};
    const names: Record<string, string> = {};
    if (filter.status) {
      conditions.push('#status = :status');
      names['#status'] = 'status';
      values[':status'] = filter.status;
    }
    if (filter.tagId) {
      conditions.push('contains(tagIds, :tagId)');
      values[':tagId'] = filter.tagId;
    }
    if (filter.search) {
      conditions.push('contains(#search, :search)');
      names['#search'] = 'search';
      values[':search'] = filter.search.toLowerCase();
    }

    // With a known total, stop at the page's end; otherwise count matches.
    const matches: Record<string, unknown>[] = [];
    // Without a filter, a page reads exactly the items up to its end (the
    // offset's, then its own); a filter reads on, a page of 1 MB at a time.
    const pages = paginateQuery(
      {
        client: this.table.client,
        ...(conditions.length === 0 && knownTotal !== undefined
          ? { pageSize: offset + limit }
          : {}),
      },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ...(conditions.length
          ? { FilterExpression: conditions.join(' AND ') }
          : {}),
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
          ...values,
        },
        ...(Object.keys(names).length
          ? { ExpressionAttributeNames: names }
          : {}),
        // A counted listing reads from the start (the total counts every
        // match) and slices after the cursor; a known total reads from it.
        ...(after !== undefined && knownTotal !== undefined
          ? {
              ExclusiveStartKey: {
                ...keys.contact(orgId, listId, after),
              },
            }
          : {}),
      },
    );
    let before = 0;
    for await (const result of pages) {
      for (const item of result.Items ?? []) {
        // A counted listing with a cursor: the matches up to it are counted.
        if (
          after !== undefined &&
          knownTotal === undefined &&
          String(item.email) <= after
        ) {
          before++;
          continue;
        }
        matches.push(item);
      }
      if (knownTotal !== undefined && matches.length >= offset + limit) break;
    }
    return {
      items: matches.slice(offset, offset + limit).map(contactFromItem),
      total: knownTotal ?? before + matches.length,
    };
  }

  private async saveChunk(orgId: string, changes: ContactChange[]) {
    const items = this.transactItems(orgId, changes);
    const contactItems = changes.reduce((n, c) => n + (c.before ? 1 : 2), 0);
    await retryOnConflict(async (retryable) => {
      try {
        await this.table.client.send(
          new TransactWriteCommand({ TransactItems: items }),
        );
      } catch (error) {
        const failed = failedConditions(error);
        if (!failed && !isTransactionConflict(error)) throw error;
        const targetGone = failed?.some((index) => index >= contactItems);
        const conflict = new ConflictError(
          'contact.changed',
          'A contact changed while it was being saved; retry',
          { cause: error },
        );
        // Another transaction held an item: the same write may pass later.
        if (isTransactionConflict(error) && !targetGone) retryable(conflict);
        if (targetGone) {
          throw new NotFoundError(
            'audience.targetGone',
            'The list or a tag of this change no longer exists',
            { cause: error },
          );
        }
        throw conflict;
      }
    });
  }

  private transactItems(
    orgId: string,
    changes: ContactChange[],
  ): TransactItem[] {
    const { tableName: TableName } = this.table;
    const contactWrites: TransactItem[] = [];
    const listDeltas = new Map<string, Map<string, number>>();
    const tagDeltas = new Map<string, number>();
    const bump = (map: Map<string, number>, key: string, by: number) =>
      map.set(key, (map.get(key) ?? 0) + by);

    for (const { before, after, origin } of changes) {
      contactWrites.push({
        Put: {
          TableName,
          // The stored version always moves on by one from the one read.
          Item: toItem(
            orgId,
            { ...after, version: (before?.version ?? 0) + 1 },
            origin,
          ),
          ...(before
            ? {
                ConditionExpression: 'version = :version',
                ExpressionAttributeValues: { ':version': before.version },
              }
            : { ConditionExpression: 'attribute_not_exists(PK)' }),
        },
      });
      if (!before) {
        contactWrites.push({
          Put: {
            TableName,
            Item: {
              ...keys.contactById(orgId, after.id),
              ...entityType('ContactPointer'),
              listId: after.listId,
              email: after.email,
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        });
      }
      const list = listDeltas.get(after.listId) ?? new Map<string, number>();
      listDeltas.set(after.listId, list);
      if (!before) bump(list, 'contactCount', 1);
      if (before?.status !== after.status) {
        if (before) bump(list, statusCountAttribute(before.status), -1);
        bump(list, statusCountAttribute(after.status), 1);
      }
      for (const tagId of after.tagIds) {
        if (!before?.tagIds.includes(tagId)) bump(tagDeltas, tagId, 1);
      }
      for (const tagId of before?.tagIds ?? []) {
        if (!after.tagIds.includes(tagId)) bump(tagDeltas, tagId, -1);
      }
    }

    const counterWrites: TransactItem[] = [];
    for (const [listId, deltas] of listDeltas) {
      const moved = [...deltas].filter(([, by]) => by !== 0);
      counterWrites.push(
        moved.length
          ? {
              Update: {
                TableName,
                Key: keys.list(orgId, listId),
                UpdateExpression: `ADD ${moved.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeNames: Object.fromEntries(
                  moved.map(([name], i) => [`#c${i}`, name]),
                ),
                ExpressionAttributeValues: Object.fromEntries(
                  moved.map(([, by], i) => [`:c${i}`, by]),
                ),
              },
            }
          : {
              ConditionCheck: {
                TableName,
                Key: keys.list(orgId, listId),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
      );
    }
    for (const [tagId, by] of tagDeltas) {
      if (by === 0) continue;
      counterWrites.push({
        Update: {
          TableName,
          Key: keys.tag(orgId, tagId),
          UpdateExpression: 'ADD contactCount :by',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':by': by },
        },
      });
    }
    return [...contactWrites, ...counterWrites];
  }
}
