/**
 * Driven adapter: the organization's webhook subscription summary, one
 * item (`WEBHOOKTYPES`) holding a counter per event type — how many of its
 * enabled endpoints take the type. The endpoints' store moves the counters
 * in the transaction of every endpoint write, so a type is wanted exactly
 * when its counter is above 0. Emitters read it (one GetItem) to know
 * which events anybody wants.
 */
import type * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { WebhookSubscriptionReader } from '../../webhooks/delivery-ports.ts';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../webhooks/events.ts';
import { entity } from './dynamo-entity.ts';
import { Counter, type DynamoTable } from './dynamo-table.ts';

/** The counter attribute of an event type (no dot: a dot is a map path). */
export const subscriptionCounter = (type: WebhookEventType): string =>
  type.replace('.', ':');

/** The summary item: a counter per event type of the catalogue. */
export const WebhookSubscriptionsItem = itemSchema(
  'WebhookSubscriptions',
  Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [subscriptionCounter(type), Counter]),
  ) as Record<string, typeof Counter>,
);

type Counters = v.InferOutput<(typeof WebhookSubscriptionsItem)['schema']>;

/** The types whose counter is above 0. */
const typesOf = (counters: Counters | undefined): Set<WebhookEventType> =>
  new Set(
    WEBHOOK_EVENT_TYPES.filter(
      (type) => (counters?.[subscriptionCounter(type)] ?? 0) > 0,
    ),
  );

/** Reads the summary: one eventually consistent GetItem. */
export class DynamoWebhookSubscriptions implements WebhookSubscriptionReader {
  private readonly summaries;

  constructor(table: DynamoTable) {
    this.summaries = entity(table, WebhookSubscriptionsItem);
  }

  async subscribedTypes(orgId: string): Promise<Set<WebhookEventType>> {
    return typesOf(
      await this.summaries.get(keys.webhookSubscriptions(orgId), {
        consistent: false,
      }),
    );
  }
}
