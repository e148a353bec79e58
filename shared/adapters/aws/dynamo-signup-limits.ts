/**
 * Driven adapter: the counters that bound the public sign-up form. A
 * fixed-window counter is one item per (counter, window), incremented
 * under a condition, so concurrent submissions never pass the cap; it
 * expires with the table's TTL. The "one confirmation email per address
 * per page per day" mark is one item per (page, address).
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { entityType } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { attr } from '../../db/table.ts';
import type { SignupLimits } from '../../signup/ports.ts';
import {
  type DynamoTable,
  epochSeconds,
  isConditionFailure,
} from './dynamo-table.ts';

/** Windows and marks outlive their use by this long before TTL deletes them. */
const GRACE_SECONDS = 3600;

/** Fixed-window counters and confirmation marks in the table. */
export class DynamoSignupLimits implements SignupLimits {
  constructor(private readonly table: DynamoTable) {}

  async take(
    key: string,
    windowStart: number,
    windowSeconds: number,
    max: number,
  ): Promise<boolean> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.signupLimit(key, windowStart),
          UpdateExpression: 'SET #type = :type, #ttl = :ttl ADD attempts :one',
          ConditionExpression:
            'attribute_not_exists(attempts) OR attempts < :max',
          ExpressionAttributeNames: { '#type': attr.type, '#ttl': attr.ttl },
          ExpressionAttributeValues: {
            ':type': entityType('SignupLimit')[attr.type],
            ':ttl': windowStart + windowSeconds + GRACE_SECONDS,
            ':one': 1,
            ':max': max,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async claimConfirmation(
    orgId: string,
    pageId: string,
    email: string,
    now: Date,
    seconds: number,
  ): Promise<boolean> {
    const at = epochSeconds(now);
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: {
            ...keys.signupConfirmationSent(orgId, pageId, email),
            ...entityType('SignupConfirmationSent'),
            sentAt: at,
            [attr.ttl]: at + seconds + GRACE_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(PK) OR sentAt <= :since',
          ExpressionAttributeValues: { ':since': at - seconds },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async releaseConfirmation(
    orgId: string,
    pageId: string,
    email: string,
  ): Promise<void> {
    // A mark of no time at all: the next claim passes its condition.
    await this.table.client.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: {
          ...keys.signupConfirmationSent(orgId, pageId, email),
          ...entityType('SignupConfirmationSent'),
          sentAt: 0,
          [attr.ttl]: epochSeconds(new Date()) + GRACE_SECONDS,
        },
      }),
    );
  }
}
