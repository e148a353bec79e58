/**
 * Driven adapter: what webhook delivery keeps. An event's body in a
 * partition of its own (once for all its deliveries); in each endpoint's
 * partition, its deliveries (by time-ordered id, newest first for the
 * log), its health (`HEALTH`) and the deliveries parked while it fails
 * (`PARKED#`). Events, deliveries and parked entries expire 30 days after
 * they were made (TTL). Deliveries and health are replaced whole, each on
 * the version read.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type {
  AttemptContext,
  DeliveryPage,
  WebhookDeliveryRepository,
} from '../../webhooks/delivery-ports.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.ts';
import {
  DELIVERY_RETENTION_MS,
  HEALTHY,
  type ParkedDelivery,
  type StoredWebhookEvent,
  type WebhookDelivery,
  type WebhookHealth,
} from '../../webhooks/model.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  type DynamoTable,
  deleteKeys,
  epochSeconds,
  isConditionFailure,
  queryOnce,
} from './dynamo-table.ts';
import {
  WebhookEndpointItem,
  WebhookHealthItem,
} from './dynamo-webhook-items.ts';

const EventType = v.picklist(WEBHOOK_EVENT_TYPES);

const WebhookEventItem = itemSchema('WebhookEvent', {
  id: v.string(),
  type: EventType,
  occurredAt: v.string(),
  body: v.string(),
});

const WebhookDeliveryItem = itemSchema('WebhookDelivery', {
  id: v.string(),
  webhookId: v.string(),
  eventId: v.string(),
  eventType: EventType,
  occurredAt: v.string(),
  createdAt: v.string(),
  status: v.picklist(['pending', 'succeeded', 'failed']),
  nextAttempt: v.number(),
  nextAttemptAt: v.optional(v.string()),
  parked: v.optional(v.boolean()),
  reason: v.optional(v.string()),
  attempts: v.array(
    v.object({
      number: v.number(),
      at: v.string(),
      statusCode: v.optional(v.number()),
      latencyMs: v.number(),
      error: v.optional(v.string()),
      responseBody: v.optional(v.string()),
      manual: v.boolean(),
    }),
  ),
  lease: v.optional(v.object({ token: v.string(), until: v.string() })),
  redelivery: v.optional(v.string()),
  version: v.number(),
});

const WebhookParkedItem = itemSchema('WebhookParked', {
  deliveryId: v.string(),
  eventId: v.string(),
  attempt: v.number(),
  parkedAt: v.string(),
});

/** The TTL of an item made at `at`: 30 days on. */
const expiryOf = (at: string) => ({
  ttl: epochSeconds(new Date(Date.parse(at) + DELIVERY_RETENTION_MS)),
});

/** Runs a conditional write; false when its condition failed. */
const conditional = async (write: () => Promise<void>): Promise<boolean> => {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

/** Events, deliveries, health and parked deliveries. */
export class DynamoWebhookDeliveryRepository
  implements WebhookDeliveryRepository
{
  private readonly events;
  private readonly deliveries;
  private readonly healths;
  private readonly parkedEntries;
  private readonly endpoints;

  constructor(private readonly table: DynamoTable) {
    this.endpoints = entity(table, WebhookEndpointItem);
    this.events = entity(table, WebhookEventItem);
    this.deliveries = entity(table, WebhookDeliveryItem);
    this.healths = entity(table, WebhookHealthItem);
    this.parkedEntries = entity(table, WebhookParkedItem);
  }

  async putEvent(orgId: string, event: StoredWebhookEvent): Promise<void> {
    // The same event is the same body: written again, nothing changes.
    await this.events.put(keys.webhookEvent(orgId, event.id), event, {
      housekeeping: expiryOf(event.occurredAt),
    });
  }

  getEvent(
    orgId: string,
    eventId: string,
  ): Promise<StoredWebhookEvent | undefined> {
    return this.events.get(keys.webhookEvent(orgId, eventId), {
      consistent: true,
    });
  }

  create(orgId: string, delivery: WebhookDelivery): Promise<boolean> {
    return conditional(() =>
      this.deliveries.put(
        keys.webhookDelivery(orgId, delivery.webhookId, delivery.id),
        delivery,
        { if: (w) => w.missing(), housekeeping: expiryOf(delivery.createdAt) },
      ),
    );
  }

  get(
    orgId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<WebhookDelivery | undefined> {
    return this.deliveries.get(
      keys.webhookDelivery(orgId, webhookId, deliveryId),
      { consistent: true },
    );
  }

  async page(
    orgId: string,
    webhookId: string,
    { limit, after }: { limit: number; after?: string },
  ): Promise<DeliveryPage> {
    // Eventually consistent: half the read units; a delivery of the last
    // second shows on the next read.
    const found = await queryOnce(
      this.table,
      keys.webhookDeliveries(orgId, webhookId),
      {
        descending: true,
        limit,
        ...(after
          ? { startKey: keys.webhookDelivery(orgId, webhookId, after) }
          : {}),
      },
    );
    return {
      items: found.items.map((item) => this.deliveries.parse(item)),
      more: found.lastKey !== undefined,
    };
  }

  update(
    orgId: string,
    before: WebhookDelivery,
    after: WebhookDelivery,
  ): Promise<boolean> {
    return conditional(() =>
      this.deliveries.put(
        keys.webhookDelivery(orgId, after.webhookId, after.id),
        after,
        {
          if: (w) => w.eq('version', before.version),
          housekeeping: expiryOf(after.createdAt),
        },
      ),
    );
  }

  async forAttempt(
    orgId: string,
    webhookId: string,
    deliveryId: string,
    eventId?: string,
  ): Promise<AttemptContext> {
    const wanted = {
      delivery: keys.webhookDelivery(orgId, webhookId, deliveryId),
      endpoint: keys.webhook(orgId, webhookId),
      health: keys.webhookHealth(orgId, webhookId),
      ...(eventId ? { event: keys.webhookEvent(orgId, eventId) } : {}),
    };
    const found = new Map(
      (await batchGet(this.table, Object.values(wanted))).map((item) => [
        `${item.PK}\n${item.SK}`,
        item,
      ]),
    );
    const itemAt = (key: { PK: string; SK: string } | undefined) =>
      key ? found.get(`${key.PK}\n${key.SK}`) : undefined;
    const delivery = itemAt(wanted.delivery);
    const endpoint = itemAt(wanted.endpoint);
    const health = itemAt(wanted.health);
    const event = itemAt(wanted.event);
    return {
      ...(delivery ? { delivery: this.deliveries.parse(delivery) } : {}),
      ...(endpoint ? { endpoint: this.endpoints.parse(endpoint) } : {}),
      health: health ? this.healths.parse(health) : HEALTHY,
      ...(event ? { event: this.events.parse(event) } : {}),
    };
  }

  async health(orgId: string, webhookId: string): Promise<WebhookHealth> {
    return (
      (await this.healths.get(keys.webhookHealth(orgId, webhookId), {
        consistent: true,
      })) ?? HEALTHY
    );
  }

  updateHealth(
    orgId: string,
    webhookId: string,
    before: WebhookHealth,
    after: WebhookHealth,
  ): Promise<boolean> {
    // It expires a month after its last change: one an attempt under way
    // writes after its endpoint was deleted goes too, and a health not
    // written for so long is a healthy one (a failing endpoint's is
    // written at least every ten hours, by its probe).
    return conditional(() =>
      this.healths.put(keys.webhookHealth(orgId, webhookId), after, {
        if: (w) =>
          before.version === 0 ? w.missing() : w.eq('version', before.version),
        housekeeping: after.updatedAt ? expiryOf(after.updatedAt) : {},
      }),
    );
  }

  async park(
    orgId: string,
    webhookId: string,
    entry: ParkedDelivery,
  ): Promise<void> {
    await this.parkedEntries.put(
      keys.webhookParked(orgId, webhookId, entry.deliveryId),
      entry,
      { housekeeping: expiryOf(entry.parkedAt) },
    );
  }

  async parked(
    orgId: string,
    webhookId: string,
    limit: number,
  ): Promise<ParkedDelivery[]> {
    const found = await queryOnce(
      this.table,
      keys.webhookParkedOf(orgId, webhookId),
      { limit, consistent: true },
    );
    return found.items.map((item) => this.parkedEntries.parse(item));
  }

  async unpark(
    orgId: string,
    webhookId: string,
    deliveryIds: readonly string[],
  ): Promise<void> {
    await deleteKeys(
      this.table,
      deliveryIds.map((id) => keys.webhookParked(orgId, webhookId, id)),
    );
  }
}
