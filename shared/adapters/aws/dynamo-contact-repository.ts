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
import * as v from 'valibot';
import type { Contact, ContactWriteOrigin } from '../../audience/model.ts';
import {
  CONTACT_SCAN_BUDGET,
  CONTACT_STATUSES,
  CONTACT_WRITE_PATHS,
  type ContactStatus,
} from '../../audience/model.ts';
import type {
  ContactChange,
  ContactFilter,
  ContactPage,
  ContactPosition,
  ContactRepository,
} from '../../audience/ports.ts';
import { type Update, where } from '../../db/expressions.ts';
import {
  entityType,
  type ItemOf,
  ItemSchemaError,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { type Key, keyParsers, keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { PageRequest } from '../../ports.ts';
import { type Entity, entity, type WriteOptions } from './dynamo-entity.ts';
import { ListItem, statusCountAttribute } from './dynamo-list-repository.ts';
import {
  batchGet,
  batchWrite,
  type DynamoTable,
  failedConditions,
  queryPages,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';
import {
  TagItem,
  tagListCountAttribute,
  tagSubscribedCountAttribute,
} from './dynamo-tag-repository.ts';

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
 * The attribute naming the path of a contact's last write (`import`,
 * `api`, `form`…; absent on items written before it was recorded): every
 * write puts the whole item, so each write says its own. The change
 * stream's consumer reads it to publish nothing for an import, and to say
 * in the contact's activity how a change came.
 */
const WRITTEN_BY = 'writtenBy';

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

/** A contact's item (its search haystack is housekeeping, never read). */
/**
 * A consent record as a contact item keeps it (and its activity's
 * `signed_up` and `confirmed` events copy it).
 */
export const ConsentEntry = v.object({
  pageId: v.string(),
  pageVersion: v.number(),
  consentText: v.string(),
  ip: optionalText,
  userAgent: optionalText,
  referrer: optionalText,
  askedFields: v.optional(
    v.array(
      v.object({ key: v.string(), label: v.string(), required: v.boolean() }),
    ),
  ),
  signedUpAt: v.string(),
  confirmedAt: optionalText,
});

export const ContactItem = itemSchema('Contact', {
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
  consents: v.optional(v.array(ConsentEntry)),
  signupNames: v.optional(v.array(v.picklist(['firstName', 'lastName']))),
  fields: v.optional(
    v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
  ),
  [WRITTEN_BY]: v.optional(v.picklist(CONTACT_WRITE_PATHS)),
});

/** A contact's attributes as every save writes them. */
const contactAttributes = (
  contact: Contact,
  origin: ContactWriteOrigin = 'change',
): v.InferInput<(typeof ContactItem)['schema']> => ({
  ...(origin === 'change' ? {} : { [WRITTEN_BY]: origin }),
  id: contact.id,
  listId: contact.listId,
  email: contact.email,
  status: contact.status,
  createdAt: contact.createdAt,
  updatedAt: contact.updatedAt,
  version: contact.version,
  // DynamoDB stores no empty set: leave the attribute out instead.
  ...(contact.tagIds.length ? { tagIds: new Set(contact.tagIds) } : {}),
  ...Object.fromEntries(
    OPTIONAL_FIELDS.flatMap((field) =>
      contact[field] === undefined ? [] : [[field, contact[field]]],
    ),
  ),
  ...(contact.consents?.length ? { consents: contact.consents } : {}),
  ...(contact.signupNames?.length ? { signupNames: contact.signupNames } : {}),
  ...(contact.fields && Object.keys(contact.fields).length
    ? { fields: contact.fields }
    : {}),
});

/** The search filter's haystack: housekeeping, never read back. */
const searchOf = (contact: Contact) => ({ search: searchHaystack(contact) });

/**
 * A contact's item as every save writes it (exported for the benchmarks'
 * seeder, which writes big lists as this adapter would).
 */
export const toItem = (
  orgId: string,
  contact: Contact,
  origin: ContactWriteOrigin = 'change',
) => ({
  ...keys.contact(orgId, contact.listId, contact.email),
  ...entityType('Contact'),
  ...contactAttributes(contact, origin),
  ...searchOf(contact),
});

/** Where a contact id points: its list and its email. */
export const ContactPointerItem = itemSchema('ContactPointer', {
  listId: v.string(),
  email: v.string(),
});

/** A parsed contact item: the contact, and the origin of its last write. */
const readStored = ({
  tagIds,
  writtenBy,
  consents,
  signupNames,
  fields,
  ...contact
}: ItemOf<typeof ContactItem>) => {
  const origin: ContactWriteOrigin = writtenBy ?? 'change';
  return {
    contact: {
      ...contact,
      tagIds: [...tagIds].sort(),
      ...(consents ? { consents } : {}),
      ...(signupNames?.length ? { signupNames } : {}),
      ...(fields && Object.keys(fields).length ? { fields } : {}),
    },
    origin,
  };
};

/** A parsed contact item as the domain sees it. */
export const contactOf = (stored: ItemOf<typeof ContactItem>): Contact =>
  readStored(stored).contact;

/** A stored contact item as the domain sees it. */
export const contactFromItem = (item: Record<string, unknown>): Contact =>
  contactOf(parseItem(ContactItem, item));

/**
 * A contact's entry in the tag index of its list (see `indexTags`); its
 * sort key ends with the same email.
 */
export const TaggedContactItem = itemSchema('TaggedContact', {
  email: v.string(),
});

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
  const { contact, origin } = readStored(parseItem(ContactItem, item));
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

/** How one tag's counters move in one list. */
interface TagDelta {
  /** Its carriers (any status). */
  carriers: number;
  /** Its subscribed carriers (what a tagged send reaches). */
  subscribed: number;
}

/**
 * How the counters of each tag move, per list: a tag gained adds one
 * carrier in the contact's list, a tag lost takes one off; a subscribed
 * carrier counts once more among the tag's subscribed in that list, so a
 * change of status moves the subscribed counters of every tag the contact
 * carries. Tags whose counters all stay put are left out.
 */
const movedTagCounters = (
  changes: ContactChange[],
): Map<string, Map<string, TagDelta>> => {
  const moved = new Map<string, Map<string, TagDelta>>();
  const bump = (
    tagId: string,
    listId: string,
    field: keyof TagDelta,
    by: number,
  ) => {
    const perList = moved.get(tagId) ?? new Map<string, TagDelta>();
    const delta = perList.get(listId) ?? { carriers: 0, subscribed: 0 };
    delta[field] += by;
    perList.set(listId, delta);
    moved.set(tagId, perList);
  };
  for (const { before, after } of changes) {
    for (const tagId of after.tagIds) {
      if (!before?.tagIds.includes(tagId)) {
        bump(tagId, after.listId, 'carriers', 1);
      }
      if (after.status === 'subscribed') {
        bump(tagId, after.listId, 'subscribed', 1);
      }
    }
    for (const tagId of before?.tagIds ?? []) {
      if (!after.tagIds.includes(tagId)) {
        bump(tagId, after.listId, 'carriers', -1);
      }
      if (before?.status === 'subscribed') {
        bump(tagId, after.listId, 'subscribed', -1);
      }
    }
  }
  for (const [tagId, perList] of moved) {
    for (const [listId, { carriers, subscribed }] of perList) {
      if (carriers === 0 && subscribed === 0) perList.delete(listId);
    }
    if (perList.size === 0) moved.delete(tagId);
  }
  return moved;
};

/**
 * A change as the repository writes it: a removal (an erasure) deletes
 * `before`, and `after` is then the counters' view of its going — no tag,
 * not subscribed — so every counter it held moves off by one.
 */
interface StoredChange extends ContactChange {
  removed?: true;
}

/** The change that removes a contact, as its counters see it. */
const removalOf = (contact: Contact): StoredChange => ({
  before: contact,
  after: { ...contact, tagIds: [], status: 'unsubscribed' },
  removed: true,
});

/** Whether a change moves a contact into or out of `subscribed`. */
const movesSubscribed = ({ before, after }: ContactChange): boolean =>
  (before?.status === 'subscribed') !== (after.status === 'subscribed');

/** What an address declined, as a contact write read it. */
interface Declined {
  /** The stored version (absent: the address never declined anything). */
  version?: number;
  topicIds: string[];
}

/**
 * How each topic's per-list counter of subscribed decliners moves: a
 * contact of an address that declined the topic entering `subscribed` adds
 * one in its list, leaving it takes one off.
 */
const movedTopicCounters = (
  changes: ContactChange[],
  declined: ReadonlyMap<string, Declined>,
): Map<string, Map<string, number>> => {
  const moved = new Map<string, Map<string, number>>();
  for (const change of changes.filter(movesSubscribed)) {
    const by = change.after.status === 'subscribed' ? 1 : -1;
    for (const topicId of declined.get(change.after.email)?.topicIds ?? []) {
      const perList = moved.get(topicId) ?? new Map<string, number>();
      const listId = change.after.listId;
      perList.set(listId, (perList.get(listId) ?? 0) + by);
      moved.set(topicId, perList);
    }
  }
  for (const [topicId, perList] of moved) {
    for (const [listId, by] of perList) if (by === 0) perList.delete(listId);
    if (perList.size === 0) moved.delete(topicId);
  }
  return moved;
};

/** The addresses whose declined topics a group of changes checks. */
const checkedAddresses = (changes: ContactChange[]): string[] => [
  ...new Set(changes.filter(movesSubscribed).map((c) => c.after.email)),
];

/**
 * How many transaction items a group of changes writes: each contact (and
 * the id pointer of a new one), a check of the declined topics of each
 * address entering or leaving `subscribed`, one counter item per list, one
 * per tag whose counters really move and one per topic whose per-list
 * decliners move. Tags a contact keeps write nothing unless its status
 * moves in or out of `subscribed`, so a PATCH of names stays small.
 */
const itemsNeeded = (
  changes: ContactChange[],
  declined: ReadonlyMap<string, Declined> = new Map(),
) => {
  const lists = new Set(changes.map((c) => c.after.listId));
  const tags = movedTagCounters(changes).size;
  const topics = movedTopicCounters(changes, declined).size;
  const contacts = changes.reduce(
    (n, c: StoredChange) => n + (c.before && !c.removed ? 1 : 2),
    0,
  );
  return (
    contacts + checkedAddresses(changes).length + lists.size + tags + topics
  );
};

/** The declined topics of an address item. */
export const DeclinedTopicsItem = itemSchema('DeclinedTopics', {
  version: v.number(),
  topicIds: v.optional(v.set(v.string()), () => new Set<string>()),
});

/**
 * What these addresses declined (strongly consistent): one BatchGetItem
 * per 100 addresses, a few in flight. Exported for the topics' adapter.
 */
export const declinedTopicsOf = async (
  table: DynamoTable,
  orgId: string,
  emails: string[],
): Promise<Map<string, Declined>> => {
  const found = new Map<string, Declined>(
    emails.map((email) => [email, { topicIds: [] }]),
  );
  if (emails.length === 0) return found;
  const items = await batchGet(
    table,
    emails.map((email) => keys.declinedTopics(orgId, email)),
  );
  for (const item of items) {
    const { version, topicIds } = parseItem(DeclinedTopicsItem, item);
    found.set(String(item.SK).slice('EMAIL#'.length), {
      version,
      topicIds: [...topicIds].sort(),
    });
  }
  return found;
};

/**
 * The transaction item that checks an address's declined topics are still
 * those read: an opt-out changes them (and the version) in its own
 * transaction, so one of the two fails and reads again.
 */
export const declinedTopicsCheck = (
  table: DynamoTable,
  orgId: string,
  email: string,
  declined: Declined | undefined,
): TransactItem => {
  const version = declined?.version;
  return entity(table, DeclinedTopicsItem).checkTx(
    keys.declinedTopics(orgId, email),
    (w) => (version === undefined ? w.missing() : w.eq('version', version)),
  );
};

/** The attribute of a topic's audience item counting one list's decliners. */
export const topicDeclinedCountAttribute = (listId: string): string =>
  `declinedInList#${listId}`;

/**
 * A topic's audience item: a counter of subscribed decliners per list, each
 * named by its list (`topicDeclinedCountAttribute`), so none is named here;
 * a reader reads one with a schema of that counter.
 */
const TopicAudienceItem = itemSchema('TopicAudience', {});

/** The update moving a topic's per-list counters of subscribed decliners. */
const topicCountersMove = (perList: ReadonlyMap<string, number>) => ({
  add: Object.fromEntries(
    [...perList].map(([listId, by]) => [
      topicDeclinedCountAttribute(listId),
      by,
    ]),
  ),
});

/** Moves a topic's per-list counters of subscribed decliners. */
export const moveTopicCounters = (
  table: DynamoTable,
  orgId: string,
  topicId: string,
  perList: ReadonlyMap<string, number>,
): TransactItem =>
  entity(table, TopicAudienceItem).updateTx(
    keys.topicAudience(orgId, topicId),
    topicCountersMove(perList),
  );

/**
 * One write of a save: its transaction item and, for a counter's move, the
 * same move alone (sent after the transaction when that is full).
 */
interface Write {
  tx: TransactItem;
  alone?: () => Promise<unknown>;
}

/** A counter's move, in the transaction or alone. */
const counterMove = <I, O>(
  counters: Entity<I, O>,
  key: Key,
  update: Update<I>,
  options: WriteOptions<I> = {},
): Write => ({
  tx: counters.updateTx(key, update, options),
  alone: () => counters.update(key, update, options),
});

/** The lower-cased text a search looks in: email, first and last name. */
const searchHaystack = (contact: Contact): string =>
  [contact.email, contact.firstName, contact.lastName]
    .filter(Boolean)
    .join(' ')
    .toLowerCase();

/** Whether a contact passes a listing's filters (read in memory). */
const matchesFilter = (contact: Contact, filter: ContactFilter): boolean =>
  (!filter.matches || filter.matches(contact)) &&
  (!filter.status || contact.status === filter.status) &&
  (!filter.tagId || contact.tagIds.includes(filter.tagId)) &&
  (!filter.search ||
    searchHaystack(contact).includes(filter.search.toLowerCase()));

const byEmail = (a: Contact, b: Contact) =>
  a.email < b.email ? -1 : a.email > b.email ? 1 : 0;

/** The email of a contact's sort key (`CONTACT#<email>`). */
const emailOfContactKey = (sk: unknown): string =>
  String(sk).slice('CONTACT#'.length);

/** The filter of a Query of a list's contacts: the status, the search. */
const listFilter = (filter: ContactFilter) => {
  const conditions = [
    ...(filter.status ? [where.eq('status', filter.status)] : []),
    // The haystack is stored beside the contact's attributes.
    ...(filter.search
      ? [where.contains('search', filter.search.toLowerCase())]
      : []),
  ];
  return conditions.length ? { filter: where.and(...conditions) } : {};
};

/** Where a Query of a list's contacts reads on after a position. */
const listFrom = (
  orgId: string,
  listId: string,
  position: ContactPosition | undefined,
) =>
  position ? { startKey: keys.contact(orgId, listId, position.after) } : {};

/** Where a Query of a tag's index entries reads on after a position. */
const indexFrom = (
  orgId: string,
  listId: string,
  tagId: string,
  position: ContactPosition | undefined,
) =>
  position
    ? { startKey: keys.taggedContact(orgId, listId, tagId, position.after) }
    : {};

/** A save that lost a race: the caller reads the contacts again. */
const contactChanged = (cause: unknown) =>
  new ConflictError(
    'contact.changed',
    'A contact changed while it was being saved; retry',
    { cause },
  );

/** Only an item that exists: a counter of a list or a tag still there. */
const existing = { if: where.exists() };

/** Contacts, their id pointers, and the counters they move. */
export class DynamoContactRepository implements ContactRepository {
  private readonly contacts;
  private readonly pointers;
  private readonly index;
  private readonly lists;
  private readonly tags;
  private readonly topicAudiences;

  constructor(
    private readonly table: DynamoTable,
    /** Most items a counted listing reads in a call (tests lower it). */
    private readonly scanBudget = CONTACT_SCAN_BUDGET,
  ) {
    this.contacts = entity(table, ContactItem);
    this.pointers = entity(table, ContactPointerItem);
    this.index = entity(table, TaggedContactItem);
    this.lists = entity(table, ListItem);
    this.tags = entity(table, TagItem);
    this.topicAudiences = entity(table, TopicAudienceItem);
  }

  async get(
    orgId: string,
    listId: string,
    email: string,
  ): Promise<Contact | undefined> {
    const found = await this.contacts.get(keys.contact(orgId, listId, email), {
      consistent: true,
    });
    return found && contactOf(found);
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
    const pointer = await this.pointers.get(
      keys.contactById(orgId, contactId),
      { consistent: true },
    );
    return pointer && this.get(orgId, pointer.listId, pointer.email);
  }

  async exists(orgId: string, contactId: string): Promise<boolean> {
    const pointer = await this.pointers.get(
      keys.contactById(orgId, contactId),
      { consistent: true },
    );
    return pointer !== undefined;
  }

  async save(orgId: string, changes: ContactChange[]): Promise<void> {
    const declined = await declinedTopicsOf(
      this.table,
      orgId,
      checkedAddresses(changes),
    );
    // The domain caps the tags of a contact so that one contact's change
    // fits; past it only tag counters may overflow (they follow the
    // transaction): more is a programming error.
    const needed =
      itemsNeeded(changes, declined) - movedTagCounters(changes).size;
    if (needed > MAX_TRANSACTION_ITEMS) {
      throw new Error(
        `${changes.length} contact changes write ${needed} items, more than one transaction holds`,
      );
    }
    await this.saveChunk(orgId, changes, declined);
  }

  async remove(orgId: string, contact: Contact): Promise<void> {
    const change = removalOf(contact);
    const declined = await declinedTopicsOf(
      this.table,
      orgId,
      checkedAddresses([change]),
    );
    await this.saveChunk(orgId, [change], declined);
  }

  async ofAddress(orgId: string, email: string): Promise<Contact[]> {
    const listIds: string[] = [];
    const lists = keys.listsOfOrganization(orgId);
    for await (const page of queryPages(this.table, lists, {
      consistent: true,
      project: [],
    })) {
      listIds.push(
        ...page.map((item) => String(item.SK).slice(lists.skPrefix.length)),
      );
    }
    const items = await batchGet(
      this.table,
      listIds.map((listId) => keys.contact(orgId, listId, email)),
      { consistent: true },
    );
    return items
      .map(contactFromItem)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async saveMany(
    orgId: string,
    changes: ContactChange[],
  ): Promise<ContactChange[]> {
    const declined = await declinedTopicsOf(
      this.table,
      orgId,
      checkedAddresses(changes),
    );
    // Greedy chunks that fit one transaction each.
    const chunks: ContactChange[][] = [[]];
    for (const change of changes) {
      const current = chunks.at(-1) ?? [];
      if (
        current.length &&
        itemsNeeded([...current, change], declined) > MAX_TRANSACTION_ITEMS
      ) {
        chunks.push([change]);
      } else {
        current.push(change);
      }
    }
    const conflicted: ContactChange[] = [];
    for (const chunk of chunks.filter((c) => c.length)) {
      try {
        await this.saveChunk(orgId, chunk, declined);
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
    position?: ContactPosition,
  ): Promise<ContactPage> {
    // After a cursor the page starts at once; a page number needs the
    // matches before it.
    const offset = position === undefined ? (page - 1) * limit : 0;
    if (knownTotal !== undefined && !filter.matches) {
      if (offset >= knownTotal) {
        return { items: [], total: knownTotal, exact: true };
      }
      const items = filter.tagId
        ? await this.tagged(
            orgId,
            listId,
            filter.tagId,
            offset,
            limit,
            position,
            filter.status,
          )
        : await this.listed(orgId, listId, filter, offset, limit, position);
      return { items, total: knownTotal, exact: true };
    }
    return this.counted(orgId, listId, filter, offset, limit, position);
  }

  async indexTags(
    orgId: string,
    before: Contact | undefined,
    after: Contact | undefined,
  ): Promise<void> {
    const contact = after ?? before;
    if (!contact) return;
    const entry = (tagId: string) =>
      keys.taggedContact(orgId, contact.listId, tagId, contact.email);
    const kept = after?.tagIds ?? [];
    await batchWrite(this.table, [
      ...kept
        .filter((tagId) => !before?.tagIds.includes(tagId))
        .map((tagId) =>
          this.index.putRequest(entry(tagId), { email: contact.email }),
        ),
      ...(before?.tagIds ?? [])
        .filter((tagId) => !kept.includes(tagId))
        .map((tagId) => ({ DeleteRequest: { Key: entry(tagId) } })),
    ]);
  }

  /**
   * A page of the list's partition with a known total: without a filter it
   * reads exactly the items up to the page's end; a status filter reads on
   * until the page is full.
   */
  private async listed(
    orgId: string,
    listId: string,
    filter: ContactFilter,
    offset: number,
    limit: number,
    position: ContactPosition | undefined,
  ): Promise<Contact[]> {
    const matches: ItemOf<typeof ContactItem>[] = [];
    const pages = this.contacts.pages(keys.contactsOfList(orgId, listId), {
      ...listFilter(filter),
      ...(filter.status ? {} : { pageSize: offset + limit }),
      ...listFrom(orgId, listId, position),
    });
    for await (const found of pages) {
      matches.push(...found);
      if (matches.length >= offset + limit) break;
    }
    return matches.slice(offset, offset + limit).map(contactOf);
  }

  /**
   * A page of a tag's contacts through the tag index: the entries up to the
   * page's end, then the contacts themselves. An entry whose contact no
   * longer carries the tag (the index follows the stream) is left out.
   * With a status (`subscribed`, whose total a counter keeps), it reads on
   * in rounds until the page is full of carriers of that status.
   */
  private async tagged(
    orgId: string,
    listId: string,
    tagId: string,
    offset: number,
    limit: number,
    position: ContactPosition | undefined,
    status?: ContactStatus,
  ): Promise<Contact[]> {
    if (!status) {
      return this.taggedPage(orgId, listId, tagId, offset, limit, position);
    }
    const matches: Contact[] = [];
    let after = position;
    let round = 0;
    // Each round reads the entries the page still needs (twice as many as
    // the round before, up to 1,000), then their contacts; a carrier of
    // another status (or one whose entry outlived its tag) needs more.
    for (;;) {
      round = Math.min(
        1000,
        Math.max(offset + limit - matches.length, 2 * round),
      );
      const found = await this.index.page(
        keys.taggedContactsOfList(orgId, listId, tagId),
        { limit: round, ...indexFrom(orgId, listId, tagId, after) },
      );
      const emails = found.items.map((entry) => entry.email);
      const contacts = await this.getMany(orgId, listId, emails);
      matches.push(
        ...[...contacts.values()]
          .filter(
            (contact) =>
              contact.tagIds.includes(tagId) &&
              (!status || contact.status === status),
          )
          .sort(byEmail),
      );
      const last = emails.at(-1);
      if (
        matches.length >= offset + limit ||
        !found.lastKey ||
        last === undefined
      ) {
        break;
      }
      after = { after: last, before: 0 };
    }
    return matches.slice(offset, offset + limit);
  }

  /**
   * A page of a tag's carriers (any status): the entries up to the page's
   * end, then the page's contacts alone.
   */
  private async taggedPage(
    orgId: string,
    listId: string,
    tagId: string,
    offset: number,
    limit: number,
    position: ContactPosition | undefined,
  ): Promise<Contact[]> {
    const emails: string[] = [];
    const pages = this.index.pages(
      keys.taggedContactsOfList(orgId, listId, tagId),
      {
        pageSize: offset + limit,
        ...indexFrom(orgId, listId, tagId, position),
      },
    );
    for await (const found of pages) {
      emails.push(...found.map((entry) => entry.email));
      if (emails.length >= offset + limit) break;
    }
    const contacts = await this.getMany(
      orgId,
      listId,
      emails.slice(offset, offset + limit),
    );
    return [...contacts.values()]
      .filter((contact) => contact.tagIds.includes(tagId))
      .sort(byEmail);
  }

  /**
   * A counted listing (a search, or a tag with a status): reads the list's
   * partition (or the tag's index entries and their contacts) from the
   * position on, counting every match, and stops at the end or at
   * `CONTACT_SCAN_BUDGET` items read, whichever comes first.
   */
  private async counted(
    orgId: string,
    listId: string,
    filter: ContactFilter,
    offset: number,
    limit: number,
    position: ContactPosition | undefined,
  ): Promise<ContactPage> {
    const kept: Contact[] = [];
    let count = 0;
    let read = 0;
    let lastRead: string | undefined;
    let finished = false;
    const take = (contacts: Contact[]) => {
      for (const contact of contacts) {
        if (count >= offset && kept.length < limit) kept.push(contact);
        count++;
      }
    };
    while (!finished && read < this.scanBudget) {
      const start = lastRead ?? position?.after;
      const from =
        start === undefined ? undefined : { after: start, before: 0 };
      const budget = this.scanBudget - read;
      if (filter.tagId) {
        const found = await this.index.page(
          keys.taggedContactsOfList(orgId, listId, filter.tagId),
          {
            limit: Math.min(budget, 100),
            ...indexFrom(orgId, listId, filter.tagId, from),
          },
        );
        const emails = found.items.map((entry) => entry.email);
        read += emails.length;
        lastRead = emails.at(-1) ?? lastRead;
        finished = !found.lastKey;
        const contacts = await this.getMany(orgId, listId, emails);
        take(
          [...contacts.values()]
            .filter((contact) => matchesFilter(contact, filter))
            .sort(byEmail),
        );
      } else {
        const found = await this.contacts.page(
          keys.contactsOfList(orgId, listId),
          {
            ...listFilter(filter),
            limit: budget,
            ...listFrom(orgId, listId, from),
          },
        );
        read += found.scanned;
        const last = found.lastKey;
        lastRead = last ? emailOfContactKey(last.SK) : lastRead;
        finished = !last;
        take(
          found.items
            .map(contactOf)
            .filter((contact) => !filter.matches || filter.matches(contact)),
        );
      }
    }
    return {
      items: kept,
      total: (position?.before ?? 0) + count,
      exact: finished,
      ...(finished || lastRead === undefined
        ? {}
        : { scannedThrough: lastRead }),
    };
  }

  private async saveChunk(
    orgId: string,
    changes: StoredChange[],
    declined: ReadonlyMap<string, Declined>,
  ) {
    const { writes, contactItems } = this.writesOf(orgId, changes, declined);
    // Past 100 items (a status change of a contact stored with more tags
    // than today's cap allows) the last tag counters follow the
    // transaction, each its own ADD: exact unless the process dies between.
    const items = writes.slice(0, MAX_TRANSACTION_ITEMS).map((w) => w.tx);
    const overflow = writes.slice(MAX_TRANSACTION_ITEMS);
    try {
      // Sent again while another transaction held an item: the same write
      // may pass later.
      await transactWrite(this.table, items, { contended: contactChanged });
    } catch (error) {
      const failed = failedConditions(error);
      if (!failed) throw error;
      // The contacts, their pointers and the checks of declined topics come
      // first: a failed condition there is a change that raced this one;
      // past them, a counter of a list or a tag that is gone.
      if (failed.some((index) => index >= contactItems)) {
        throw new NotFoundError(
          'audience.targetGone',
          'The list or a tag of this change no longer exists',
          { cause: error },
        );
      }
      throw contactChanged(error);
    }
    await Promise.all(overflow.flatMap((w) => (w.alone ? [w.alone()] : [])));
  }

  /**
   * The writes of a group of changes, in this order: the contacts, their
   * pointers and the checks of declined topics (`contactItems` of them),
   * then the counters of the lists and the topics, then those of the tags.
   */
  private writesOf(
    orgId: string,
    changes: StoredChange[],
    declined: ReadonlyMap<string, Declined>,
  ): { writes: Write[]; contactItems: number } {
    const contactWrites: Write[] = [];
    const listDeltas = new Map<string, Map<string, number>>();
    const bump = (map: Map<string, number>, key: string, by: number) =>
      map.set(key, (map.get(key) ?? 0) + by);

    for (const { before, after, origin, removed } of changes) {
      const list = listDeltas.get(after.listId) ?? new Map<string, number>();
      listDeltas.set(after.listId, list);
      if (removed && before) {
        contactWrites.push(
          {
            tx: this.contacts.deleteTx(
              keys.contact(orgId, before.listId, before.email),
              { if: (w) => w.eq('version', before.version) },
            ),
          },
          { tx: this.pointers.deleteTx(keys.contactById(orgId, before.id)) },
        );
        bump(list, 'contactCount', -1);
        bump(list, statusCountAttribute(before.status), -1);
        continue;
      }
      // The stored version always moves on by one from the one read.
      const stored = { ...after, version: (before?.version ?? 0) + 1 };
      contactWrites.push({
        tx: this.contacts.putTx(
          keys.contact(orgId, after.listId, after.email),
          contactAttributes(stored, origin),
          {
            if: (w) => (before ? w.eq('version', before.version) : w.missing()),
            housekeeping: searchOf(stored),
          },
        ),
      });
      if (!before) {
        contactWrites.push({
          tx: this.pointers.putTx(
            keys.contactById(orgId, after.id),
            { listId: after.listId, email: after.email },
            { if: (w) => w.missing() },
          ),
        });
      }
      if (!before) bump(list, 'contactCount', 1);
      if (before?.status !== after.status) {
        if (before) bump(list, statusCountAttribute(before.status), -1);
        bump(list, statusCountAttribute(after.status), 1);
      }
    }

    for (const email of checkedAddresses(changes)) {
      contactWrites.push({
        tx: declinedTopicsCheck(this.table, orgId, email, declined.get(email)),
      });
    }

    const counterWrites: Write[] = [];
    for (const [listId, deltas] of listDeltas) {
      const moved = [...deltas].filter(([, by]) => by !== 0);
      const key = keys.list(orgId, listId);
      counterWrites.push(
        moved.length
          ? counterMove(
              this.lists,
              key,
              { add: Object.fromEntries(moved) },
              existing,
            )
          : { tx: this.lists.checkTx(key, where.exists()) },
      );
    }
    // Each topic the address declined: its subscribed decliners per list.
    for (const [topicId, perList] of movedTopicCounters(changes, declined)) {
      counterWrites.push(
        counterMove(
          this.topicAudiences,
          keys.topicAudience(orgId, topicId),
          topicCountersMove(perList),
        ),
      );
    }
    // Tags last: past a transaction's 100 items, only tag counters follow.
    const tagWrites: Write[] = [];
    // Each tag's counters: its carriers in the organization and in each
    // list (what `GET /contacts?tagId=` gives as its total), and its
    // subscribed carriers in each list (what a tagged send reaches).
    for (const [tagId, perList] of movedTagCounters(changes)) {
      const moves: [string, number][] = [];
      let total = 0;
      for (const [listId, delta] of perList) {
        total += delta.carriers;
        if (delta.carriers) {
          moves.push([tagListCountAttribute(listId), delta.carriers]);
        }
        if (delta.subscribed) {
          moves.push([tagSubscribedCountAttribute(listId), delta.subscribed]);
        }
      }
      if (total) moves.push(['contactCount', total]);
      tagWrites.push(
        counterMove(
          this.tags,
          keys.tag(orgId, tagId),
          { add: Object.fromEntries(moves) },
          existing,
        ),
      );
    }
    return {
      writes: [...contactWrites, ...counterWrites, ...tagWrites],
      contactItems: contactWrites.length,
    };
  }
}
