/**
 * The delivery log of an endpoint: its deliveries newest first (walked by
 * cursor), one delivery with its payload, a redelivery asked for, and the
 * test call that sends a sample event through the same pipeline. Agnostic
 * to how it is called and where data is stored.
 *
 * The cursor is opaque to clients: base64url of the last delivery shown,
 * the next page's number, the deliveries before it, and the listing it
 * belongs to (endpoint and limit), so a cursor of another listing is
 * refused rather than silently read.
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Page } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import { MAX_PAGE_SIZE, Timestamp, ViewId } from '../validation.ts';
import type { WebhookDeliveryLogDeps } from './delivery-ports.ts';
import { requireWebhook } from './endpoints.ts';
import {
  payloadOf,
  type WebhookEvent,
  WebhookEventTypeSchema,
  WebhookPayload,
  webhookEventId,
} from './events.ts';
import { firstAttemptOf, newDelivery } from './fan-out.ts';
import type { DeliveryAttempt, WebhookDelivery } from './model.ts';
import type { RedeliverMessage } from './queues.ts';
import { sampleDataOf } from './samples.ts';

const positiveInt = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'limit must be a positive integer'),
  v.transform(Number),
  v.minValue(1, 'limit must be at least 1'),
  v.maxValue(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`),
);

/** `?limit=&cursor=` of GET /webhooks/{webhookId}/deliveries. */
export const DeliveryQuery = v.object({
  limit: v.optional(positiveInt, '20'),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1024, 'is not a cursor this API gave'),
    ),
  ),
});
export type DeliveryQueryInput = v.InferOutput<typeof DeliveryQuery>;

/** Body of POST /webhooks/{webhookId}/test (optional). */
export const TestWebhookBody = v.optional(
  v.object({
    type: v.optional(
      v.pipe(
        WebhookEventTypeSchema,
        v.description(
          'The type of the sample event (default: the first the endpoint takes); any type may be tried',
        ),
      ),
    ),
  }),
  {},
);
export type TestWebhookInput = v.InferOutput<typeof TestWebhookBody>;

const attemptEntries = {
  number: v.pipe(
    v.number(),
    v.description('1 for the first; redeliveries count on'),
  ),
  at: Timestamp,
  statusCode: v.pipe(
    v.nullable(v.number()),
    v.description('The status the endpoint answered; null when none came'),
  ),
  latencyMs: v.pipe(
    v.number(),
    v.description('From the start of the attempt to the answer (or the error)'),
  ),
  error: v.pipe(
    v.nullable(v.string()),
    v.description(
      'Why it failed: a status outside 2xx (a redirect is never followed), a timeout (5 s for the whole attempt), a refused address, a connection error; null on success',
    ),
  ),
  manual: v.pipe(
    v.boolean(),
    v.description('A redelivery or a test call, not the retry schedule'),
  ),
};

const AttemptView = v.pipe(v.object(attemptEntries), v.title('WebhookAttempt'));

const AttemptDetailView = v.pipe(
  v.object({
    ...attemptEntries,
    responseBody: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The start of what the endpoint answered (at most 1,000 characters of the first 4 KB read)',
      ),
    ),
  }),
  v.title('WebhookAttemptDetail'),
);

const deliveryEntries = {
  id: ViewId,
  eventId: v.pipe(
    v.string(),
    v.description('The event, sent as `webhook-id` on every attempt'),
  ),
  eventType: WebhookEventTypeSchema,
  status: v.pipe(
    v.picklist(['pending', 'succeeded', 'failed']),
    v.description(
      '`pending`: an attempt is to come; `succeeded`: the endpoint answered 2xx; `failed`: it gave up (13 attempts over 77 hours) or could not be sent (its endpoint disabled)',
    ),
  ),
  occurredAt: v.pipe(Timestamp, v.description('When the event happened')),
  createdAt: Timestamp,
  nextAttemptAt: v.pipe(
    v.nullable(Timestamp),
    v.description(
      'When the next attempt is due (null once over); while its endpoint is failing, when the endpoint is tried next',
    ),
  ),
  reason: v.pipe(
    v.nullable(v.string()),
    v.description(
      'Why it waits without attempts of its own (its endpoint is failing), or why it stopped; null otherwise',
    ),
  ),
};

/** A delivery in the log. */
export const DeliveryView = v.pipe(
  v.object({ ...deliveryEntries, attempts: v.array(AttemptView) }),
  v.title('WebhookDelivery'),
);
export type DeliveryView = v.InferOutput<typeof DeliveryView>;

/** One delivery, its attempts' answers and the payload it sends. */
export const DeliveryDetailView = v.pipe(
  v.object({
    ...deliveryEntries,
    attempts: v.array(AttemptDetailView),
    payload: v.pipe(
      v.nullable(WebhookPayload),
      v.description(
        'The body every attempt sends; null once no longer kept (30 days)',
      ),
    ),
  }),
  v.title('WebhookDeliveryDetail'),
);
export type DeliveryDetailView = v.InferOutput<typeof DeliveryDetailView>;

const attemptView = (attempt: DeliveryAttempt) => ({
  number: attempt.number,
  at: attempt.at,
  statusCode: attempt.statusCode ?? null,
  latencyMs: attempt.latencyMs,
  error: attempt.error ?? null,
  manual: attempt.manual,
});

const baseView = (delivery: WebhookDelivery) => ({
  id: delivery.id,
  eventId: delivery.eventId,
  eventType: delivery.eventType,
  status: delivery.status,
  occurredAt: delivery.occurredAt,
  createdAt: delivery.createdAt,
  nextAttemptAt:
    delivery.status === 'pending' ? (delivery.nextAttemptAt ?? null) : null,
  reason: delivery.reason ?? null,
});

/** The API view of a delivery in the log. */
export const deliveryView = (delivery: WebhookDelivery): DeliveryView => ({
  ...baseView(delivery),
  attempts: delivery.attempts.map(attemptView),
});

const Decoded = v.object({
  a: ViewId,
  p: v.pipe(v.number(), v.safeInteger(), v.minValue(2)),
  b: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  l: v.string(),
});

const listingOf = (webhookId: string, limit: number) =>
  JSON.stringify([webhookId, limit]);

const invalidCursor = (message: string) =>
  new ValidationError(`Invalid request: cursor: ${message}`, [
    { field: 'cursor', message },
  ]);

const decodeCursor = (webhookId: string, limit: number, cursor: string) => {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('is not a cursor this API gave');
  }
  const parsed = v.safeParse(Decoded, decoded);
  if (!parsed.success) throw invalidCursor('is not a cursor this API gave');
  if (parsed.output.l !== listingOf(webhookId, limit)) {
    throw invalidCursor(
      'belongs to another listing: keep the endpoint and limit of the call that gave it',
    );
  }
  return parsed.output;
};

/**
 * A page of an endpoint's deliveries, newest first. No total is counted
 * (deliveries expire): `total` counts those up to this page, exact on the
 * last one.
 */
export const listDeliveries = async (
  deps: Pick<WebhookDeliveryLogDeps, 'webhooks' | 'webhookDeliveries'>,
  orgId: string,
  webhookId: string,
  query: DeliveryQueryInput,
): Promise<Page<DeliveryView>> => {
  const position = query.cursor
    ? decodeCursor(webhookId, query.limit, query.cursor)
    : undefined;
  const [, found] = await Promise.all([
    requireWebhook(deps, orgId, webhookId),
    deps.webhookDeliveries.page(orgId, webhookId, {
      limit: query.limit,
      ...(position ? { after: position.a } : {}),
    }),
  ]);
  const number = position?.p ?? 1;
  const total = (position?.b ?? 0) + found.items.length;
  const last = found.items.at(-1);
  return {
    items: found.items.map(deliveryView),
    total,
    page: number,
    nextCursor:
      found.more && last
        ? Buffer.from(
            JSON.stringify({
              a: last.id,
              p: number + 1,
              b: total,
              l: listingOf(webhookId, query.limit),
            }),
          ).toString('base64url')
        : null,
    totalExact: !found.more,
  };
};

/** The delivery, or 404 for a missing one (another endpoint's included). */
const requireDelivery = async (
  deps: Pick<WebhookDeliveryLogDeps, 'webhookDeliveries'>,
  orgId: string,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDelivery> => {
  const delivery = await deps.webhookDeliveries.get(
    orgId,
    webhookId,
    deliveryId,
  );
  if (!delivery) {
    throw new NotFoundError(
      'webhookDelivery.notFound',
      `No delivery ${deliveryId} of the webhook ${webhookId}`,
    );
  }
  return delivery;
};

/** One delivery, with its attempts' answers and its payload. */
export const getDelivery = async (
  deps: Pick<WebhookDeliveryLogDeps, 'webhooks' | 'webhookDeliveries'>,
  orgId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryDetailView> => {
  await requireWebhook(deps, orgId, webhookId);
  const delivery = await requireDelivery(deps, orgId, webhookId, deliveryId);
  const event = await deps.webhookDeliveries.getEvent(orgId, delivery.eventId);
  const payload = event
    ? v.safeParse(WebhookPayload, JSON.parse(event.body))
    : undefined;
  return {
    ...baseView(delivery),
    attempts: delivery.attempts.map((attempt) => ({
      ...attemptView(attempt),
      responseBody: attempt.responseBody ?? null,
    })),
    payload: payload?.success ? payload.output : null,
  };
};

/** An endpoint that takes deliveries, or 409 `webhook.disabled`. */
const requireEnabled = async (
  deps: Pick<WebhookDeliveryLogDeps, 'webhooks'>,
  orgId: string,
  webhookId: string,
) => {
  const endpoint = await requireWebhook(deps, orgId, webhookId);
  if (!endpoint.enabled) {
    throw new ConflictError(
      'webhook.disabled',
      `The webhook ${webhookId} is disabled: enable it first (PATCH enabled: true)`,
    );
  }
  return endpoint;
};

/**
 * Asks for one more attempt of a delivery, now, with the same
 * `webhook-id`, whatever its state (a delivery that succeeded may be sent
 * again). 202: the attempt is made by the deliveries consumer.
 */
export const requestRedelivery = async (
  deps: WebhookDeliveryLogDeps,
  orgId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryView> => {
  await requireEnabled(deps, orgId, webhookId);
  const token = deps.ids.id();
  const delivery = await retryOnConflict(async (retryable) => {
    const before = await requireDelivery(deps, orgId, webhookId, deliveryId);
    const after = { ...before, redelivery: token, version: before.version + 1 };
    if (!(await deps.webhookDeliveries.update(orgId, before, after))) {
      retryable(
        new ConflictError(
          'write.contended',
          'The delivery changed while the request ran; retry',
        ),
      );
    }
    return after;
  });
  const message: RedeliverMessage = {
    kind: 'redeliver',
    orgId,
    webhookId,
    deliveryId,
    eventId: delivery.eventId,
    token,
  };
  await deps.queues.webhookDeliveries.send(message, { group: orgId });
  return deliveryView(delivery);
};

/**
 * Sends a sample event of a type to one endpoint, through the pipeline of
 * real ones (stored, delivered, signed, retried, logged). 202: the
 * delivery, its first attempt on its way.
 */
export const testWebhook = async (
  deps: WebhookDeliveryLogDeps,
  orgId: string,
  webhookId: string,
  input: TestWebhookInput,
): Promise<DeliveryView> => {
  const endpoint = await requireEnabled(deps, orgId, webhookId);
  const type = input.type ?? endpoint.events[0] ?? 'contact.created';
  const now = deps.clock.now();
  const occurredAt = now.toISOString();
  const event: WebhookEvent = {
    id: webhookEventId(orgId, type, `test:${deps.ids.id()}`),
    type,
    orgId,
    occurredAt,
    data: sampleDataOf(type, occurredAt),
    test: true,
  };
  await deps.webhookDeliveries.putEvent(orgId, {
    id: event.id,
    type,
    occurredAt,
    body: JSON.stringify(payloadOf(event)),
  });
  const delivery = newDelivery(endpoint, event, now);
  await deps.webhookDeliveries.create(orgId, delivery);
  // Asked for: it goes out even while the endpoint is failing.
  await deps.queues.webhookDeliveries.send(
    firstAttemptOf(orgId, delivery, { manual: true }),
    { group: orgId },
  );
  return deliveryView(delivery);
};
