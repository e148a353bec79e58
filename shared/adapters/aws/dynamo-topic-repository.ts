/**
 * Driven adapter: topics in their organization's partition (names reserved
 * case-insensitively), and each topic's opt-outs in a partition of their
 * own, keyed by email, counted on the topic in the same transaction.
 */

import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { tagNameKey } from '../../audience/model.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest, ReadOptions } from '../../ports.ts';
import type { Topic, TopicOptOut } from '../../topics/model.ts';
import type { TopicRepository } from '../../topics/ports.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  deleteByPrefix,
  failedConditions,
  moveCollectionCounter,
  pageByPrefix,
  pageOfCollection,
  putWithReservation,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

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
      reservation: {
        ...keys.topicName(orgId, tagNameKey(topic.name)),
        ...entityType('TopicName'),
        topicId: topic.id,
      },
      item: toItem(orgId, topic),
      counted: keys.topicsOfOrganization(orgId),
      onTaken: (cause) => nameTaken(topic.name, cause),
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
    // 2. Its opt-outs: unreachable once the topic is gone, so a failure
    // here leaves nothing visible behind.
    await deleteByPrefix(this.table, keys.topicOptOuts(orgId, topic.id));
  }

  async addOptOut(
    orgId: string,
    topicId: string,
    optOut: TopicOptOut,
  ): Promise<boolean> {
    return this.changeOptOut(orgId, topicId, 1, {
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
    return this.changeOptOut(orgId, topicId, -1, {
      Delete: {
        TableName: this.table.tableName,
        Key: keys.topicOptOut(orgId, topicId, email),
        ConditionExpression: 'attribute_exists(PK)',
      },
    });
  }

  /**
   * Writes or deletes one opt-out and moves the topic's counter by `delta`,
   * together. False when the opt-out was already in the wanted state.
   */
  private async changeOptOut(
    orgId: string,
    topicId: string,
    delta: 1 | -1,
    optOutWrite: TransactItem,
  ): Promise<boolean> {
    try {
      await transactWrite(this.table, [
        optOutWrite,
        {
          Update: {
            TableName: this.table.tableName,
            Key: keys.topic(orgId, topicId),
            UpdateExpression: 'ADD optOutCount :delta',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeValues: { ':delta': delta },
          },
        },
      ]);
      return true;
    } catch (error) {
      const failed = failedConditions(error);
      if (failed?.includes(1)) {
        throw new NotFoundError('topic.notFound', `No topic ${topicId}`, {
          cause: error,
        });
      }
      if (failed?.includes(0)) return false;
      throw error;
    }
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
