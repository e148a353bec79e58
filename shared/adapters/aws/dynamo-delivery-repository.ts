/**
 * Driven adapter: delivery events of mail other than campaigns'
 * (confirmations, test sends…), each recorded once under its message (a
 * conditional put, with a TTL) in the same transaction as the
 * organization's counter of its type (campaign mail is counted by the
 * campaign statistics alone); suppressions in a partition of their own
 * per organization, keyed by email.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import {
  type EntityType,
  entityType,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type {
  DeliveryEventRecord,
  DeliveryRepository,
  Suppression,
} from '../../delivery/ports.ts';
import type { SesEventType } from '../../delivery/ses-event.ts';
import type { ReadOptions } from '../../ports.ts';
import {
  batchGet,
  type DynamoTable,
  epochSeconds,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

/** How long an event is kept: a year and a month, for yearly reports. */
export const DELIVERY_EVENT_TTL_DAYS = 400;

const SuppressionItem = itemSchema('Suppression', {
  email: v.string(),
  reason: v.picklist(['bounce', 'complaint']),
  at: v.string(),
  messageId: v.optional(v.string()),
  source: v.optional(v.picklist(['import', 'api'])),
});

/** A counter attribute per event type: `Rendering Failure` → `renderingFailure`. */
const counterOf = (type: string): string =>
  `${type.charAt(0).toLowerCase()}${type.slice(1).replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase())}Count`;

/**
 * The transaction item that counts one event of a type in the
 * organization's delivery counters.
 */
const deliveryCount = (
  table: DynamoTable,
  orgId: string,
  type: SesEventType,
): TransactItem => ({
  Update: {
    TableName: table.tableName,
    Key: keys.deliveryStats(orgId),
    UpdateExpression: 'ADD #count :one SET #type = :type',
    ExpressionAttributeNames: {
      '#count': counterOf(type),
      '#type': '_type',
    },
    ExpressionAttributeValues: {
      ':one': 1,
      ':type': 'DeliveryStats' satisfies EntityType,
    },
  },
});

/** Delivery events and suppressions on DynamoDB. */
export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(private readonly table: DynamoTable) {}

  async recordEvent(
    orgId: string,
    event: DeliveryEventRecord,
  ): Promise<boolean> {
    const key = keys.deliveryEvent(
      orgId,
      event.messageId,
      `${event.type}#${event.recipient}#${event.at}`,
    );
    const expires = new Date(
      Date.parse(event.at) + DELIVERY_EVENT_TTL_DAYS * 86_400_000,
    );
    try {
      await transactWrite(this.table, [
        {
          Put: {
            TableName: this.table.tableName,
            Item: {
              ...key,
              ...entityType('DeliveryEvent'),
              ...event,
              ttl: epochSeconds(expires),
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        deliveryCount(this.table, orgId, event.type),
      ]);
      return true;
    } catch (error) {
      // Recorded before: a duplicate delivery of the same event.
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }

  async suppress(orgId: string, suppression: Suppression): Promise<void> {
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: {
            ...keys.suppression(orgId, suppression.email),
            ...entityType('Suppression'),
            ...suppression,
          },
          // The first reason stays: suppressed is suppressed.
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async suppressions(
    orgId: string,
    emails: readonly string[],
    options: ReadOptions = {},
  ): Promise<Map<string, Suppression>> {
    const unique = [...new Set(emails)];
    if (unique.length === 0) return new Map();
    const items = await batchGet(
      this.table,
      unique.map((email) => keys.suppression(orgId, email)),
      options,
    );
    return new Map(
      items.map((item) => {
        const suppression = parseItem(SuppressionItem, item);
        return [suppression.email, suppression];
      }),
    );
  }
}
