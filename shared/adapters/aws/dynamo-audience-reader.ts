/**
 * Driven adapter: the audience of a send, read in email order (the
 * contact's sort key), subscribed contacts only. Without a tag it reads the
 * list's partition; with a tag it reads the tag index (one small entry per
 * list × tag × contact), then those contacts by key, so a tagged send reads
 * about twice its tag's carriers, never the rest of the list. A walk reads
 * a bounded number of items per call and resumes from a cursor (an email),
 * never from a page number. Counts come from kept counters.
 */
import * as v from 'valibot';
import type { Contact } from '../../audience/model.ts';
import type { AudienceReader } from '../../campaigns/ports.ts';
import { where } from '../../db/expressions.ts';
import { type EntityType, itemSchema, parseItem } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import {
  ContactItem,
  contactFromItem,
  contactOf,
  TaggedContactItem,
  topicDeclinedCountAttribute,
} from './dynamo-contact-repository.ts';
import { entity } from './dynamo-entity.ts';
import { batchGet, Counter, type DynamoTable } from './dynamo-table.ts';
import { tagSubscribedCountAttribute } from './dynamo-tag-repository.ts';

const PREFIX = 'CONTACT#';

/** The filter of a list walk: subscribed contacts only. */
const subscribed = where.eq('status', 'subscribed');

const emailOf = (sortKey: unknown): string | null =>
  typeof sortKey === 'string' && sortKey.startsWith(PREFIX)
    ? sortKey.slice(PREFIX.length)
    : null;

/** One counter attribute of an item, as its readers read it (absent: 0). */
const counterOf = (type: EntityType, attribute: string) =>
  itemSchema(type, { [attribute]: Counter });

/** A counter of an item a batch read returned (none: 0). */
const countIn = (
  item: Record<string, unknown> | undefined,
  type: EntityType,
  attribute: string,
): number =>
  item ? (parseItem(counterOf(type, attribute), item)[attribute] ?? 0) : 0;

/** A list's subscribed contacts, as its counter keeps them. */
const ListSubscribedItem = itemSchema('List', { subscribedCount: Counter });

/** An address's opt-out of a topic, as the audience reads it. */
const OptOutEmailItem = itemSchema('TopicOptOut', { email: v.string() });

/** Walks lists' subscribed contacts on DynamoDB. */
export class DynamoAudienceReader implements AudienceReader {
  private readonly contacts;
  private readonly index;
  private readonly optOuts;

  constructor(private readonly table: DynamoTable) {
    this.contacts = entity(table, ContactItem);
    this.index = entity(table, TaggedContactItem);
    this.optOuts = entity(table, OptOutEmailItem);
  }

  async walk(
    orgId: string,
    listId: string,
    options: { after: string | null; limit: number; tagId: string | null },
  ): Promise<{ contacts: Contact[]; last: string | null; done: boolean }> {
    if (options.tagId)
      return this.walkTag(orgId, listId, options.tagId, options);
    const found = await this.contacts.page(keys.contactsOfList(orgId, listId), {
      filter: subscribed,
      // Items read (before the filter): what one step may cost.
      limit: options.limit,
      ...(options.after
        ? { startKey: keys.contact(orgId, listId, options.after) }
        : {}),
    });
    const contacts = found.items.map(contactOf);
    const last = emailOf(found.lastKey?.SK);
    return {
      contacts,
      last: last ?? contacts.at(-1)?.email ?? options.after,
      done: !found.lastKey,
    };
  }

  /**
   * A walk step of a tag: at most `limit` index entries after the cursor,
   * then their contacts (eventually consistent, as the list walk), keeping
   * the subscribed ones that still carry the tag.
   */
  private async walkTag(
    orgId: string,
    listId: string,
    tagId: string,
    options: { after: string | null; limit: number },
  ): Promise<{ contacts: Contact[]; last: string | null; done: boolean }> {
    const found = await this.index.page(
      keys.taggedContactsOfList(orgId, listId, tagId),
      {
        limit: options.limit,
        ...(options.after
          ? {
              startKey: keys.taggedContact(orgId, listId, tagId, options.after),
            }
          : {}),
      },
    );
    const emails = found.items.map((entry) => entry.email);
    const contacts = await this.carriers(orgId, listId, tagId, emails, false);
    return {
      contacts,
      last: emailOf(found.lastKey?.SK) ?? emails.at(-1) ?? options.after,
      done: !found.lastKey,
    };
  }

  /**
   * The subscribed contacts of these emails that carry the tag, in email
   * order: an index entry may outlive its tag by the stream's delay.
   */
  private async carriers(
    orgId: string,
    listId: string,
    tagId: string,
    emails: string[],
    consistent: boolean,
  ): Promise<Contact[]> {
    const items = await batchGet(
      this.table,
      emails.map((email) => keys.contact(orgId, listId, email)),
      { consistent },
    );
    return items
      .map(contactFromItem)
      .filter((c) => c.status === 'subscribed' && c.tagIds.includes(tagId))
      .sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  }

  async range(
    orgId: string,
    listId: string,
    range: {
      after: string | null;
      last: string;
      tagId: string | null;
      consistent?: boolean;
    },
  ): Promise<Contact[]> {
    if (range.tagId) return this.rangeOfTag(orgId, listId, range.tagId, range);
    const { PK } = keys.contactsOfList(orgId, listId);
    const contacts = await this.contacts.all(
      // Inclusive bounds: the contact at `after` is left out below.
      {
        PK,
        from: `${PREFIX}${range.after ?? ''}`,
        to: `${PREFIX}${range.last}`,
      },
      { filter: subscribed, consistent: range.consistent ?? false },
    );
    return contacts
      .map(contactOf)
      .filter((contact) => contact.email !== range.after);
  }

  /** A range of a tag's index entries, then their contacts. */
  private async rangeOfTag(
    orgId: string,
    listId: string,
    tagId: string,
    range: { after: string | null; last: string; consistent?: boolean },
  ): Promise<Contact[]> {
    const index = keys.taggedContactsOfList(orgId, listId, tagId);
    const entries = await this.index.all({
      PK: index.PK,
      from: `${index.skPrefix}${range.after ?? ''}`,
      to: `${index.skPrefix}${range.last}`,
    });
    return this.carriers(
      orgId,
      listId,
      tagId,
      entries
        .map((entry) => entry.email)
        .filter((email) => email !== range.after),
      range.consistent ?? false,
    );
  }

  countSubscribedWithTag(
    orgId: string,
    listId: string,
    tagId: string,
  ): Promise<number> {
    return this.counter(
      keys.tag(orgId, tagId),
      'Tag',
      tagSubscribedCountAttribute(listId),
    );
  }

  async audienceCounters(
    orgId: string,
    listId: string,
    target: { tagId: string | null; topicId: string | null },
  ): Promise<
    { subscribed: number; withTag: number; declined: number } | undefined
  > {
    const list = keys.list(orgId, listId);
    const tag = target.tagId ? keys.tag(orgId, target.tagId) : undefined;
    const topic = target.topicId
      ? keys.topicAudience(orgId, target.topicId)
      : undefined;
    const items = await batchGet(
      this.table,
      [list, ...(tag ? [tag] : []), ...(topic ? [topic] : [])],
      { consistent: false },
    );
    const find = (key: Key | undefined) =>
      key && items.find((item) => item.PK === key.PK && item.SK === key.SK);
    const listItem = find(list);
    if (!listItem) return undefined;
    return {
      subscribed: parseItem(ListSubscribedItem, listItem).subscribedCount,
      withTag: countIn(find(tag), 'Tag', tagSubscribedCountAttribute(listId)),
      declined: countIn(
        find(topic),
        'TopicAudience',
        topicDeclinedCountAttribute(listId),
      ),
    };
  }

  countDeclinedInList(
    orgId: string,
    topicId: string,
    listId: string,
  ): Promise<number> {
    return this.counter(
      keys.topicAudience(orgId, topicId),
      'TopicAudience',
      topicDeclinedCountAttribute(listId),
    );
  }

  async topicOptOuts(orgId: string, topicId: string): Promise<string[]> {
    const optOuts = await this.optOuts.all(keys.topicOptOuts(orgId, topicId), {
      project: ['email'],
    });
    return optOuts.map((optOut) => optOut.email);
  }

  /** One counter of an item, read alone (no item: 0). */
  private async counter(
    key: Key,
    type: EntityType,
    attribute: string,
  ): Promise<number> {
    const counter = counterOf(type, attribute);
    const found = await entity(this.table, counter).project(
      key,
      [attribute],
      counter,
    );
    return found?.[attribute] ?? 0;
  }
}
