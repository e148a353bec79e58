/**
 * Driven adapter: the application-wide send pacer, one item holding the
 * next free instant of the SES account's rate. A sender reserves a run of
 * consecutive sends with a conditional write (read, then write if nobody
 * moved it meanwhile): senders in any number of containers share the rate
 * without a throttling error. One read and one write per reservation.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { SendPacer } from '../../campaigns/ports.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import { type DynamoTable, isConditionFailure } from './dynamo-table.ts';

const PacerItem = itemSchema('SendPacer', { nextFreeAt: v.number() });

/** The SES account's rate, shared through DynamoDB. */
export class DynamoSendPacer implements SendPacer {
  constructor(private readonly table: DynamoTable) {}

  reserve(count: number, ratePerSecond: number, now: Date): Promise<number> {
    const key = keys.sendPacer();
    return retryOnConflict(async (retryable) => {
      const { Item } = await this.table.client.send(
        new GetCommand({
          TableName: this.table.tableName,
          Key: key,
          ConsistentRead: true,
        }),
      );
      const previous = Item ? parseItem(PacerItem, Item).nextFreeAt : undefined;
      // An idle account lends nothing: the run starts now, not in the past.
      const start = Math.max(now.getTime(), previous ?? 0);
      const nextFreeAt = start + Math.ceil((count * 1000) / ratePerSecond);
      try {
        await this.table.client.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: { ...key, ...entityType('SendPacer'), nextFreeAt },
            ConditionExpression:
              previous === undefined
                ? 'attribute_not_exists(PK)'
                : 'nextFreeAt = :previous',
            ...(previous === undefined
              ? {}
              : { ExpressionAttributeValues: { ':previous': previous } }),
          }),
        );
        return start;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        retryable(
          new ConflictError(
            'write.contended',
            'The send pacer moved meanwhile',
            { cause: error },
          ),
        );
        throw error;
      }
    });
  }
}
