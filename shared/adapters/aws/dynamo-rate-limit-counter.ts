/**
 * Driven adapter: per-key request counters, one item per key and window,
 * incremented atomically so every container sees the same count.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../db/keys.ts';
import type { RateLimitCounter } from '../../ports.ts';
import { type DynamoTable, epochSeconds } from './dynamo-table.ts';

/** Fixed-window counters with `ADD`, expired by TTL. */
export class DynamoRateLimitCounter implements RateLimitCounter {
  constructor(private readonly table: DynamoTable) {}

  async hit(
    keyId: string,
    windowStart: number,
    expiresAt: Date,
  ): Promise<number> {
    const { Attributes } = await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.rateWindow(keyId, windowStart),
        UpdateExpression:
          'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl), #type = :type',
        ExpressionAttributeNames: {
          '#count': 'count',
          '#ttl': 'ttl',
          '#type': '_type',
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':ttl': epochSeconds(expiresAt),
          ':type': 'RateWindow',
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Attributes?.count;
    if (typeof count !== 'number') {
      throw new Error('DynamoDB did not return the updated request count');
    }
    return count;
  }
}
