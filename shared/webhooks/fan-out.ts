/**
 * The fan-out: an event becomes one delivery per enabled endpoint of its
 * organization that takes its type, each with its first attempt queued.
 * Idempotent: the event's body is written as it is; a delivery's id comes
 * from its endpoint and its event, so a repeated event writes nothing new
 * (a conditional put), and only queues again the first attempt of a
 * delivery that never made one — what a crash between the write and the
 * send would otherwise lose.
 */
import { createHash } from 'node:crypto';
import type { BatchScope } from '../batch-scope.ts';
import { logger } from '../observability.ts';
import type { QueueMessage } from '../ports.ts';
import type { FanOutDeps } from './delivery-ports.ts';
import { payloadOf, type WebhookEvent } from './events.ts';
import {
  MAX_PAYLOAD_BYTES,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './model.ts';
import type { AttemptMessage } from './queues.ts';
import { sendAll } from './send-all.ts';

/**
 * The id of the delivery of an event to an endpoint: a UUID of version 7's
 * layout, its time the event's instant (so the log sorts by it) and its
 * other bits a hash of the endpoint and the event — the same pair, the
 * same id.
 */
export const deliveryIdOf = (
  webhookId: string,
  eventId: string,
  occurredAt: string,
): string => {
  const hash = createHash('sha256').update(`${webhookId}\n${eventId}`).digest();
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Math.max(0, Date.parse(occurredAt)) % 2 ** 48, 0, 6);
  hash.copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** A new delivery of an event to an endpoint: pending, its first attempt due. */
export const newDelivery = (
  endpoint: Pick<WebhookEndpoint, 'id'>,
  event: Pick<WebhookEvent, 'id' | 'type' | 'occurredAt'>,
  now: Date,
): WebhookDelivery => ({
  id: deliveryIdOf(endpoint.id, event.id, event.occurredAt),
  webhookId: endpoint.id,
  eventId: event.id,
  eventType: event.type,
  occurredAt: event.occurredAt,
  createdAt: now.toISOString(),
  status: 'pending',
  nextAttempt: 1,
  nextAttemptAt: now.toISOString(),
  attempts: [],
  version: 1,
});

/** The first attempt's message of a delivery. */
export const firstAttemptOf = (
  orgId: string,
  delivery: WebhookDelivery,
  options: { manual?: boolean } = {},
): AttemptMessage => ({
  kind: 'attempt',
  orgId,
  webhookId: delivery.webhookId,
  deliveryId: delivery.id,
  eventId: delivery.eventId,
  attempt: 1,
  ...(options.manual ? { manual: true } : {}),
});

/**
 * Stores the event once for all its deliveries and makes a delivery per
 * endpoint that takes it (enabled, subscribed), each with its first
 * attempt queued. Returns the deliveries made or found. In a batch, the
 * events of one organization read its endpoints once, and the first
 * attempts of all go out together once every event was handled.
 */
export const fanOut = async (
  deps: FanOutDeps,
  event: WebhookEvent,
  batch?: BatchScope,
): Promise<WebhookDelivery[]> => {
  // 1. Who takes it: read now, strongly consistent (the emitter's summary
  // may be seconds old).
  const all = batch
    ? batch.share(
        `endpoints#${event.orgId}`,
        () => deps.webhooks.all(event.orgId),
        async () => {},
      )
    : deps.webhooks.all(event.orgId);
  const endpoints = (await all).filter(
    (endpoint) => endpoint.enabled && endpoint.events.includes(event.type),
  );
  if (endpoints.length === 0) return [];
  // 2. Its body, the exact bytes every attempt signs.
  const body = JSON.stringify(payloadOf(event));
  if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) {
    logger.error('A webhook event is too large to deliver: dropped', {
      orgId: event.orgId,
      eventId: event.id,
      type: event.type,
      bytes: Buffer.byteLength(body),
    });
    return [];
  }
  await deps.webhookDeliveries.putEvent(event.orgId, {
    id: event.id,
    type: event.type,
    occurredAt: event.occurredAt,
    body,
  });
  // 3. A delivery per endpoint, written if absent; a first attempt queued
  // for each that has made none.
  const now = deps.clock.now();
  const deliveries = await Promise.all(
    endpoints.map(async (endpoint) => {
      const delivery = newDelivery(endpoint, event, now);
      if (await deps.webhookDeliveries.create(event.orgId, delivery)) {
        return { delivery, queue: true };
      }
      const found = await deps.webhookDeliveries.get(
        event.orgId,
        endpoint.id,
        delivery.id,
      );
      const unattempted =
        found?.status === 'pending' &&
        found.attempts.length === 0 &&
        found.nextAttempt === 1 &&
        !found.parked;
      return { delivery: found ?? delivery, queue: unattempted };
    }),
  );
  const firstAttempts = deliveries
    .filter(({ queue }) => queue)
    .map(({ delivery }) => ({
      message: firstAttemptOf(event.orgId, delivery),
      options: { group: event.orgId },
    }));
  if (batch) {
    // Sent once the batch is handled; if that fails, every event of the
    // batch comes again and queues what is still unattempted.
    batch
      .share(
        'firstAttempts',
        (): QueueMessage[] => [],
        (messages) => sendAll(deps.queues.webhookDeliveries, messages),
      )
      .push(...firstAttempts);
  } else {
    await sendAll(deps.queues.webhookDeliveries, firstAttempts);
  }
  return deliveries.map(({ delivery }) => delivery);
};
