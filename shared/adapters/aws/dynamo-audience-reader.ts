/**
 * Driven adapter: the audience of a send, read from the list's partition in
 * email order (the contact's sort key), subscribed contacts only, narrowed
 * to a tag by a filter. A walk reads a bounded number of items per call and
 * resumes from a cursor (an email), never from a page number.
 */
import { paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Contact } from '../../audience/model.ts';
import type { AudienceReader } from '../../campaigns/ports.ts';
import { keys } from '../../db/keys.ts';
import { contactFromItem } from './dynamo-contact-repository.ts';
import type { DynamoTable } from './dynamo-table.ts';

const PREFIX = 'CONTACT#';

/** The filter of a send's audience: subscribed, with the tag if any. */
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
    const { PK } = keys.contactsOfList(orgId, listId);
    const filter = audienceFilter(options.tagId);
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
    const { PK } = keys.contactsOfList(orgId, listId);
    const filter = audienceFilter(range.tagId);
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

  async countSubscribedWithTag(
    orgId: string,
    listId: string,
    tagId: string,
  ): Promise<number> {
    const { PK } = keys.contactsOfList(orgId, listId);
    const filter = audienceFilter(tagId);
    let count = 0;
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression: filter.FilterExpression,
        ExpressionAttributeNames: filter.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ':pk': PK,
          ':prefix': PREFIX,
          ...filter.values,
        },
        Select: 'COUNT',
      },
    );
    for await (const page of pages) count += page.Count ?? 0;
    return count;
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
