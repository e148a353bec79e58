/**
 * Driven adapter: the recipients each organization's campaigns took on,
 * one counter item per hour (kept two days), so a rolling 24-hour sum is
 * one BatchGetItem of 25 keys.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { type EntityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { SendWindowRepository } from '../../mail/ports.ts';
import { batchGet, type DynamoTable, epochSeconds } from './dynamo-table.ts';

const WindowItem = itemSchema('SendWindow', { recipients: v.number() });

/** Hours after which a counter is worthless (the TTL deletes it). */
const KEEP_HOURS = 48;

/** Hourly recipient counters on DynamoDB. */
export class DynamoSendWindowRepository implements SendWindowRepository {
  constructor(private readonly table: DynamoTable) {}

  async add(orgId: string, hour: string, recipients: number): Promise<void> {
    const expires = new Date(
      Date.parse(`${hour}:00:00Z`) + KEEP_HOURS * 3_600_000,
    );
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.sendWindow(orgId, hour),
        UpdateExpression: 'SET #type = :type, #ttl = :ttl ADD recipients :n',
        ExpressionAttributeNames: { '#type': '_type', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':type': 'SendWindow' satisfies EntityType,
          ':ttl': epochSeconds(expires),
          ':n': recipients,
        },
      }),
    );
  }

  async sum(orgId: string, hours: string[]): Promise<number> {
    const items = await batchGet(
      this.table,
      hours.map((hour) => keys.sendWindow(orgId, hour)),
    );
    return items.reduce(
      (total, item) => total + parseItem(WindowItem, item).recipients,
      0,
    );
  }
}
