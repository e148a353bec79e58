/**
 * Item schemas of webhook delivery shared by its two stores: the endpoint
 * (the endpoints' store writes it; an attempt reads it with its delivery)
 * and its health (the deliveries' store writes it; the endpoints' store
 * deletes it with its endpoint).
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.ts';

/** A webhook endpoint. */
export const WebhookEndpointItem = itemSchema('WebhookEndpoint', {
  id: v.string(),
  url: v.string(),
  description: v.optional(v.string()),
  events: v.array(v.picklist(WEBHOOK_EVENT_TYPES)),
  enabled: v.boolean(),
  disabledReason: v.optional(v.string()),
  disabledAt: v.optional(v.string()),
  secrets: v.array(
    v.object({
      value: v.string(),
      createdAt: v.string(),
      expiresAt: v.optional(v.string()),
    }),
  ),
  createdAt: v.string(),
  updatedAt: v.string(),
  version: v.number(),
});

/** An endpoint's health. */
export const WebhookHealthItem = itemSchema('WebhookHealth', {
  failures: v.number(),
  failingSince: v.optional(v.string()),
  lastError: v.optional(v.string()),
  probe: v.optional(v.object({ deliveryId: v.string(), dueAt: v.string() })),
  slow: v.optional(v.boolean()),
  updatedAt: v.optional(v.string()),
  version: v.number(),
});
