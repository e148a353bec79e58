/**
 * Driven adapter: delivery events of mail other than campaigns'
 * (confirmations, test sends…), each recorded once under its message (a
 * conditional put, with a TTL) in the same transaction as the
 * organization's counter of its type (campaign mail is counted by the
 * campaign statistics alone); suppressions in a partition of their own
 * per organization, keyed by email.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type {
  DeliveryEventRecord,
  DeliveryRepository,
  Suppression,
} from '../../delivery/ports.ts';
import {
  SES_EVENT_TYPES,
  type SesEventType,
} from '../../delivery/ses-event.ts';
import type { ReadOptions } from '../../ports.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  epochSeconds,
  failedConditions,
  isConditionFailure,
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

const DeliveryEventItem = itemSchema('DeliveryEvent', {
  messageId: v.string(),
  type: v.picklist(SES_EVENT_TYPES),
  recipient: v.string(),
  at: v.string(),
  kind: v.optional(v.string()),
  contactId: v.optional(v.string()),
  campaignId: v.optional(v.string()),
  bounceType: v.optional(v.string()),
});

/** A counter attribute per event type: `Rendering Failure` → `renderingFailure`. */
const counterOf = (type: SesEventType): string =>
  `${type.charAt(0).toLowerCase()}${type.slice(1).replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase())}Count`;

/** The organization's delivery counters, one per event type. */
const DeliveryStatsItem = itemSchema(
  'DeliveryStats',
  Object.fromEntries(SES_EVENT_TYPES.map((type) => [counterOf(type), Counter])),
);

/** Delivery events and suppressions on DynamoDB. */
export class DynamoDeliveryRepository implements DeliveryRepository {
  private readonly events;
  private readonly counters;
  private readonly suppressed;

  constructor(private readonly table: DynamoTable) {
    this.events = entity(table, DeliveryEventItem);
    this.counters = entity(table, DeliveryStatsItem);
    this.suppressed = entity(table, SuppressionItem);
  }

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
        this.events.putTx(key, event, {
          if: (w) => w.missing(),
          housekeeping: { ttl: epochSeconds(expires) },
        }),
        // Counted in the organization's counter of its type.
        this.counters.updateTx(keys.deliveryStats(orgId), {
          add: { [counterOf(event.type)]: 1 },
        }),
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
      await this.suppressed.put(
        keys.suppression(orgId, suppression.email),
        suppression,
        // The first reason stays: suppressed is suppressed.
        { if: (w) => w.missing() },
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
        const suppression = this.suppressed.parse(item);
        return [suppression.email, suppression];
      }),
    );
  }
}
