/**
 * Driven adapter: the audience of a send, read in email order (the
 * contact's sort key), subscribed contacts only. Without a tag it reads the
 * list's partition; with a tag it reads the tag index (one small entry per
 * list × tag × contact), then those contacts by key, so a tagged send reads
 * about twice its tag's carriers, never the rest of the list. A walk reads
 * a bounded number of items per call and resumes from a cursor (an email),
 * never from a page number. Counts come from kept counters.
 */
import { GetCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { Contact } from '../../audience/model.ts';
import type { AudienceReader } from '../../campaigns/ports.ts';
import { keys } from '../../db/keys.ts';
import {
  contactFromItem,
  topicDeclinedCountAttribute,
} from './dynamo-contact-repository.ts';
import { batchGet, Counter, type DynamoTable } from './dynamo-table.ts';
import { tagSubscribedCountAttribute } from './dynamo-tag-repository.ts';

const PREFIX = 'CONTACT#';

/** The filter of a list walk: subscribed, with the tag if any. */
const audienceFilter = (tagId: string | null) => ({
  FilterExpression: tagId
    ? '#status = :subscribed AND contains(tagIds, :tagId)'
    : '#status = :subscribed',
  ExpressionAttributeNames: { '#status': 'status' },
  values: {
    ':subscribed': 'subscribed',
    ...(tagId ? { ':tagId': tagId } : {}),
  },
});

const emailOf = (sortKey: unknown): string | null =>
  typeof sortKey === 'string' && sortKey.startsWith(PREFIX)
    ? sortKey.slice(PREFIX.length)
    : null;

/** Walks lists' subscribed contacts on DynamoDB. */
export class DynamoAudienceReader implements AudienceReader {
  constructor(private readonly table: DynamoTable) {}

  async walk(
    orgId: string,
    listId: string,
    options: { after: string | null; limit: number; tagId: string | null },
  ): Promise<{ contacts: Contact[]; last: string | null; done: boolean }> {
    if (options.tagId)
      return this.walkTag(orgId, listId, options.tagId, options);
    const { PK } = keys.contactsOfList(orgId, listId);
    const filter = audienceFilter(null);
    const result = await this.table.client.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression: filter.FilterExpression,
        ExpressionAttributeNames: filter.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ':pk': PK,
          ':prefix': PREFIX,
          ...filter.values,
        },
        // Items read (before the filter): what one step may cost.
        Limit: options.limit,
        ...(options.after
          ? { ExclusiveStartKey: { PK, SK: `${PREFIX}${options.after}` } }
          : {}),
      }),
    );
    const contacts = (result.Items ?? []).map(contactFromItem);
    const last = emailOf(result.LastEvaluatedKey?.SK);
    return {
      contacts,
      last: last ?? contacts.at(-1)?.email ?? options.after,
      done: !result.LastEvaluatedKey,
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
    const index = keys.taggedContactsOfList(orgId, listId, tagId);
    const result = await this.table.client.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': index.PK,
          ':prefix': index.skPrefix,
        },
        Limit: options.limit,
        ...(options.after
          ? {
              ExclusiveStartKey: keys.taggedContact(
                orgId,
                listId,
                tagId,
                options.after,
              ),
            }
          : {}),
      }),
    );
    const emails = (result.Items ?? []).map((item) => emailOf(item.SK) ?? '');
    const contacts = await this.carriers(orgId, listId, tagId, emails, false);
    return {
      contacts,
      last:
        emailOf(result.LastEvaluatedKey?.SK) ?? emails.at(-1) ?? options.after,
      done: !result.LastEvaluatedKey,
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
    const filter = audienceFilter(null);
    const contacts: Contact[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ConsistentRead: range.consistent ?? false,
        FilterExpression: filter.FilterExpression,
        ExpressionAttributeNames: filter.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ':pk': PK,
          // Inclusive bounds: the contact at `after` is left out below.
          ':from': `${PREFIX}${range.after ?? ''}`,
          ':to': `${PREFIX}${range.last}`,
          ...filter.values,
        },
      },
    );
    for await (const page of pages) {
      contacts.push(...(page.Items ?? []).map(contactFromItem));
    }
    return contacts.filter((contact) => contact.email !== range.after);
  }

  /** A range of a tag's index entries, then their contacts. */
  private async rangeOfTag(
    orgId: string,
    listId: string,
    tagId: string,
    range: { after: string | null; last: string; consistent?: boolean },
  ): Promise<Contact[]> {
    const index = keys.taggedContactsOfList(orgId, listId, tagId);
    const emails: string[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': index.PK,
          ':from': `${index.skPrefix}${range.after ?? ''}`,
          ':to': `${index.skPrefix}${range.last}`,
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const email = emailOf(item.SK);
        if (email !== null && email !== range.after) emails.push(email);
      }
    }
    return this.carriers(
      orgId,
      listId,
      tagId,
      emails,
      range.consistent ?? false,
    );
  }

  async countSubscribedWithTag(
    orgId: string,
    listId: string,
    tagId: string,
  ): Promise<number> {
    const attribute = tagSubscribedCountAttribute(listId);
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.tag(orgId, tagId),
        ProjectionExpression: '#count',
        ExpressionAttributeNames: { '#count': attribute },
      }),
    );
    return v.parse(Counter, Item?.[attribute]);
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
    const find = (key: { PK: string; SK: string } | undefined) =>
      key && items.find((item) => item.PK === key.PK && item.SK === key.SK);
    const listItem = find(list);
    if (!listItem) return undefined;
    return {
      subscribed: v.parse(Counter, listItem.subscribedCount),
      withTag: v.parse(
        Counter,
        find(tag)?.[tagSubscribedCountAttribute(listId)],
      ),
      declined: v.parse(
        Counter,
        find(topic)?.[topicDeclinedCountAttribute(listId)],
      ),
    };
  }

  async countDeclinedInList(
    orgId: string,
    topicId: string,
    listId: string,
  ): Promise<number> {
    const attribute = topicDeclinedCountAttribute(listId);
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.topicAudience(orgId, topicId),
        ProjectionExpression: '#count',
        ExpressionAttributeNames: { '#count': attribute },
      }),
    );
    return v.parse(Counter, Item?.[attribute]);
  }

  async topicOptOuts(orgId: string, topicId: string): Promise<string[]> {
    const query = keys.topicOptOuts(orgId, topicId);
    const emails: string[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
        },
        ProjectionExpression: 'SK',
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        emails.push(String(item.SK).slice(query.skPrefix.length));
      }
    }
    return emails;
  }
}
