/**
 * Driven adapter: topics in their organization's partition (names reserved
 * case-insensitively), and each topic's opt-outs in a partition of their
 * own, keyed by email, counted on the topic in the same transaction.
 */

import {
  GetCommand,
  paginateQuery,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { tagNameKey } from '../../audience/model.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest, ReadOptions } from '../../ports.ts';
import { retryOnConflict } from '../../retry.ts';
import type { Topic, TopicOptOut } from '../../topics/model.ts';
import type { TopicRepository } from '../../topics/ports.ts';
import {
  moveCollectionCounter,
  pageByPrefix,
  pageOfCollection,
  putWithReservation,
} from './dynamo-collections.ts';
import {
  contactFromItem,
  declinedTopicsOf,
  moveTopicCounters,
} from './dynamo-contact-repository.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  deleteByPrefix,
  deleteKeys,
  failedConditions,
  isTransactionConflict,
  type TransactItem,
} from './dynamo-table.ts';

/** The reservation of a topic's name. */
const TopicNameItem = itemSchema('TopicName', { topicId: v.string() });

/** DynamoDB's limit of items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

const toItem = (orgId: string, topic: Topic) => ({
  ...keys.topic(orgId, topic.id),
  ...entityType('Topic'),
  ...topic,
});

const TopicItem = itemSchema('Topic', {
  id: v.string(),
  name: v.string(),
  description: v.optional(v.string()),
  createdAt: v.string(),
  updatedAt: v.string(),
  optOutCount: Counter,
});

const TopicOptOutItem = itemSchema('TopicOptOut', {
  email: v.string(),
  contactId: v.string(),
  optedOutAt: v.string(),
});

const fromItem = (item: Record<string, unknown>): Topic =>
  parseItem(TopicItem, item);

const optOutFromItem = (item: Record<string, unknown>): TopicOptOut =>
  parseItem(TopicOptOutItem, item);

const nameTaken = (name: string, cause: unknown) =>
  new ConflictError(
    'topic.nameTaken',
    `A topic named "${name}" already exists`,
    {
      cause,
    },
  );

/** Topics, their name reservations, their opt-outs and counters. */
export class DynamoTopicRepository implements TopicRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, topic: Topic): Promise<void> {
    await putWithReservation(this.table, {
      reservation: entity(this.table, TopicNameItem).putTx(
        keys.topicName(orgId, tagNameKey(topic.name)),
        { topicId: topic.id },
        {
          if: (w) => w.missing(),
          otherwise: (cause) => nameTaken(topic.name, cause),
        },
      ),
      item: {
        Put: {
          TableName: this.table.tableName,
          Item: toItem(orgId, topic),
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      counted: keys.topicsOfOrganization(orgId),
    });
  }

  async get(orgId: string, topicId: string): Promise<Topic | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.topic(orgId, topicId),
        ConsistentRead: true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Topic>> {
    const page = await pageOfCollection(
      this.table,
      keys.topicsOfOrganization(orgId),
      request,
    );
    return { items: page.items.map(fromItem), total: page.total };
  }

  async update(orgId: string, before: Topic, after: Topic): Promise<void> {
    const { tableName: TableName } = this.table;
    const renamed = tagNameKey(before.name) !== tagNameKey(after.name);
    // The counter may move meanwhile: write only name and description.
    const items: TransactItem[] = [
      ...(renamed
        ? [
            {
              Put: {
                TableName,
                Item: {
                  ...keys.topicName(orgId, tagNameKey(after.name)),
                  ...entityType('TopicName'),
                  topicId: after.id,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Delete: {
                TableName,
                Key: keys.topicName(orgId, tagNameKey(before.name)),
              },
            },
          ]
        : []),
      {
        Update: {
          TableName,
          Key: keys.topic(orgId, after.id),
          UpdateExpression: after.description
            ? 'SET #name = :name, updatedAt = :at, description = :description'
            : 'SET #name = :name, updatedAt = :at REMOVE description',
          ConditionExpression: 'attribute_exists(PK) AND #name = :before',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':name': after.name,
            ':at': after.updatedAt,
            ':before': before.name,
            ...(after.description ? { ':description': after.description } : {}),
          },
        },
      },
    ];
    try {
      await this.table.client.send(
        new TransactWriteCommand({ TransactItems: items }),
      );
    } catch (error) {
      const failed = failedConditions(error);
      if (renamed && failed?.includes(0)) throw nameTaken(after.name, error);
      if (failed?.length) {
        throw new ConflictError(
          'topic.changed',
          'The topic changed or was deleted meanwhile; read it again',
          { cause: error },
        );
      }
      throw error;
    }
  }

  async delete(orgId: string, topic: Topic): Promise<void> {
    const { tableName: TableName } = this.table;
    // 1. The topic, its name and the counter, together.
    try {
      await this.table.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName,
                Key: keys.topic(orgId, topic.id),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
            {
              Delete: {
                TableName,
                Key: keys.topicName(orgId, tagNameKey(topic.name)),
              },
            },
            moveCollectionCounter(
              this.table,
              keys.topicsOfOrganization(orgId),
              -1,
            ),
          ],
        }),
      );
    } catch (error) {
      if (failedConditions(error)?.includes(0)) {
        throw new NotFoundError('topic.notFound', `No topic ${topic.id}`, {
          cause: error,
        });
      }
      throw error;
    }
    // 2. Its opt-outs and counters: unreachable once the topic is gone,
    // so a failure here leaves nothing visible behind. Each address first
    // forgets the topic, so contact writes stop moving its counters.
    const optOuts = keys.topicOptOuts(orgId, topic.id);
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': optOuts.PK,
          ':prefix': optOuts.skPrefix,
        },
        ProjectionExpression: 'SK',
      },
    );
    for await (const page of pages) {
      const emails = (page.Items ?? []).map((item) =>
        String(item.SK).slice(optOuts.skPrefix.length),
      );
      for (let i = 0; i < emails.length; i += 25) {
        await Promise.all(
          emails.slice(i, i + 25).map((email) =>
            this.table.client
              .send(
                new UpdateCommand({
                  TableName,
                  Key: keys.declinedTopics(orgId, email),
                  UpdateExpression: 'DELETE topicIds :topic ADD version :one',
                  ConditionExpression: 'attribute_exists(PK)',
                  ExpressionAttributeValues: {
                    ':topic': new Set([topic.id]),
                    ':one': 1,
                  },
                }),
              )
              .catch((error: unknown) => {
                if (
                  (error as Error).name !== 'ConditionalCheckFailedException'
                ) {
                  throw error;
                }
              }),
          ),
        );
      }
    }
    await deleteByPrefix(this.table, optOuts);
    await deleteKeys(this.table, [keys.topicAudience(orgId, topic.id)]);
  }

  async addOptOut(
    orgId: string,
    topicId: string,
    optOut: TopicOptOut,
  ): Promise<boolean> {
    return this.changeOptOut(orgId, topicId, optOut.email, 1, {
      Put: {
        TableName: this.table.tableName,
        Item: {
          ...keys.topicOptOut(orgId, topicId, optOut.email),
          ...entityType('TopicOptOut'),
          ...optOut,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
  }

  async removeOptOut(
    orgId: string,
    topicId: string,
    email: string,
  ): Promise<boolean> {
    return this.changeOptOut(orgId, topicId, email, -1, {
      Delete: {
        TableName: this.table.tableName,
        Key: keys.topicOptOut(orgId, topicId, email),
        ConditionExpression: 'attribute_exists(PK)',
      },
    });
  }

  /**
   * Writes or deletes one opt-out and, in the same transaction, moves the
   * topic's counter by `delta`, the address's declined topics (and their
   * version) and the topic's per-list counters of subscribed decliners:
   * one per list where the address is a subscribed contact. Each contact of
   * the address (or its absence, in every other list) is checked as read,
   * and contact writes check the address's declined topics, so a status
   * change or an add racing the opt-out makes one of the two read again.
   * False when the opt-out was already in the wanted state.
   */
  private async changeOptOut(
    orgId: string,
    topicId: string,
    email: string,
    delta: 1 | -1,
    optOutWrite: TransactItem,
  ): Promise<boolean> {
    const { tableName: TableName } = this.table;
    return retryOnConflict(async (retryable) => {
      const [declined, listIds] = await Promise.all([
        declinedTopicsOf(this.table, orgId, [email]),
        this.listIds(orgId),
      ]);
      const address = declined.get(email);
      const contacts = new Map(
        (
          await batchGet(
            this.table,
            listIds.map((listId) => keys.contact(orgId, listId, email)),
          )
        ).map((item) => {
          const contact = contactFromItem(item);
          return [contact.listId, contact];
        }),
      );
      const subscribedIn = new Map(
        [...contacts.values()]
          .filter((c) => c.status === 'subscribed')
          .map((c) => [c.listId, delta]),
      );
      const fixed = 4;
      // Every list's contact is checked as read; past a transaction's 100
      // items only the lists holding the address are (an add of it to
      // another list at the same instant may then go uncounted: recount).
      const checked =
        fixed + listIds.length <= MAX_TRANSACTION_ITEMS
          ? listIds
          : [...contacts.keys()];
      const items: TransactItem[] = [
        optOutWrite,
        {
          Update: {
            TableName,
            Key: keys.topic(orgId, topicId),
            UpdateExpression: 'ADD optOutCount :delta',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeValues: { ':delta': delta },
          },
        },
        {
          Update: {
            TableName,
            Key: keys.declinedTopics(orgId, email),
            UpdateExpression: `SET #type = :type ${delta === 1 ? 'ADD topicIds :topic, version :one' : 'DELETE topicIds :topic ADD version :one'}`,
            ...(address?.version === undefined
              ? { ConditionExpression: 'attribute_not_exists(PK)' }
              : { ConditionExpression: 'version = :version' }),
            ExpressionAttributeNames: { '#type': '_type' },
            ExpressionAttributeValues: {
              ':type': 'DeclinedTopics',
              ':topic': new Set([topicId]),
              ':one': 1,
              ...(address?.version === undefined
                ? {}
                : { ':version': address.version }),
            },
          },
        },
        ...(subscribedIn.size
          ? [moveTopicCounters(this.table, orgId, topicId, subscribedIn)]
          : []),
        ...checked.map((listId): TransactItem => {
          const contact = contacts.get(listId);
          return {
            ConditionCheck: {
              TableName,
              Key: keys.contact(orgId, listId, email),
              ...(contact
                ? {
                    ConditionExpression: 'version = :version',
                    ExpressionAttributeValues: { ':version': contact.version },
                  }
                : { ConditionExpression: 'attribute_not_exists(PK)' }),
            },
          };
        }),
      ];
      try {
        await this.table.client.send(
          new TransactWriteCommand({ TransactItems: items }),
        );
        return true;
      } catch (error) {
        const failed = failedConditions(error);
        if (failed?.includes(1)) {
          throw new NotFoundError('topic.notFound', `No topic ${topicId}`, {
            cause: error,
          });
        }
        if (failed?.includes(0)) return false;
        if (failed?.length || isTransactionConflict(error)) {
          // A contact or the address changed meanwhile: read them again.
          retryable(
            new ConflictError(
              'write.contended',
              'The address changed while its opt-out was being saved; retry',
              { cause: error },
            ),
          );
        }
        throw error;
      }
    });
  }

  /** The ids of the organization's lists (strongly consistent). */
  private async listIds(orgId: string): Promise<string[]> {
    const query = keys.listsOfOrganization(orgId);
    const ids: string[] = [];
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
        ConsistentRead: true,
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        ids.push(String(item.SK).slice(query.skPrefix.length));
      }
    }
    return ids;
  }

  async optedOut(
    orgId: string,
    topicId: string,
    emails: string[],
    options: ReadOptions = {},
  ): Promise<Set<string>> {
    const items = await batchGet(
      this.table,
      [...new Set(emails)].map((email) =>
        keys.topicOptOut(orgId, topicId, email),
      ),
      options,
    );
    return new Set(items.map((item) => optOutFromItem(item).email));
  }

  async pageOptOuts(
    orgId: string,
    topicId: string,
    total: number,
    request: PageRequest,
  ): Promise<Page<TopicOptOut>> {
    const page = await pageByPrefix(
      this.table,
      keys.topicOptOuts(orgId, topicId),
      total,
      request,
      { ascending: true },
    );
    return { items: page.items.map(optOutFromItem), total };
  }
}
