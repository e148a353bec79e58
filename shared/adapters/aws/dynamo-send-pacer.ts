/**
 * Driven adapter: the application-wide send pacer, one item holding the
 * next free instant of the SES account's rate. A sender reads it, then
 * takes its run: on a busy account by an atomic add, conditional on the
 * account still being busy, which every sender reserving at once passes
 * (the instant only moves forward); on an idle one by a put, conditional
 * on it still being idle, which only one of several restarting it at once
 * wins, the others then adding to it. Senders in any number of
 * containers share the rate without a throttling error and without
 * refusing one another. One read and one write per reservation, and a
 * refused put for each sender that lost the race to restart it.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { SendPacer } from '../../campaigns/ports.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import { CONFLICT_ATTEMPTS } from '../../retry.ts';
import { type DynamoTable, isConditionFailure } from './dynamo-table.ts';

const PacerItem = itemSchema('SendPacer', { nextFreeAt: v.number() });
const Updated = v.object({ nextFreeAt: v.number() });

/** The SES account's rate, shared through DynamoDB. */
export class DynamoSendPacer implements SendPacer {
  constructor(private readonly table: DynamoTable) {}

  async reserve(
    count: number,
    ratePerSecond: number,
    now: Date,
  ): Promise<number> {
    const key = keys.sendPacer();
    const span = Math.ceil((count * 1000) / ratePerSecond);
    const at = now.getTime();
    // Unknown until read; known busy once another sender restarted it.
    let busy: boolean | undefined;
    for (let attempt = 1; ; attempt++) {
      if (busy === undefined) {
        const { Item } = await this.table.client.send(
          new GetCommand({
            TableName: this.table.tableName,
            Key: key,
            ConsistentRead: true,
          }),
        );
        const previous = Item
          ? parseItem(PacerItem, Item).nextFreeAt
          : undefined;
        busy = previous !== undefined && previous >= at;
      }
      try {
        if (busy) {
          // Busy: the run starts where the last one ends.
          const { Attributes } = await this.table.client.send(
            new UpdateCommand({
              TableName: this.table.tableName,
              Key: key,
              UpdateExpression: 'SET nextFreeAt = nextFreeAt + :span',
              ConditionExpression: 'nextFreeAt >= :now',
              ExpressionAttributeValues: { ':span': span, ':now': at },
              ReturnValues: 'UPDATED_NEW',
            }),
          );
          return v.parse(Updated, Attributes).nextFreeAt - span;
        }
        // Idle (or never used): an idle account lends nothing, the run
        // starts now, not in the past.
        await this.table.client.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: { ...key, ...entityType('SendPacer'), nextFreeAt: at + span },
            ConditionExpression:
              'attribute_not_exists(PK) OR nextFreeAt < :now',
            ExpressionAttributeValues: { ':now': at },
          }),
        );
        return at;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Refused as idle: another sender restarted it, it is busy now
        // (the instant only moves forward). Refused as busy: read again.
        busy = busy ? undefined : true;
      }
      if (attempt >= CONFLICT_ATTEMPTS) {
        throw new ConflictError(
          'write.contended',
          'The send pacer moved meanwhile',
        );
      }
    }
  }
}
