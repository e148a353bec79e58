/**
 * Routes of the `webhooks` group (issue 32): the organization's webhook
 * endpoints — registered, listed, read, changed, disabled, deleted, their
 * secret rolled — and each one's delivery log, a redelivery and a test
 * call.
 */

import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  queue,
  table,
  webhookCalls,
} from '../../shared/bindings.ts';
import {
  accepted,
  created,
  ok,
  paginated,
} from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';
import {
  DeliveryDetailView,
  DeliveryQuery,
  DeliveryView,
  getDelivery,
  listDeliveries,
  requestRedelivery,
  TestWebhookBody,
  testWebhook,
} from '../../shared/webhooks/deliveries.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rollSecret,
  updateWebhook,
} from '../../shared/webhooks/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../../shared/webhooks/events.ts';
import { MAX_ATTEMPTS, MAX_WEBHOOKS } from '../../shared/webhooks/model.ts';
import { WEBHOOK_DELIVERIES_QUEUE } from '../../shared/webhooks/queues.ts';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeletedWebhook,
  RolledSecret,
  UpdateWebhookBody,
  WebhookView,
} from '../../shared/webhooks/webhook.schema.ts';

/** What the `webhooks` group's function may use. */
export const webhookBindings = [
  table({
    stores: [...PIPELINE_STORES, 'webhooks', 'webhookDeliveries'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
  // Redeliveries and test calls go to the deliveries consumer.
  queue(WEBHOOK_DELIVERIES_QUEUE),
  // The URL rules of this stack (https only on AWS).
  webhookCalls,
] as const;

/** The deps of the `webhooks` group's function. */
export type WebhookDeps = DepsOf<typeof webhookBindings>;

const route = routeFor<WebhookDeps>({ scope: 'webhooks' });

const WebhookParams = idParams('webhookId');
const DeliveryParams = idParams('webhookId', 'deliveryId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What an endpoint is (our design: the spec has no webhooks). */
const ENDPOINT = `An endpoint is a URL of yours that receives the organization's events as they happen: the event types it takes (${WEBHOOK_EVENT_TYPES.length} in the catalogue, each described under \`eventType\`), a description, and whether it is enabled. Each delivery is a JSON POST signed per Standard Webhooks (headers \`webhook-id\` — the event's id, the same on every attempt —, \`webhook-timestamp\`, \`webhook-signature\`), so any Standard Webhooks library verifies it with the endpoint's secret. A 2xx answer within 5 s is a success; anything else is retried with growing waits (5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h: ${MAX_ATTEMPTS} attempts over 77 hours). An endpoint whose every attempt failed for 5 days is disabled, with its reason. An organization registers at most ${MAX_WEBHOOKS} endpoints. Another organization's endpoint answers 404 \`webhook.notFound\`.`;

/** How the log is kept. */
const LOG =
  'The log of an endpoint: one delivery per event it took, its attempts (status, latency, error, the start of the answer), and when the next is due. Deliveries are kept 30 days. While the endpoint is failing, one delivery’s retries test it and the others wait (`reason` says so, `nextAttemptAt` is when it is tried next), so that a dead endpoint costs one attempt per retry, not one per event.';

/** Every route of the webhooks group. */
export const webhookRoutes = [
  route({
    method: 'POST',
    path: '/webhooks',
    role: 'admin',
    summary: 'Register an endpoint; its signing secret is shown this once',
    description: md(
      ENDPOINT,
      'The URL must be https (the local stack takes http too), hold no user name or password, and reach a public address: a host written as a private, loopback, link-local or metadata address is refused here (400 naming `url`), and a host name that resolves to one is refused on every attempt. The answer holds `secret`, shown this once: keep it to verify deliveries (roll it if it leaks).',
      `Past ${MAX_WEBHOOKS} endpoints: 400 \`webhook.limitReached\`. A new endpoint is seen by the emitters within 5 seconds.`,
    ),
    body: CreateWebhookBody,
    responses: { 201: json(CreatedWebhook, 'The endpoint, with its secret') },
    errors: ['webhook.limitReached', 'write.contended'],
    handle: async (deps, { caller, body }) =>
      created(await createWebhook(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/webhooks',
    role: 'member',
    summary: "The organization's webhook endpoints, newest first",
    description: md(ENDPOINT, 'Never the secrets.'),
    query: PageQuery,
    responses: { 200: page(WebhookView, 'A page of endpoints') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listWebhooks(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/webhooks/{webhookId}',
    role: 'member',
    summary:
      'One webhook endpoint: whether it is failing, or why it is disabled',
    description: md(ENDPOINT, 'Never the secret.'),
    params: WebhookParams,
    responses: { 200: json(WebhookView, 'The endpoint') },
    errors: ['webhook.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getWebhook(deps, caller.orgId, params.webhookId)),
  }),
  route({
    method: 'PATCH',
    path: '/webhooks/{webhookId}',
    role: 'admin',
    summary:
      'Change an endpoint’s URL, event types or description; disable or enable it',
    description: md(
      'Changes `url` (checked as at registration), `events`, `description` (null clears it) or `enabled`. `enabled: false` stops its deliveries (those pending fail at their next attempt, those waiting for it to recover at once); `enabled: true` starts them again, clears `disabledReason` and forgets its failures. Emitters see the change within 5 seconds.',
      ENDPOINT,
    ),
    params: WebhookParams,
    body: UpdateWebhookBody,
    responses: { 200: json(WebhookView, 'The endpoint, changed') },
    errors: ['webhook.notFound', 'webhook.changed', 'write.contended'],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateWebhook(deps, caller.orgId, params.webhookId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/webhooks/{webhookId}',
    role: 'admin',
    summary: 'Delete an endpoint; its pending deliveries stop',
    description: md(
      'Deletes the endpoint. Its pending deliveries are not attempted again, and its log expires with its deliveries (30 days), out of reach.',
      ENDPOINT,
    ),
    params: WebhookParams,
    responses: { 200: json(DeletedWebhook, 'The endpoint removed') },
    errors: ['webhook.notFound', 'webhook.changed', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteWebhook(deps, caller.orgId, params.webhookId)),
  }),
  route({
    method: 'POST',
    path: '/webhooks/{webhookId}/secret/roll',
    role: 'admin',
    summary:
      'A new signing secret, shown once; the old one signs beside it for 24 hours',
    description: md(
      'Makes a new secret and answers it, this once. For 24 hours the secret before keeps signing beside it: every delivery carries both signatures in `webhook-signature`, space-separated, so a receiver holding either verifies while it switches. A roll within those 24 hours ends the older secret’s grace at once (two sign at most).',
      ENDPOINT,
    ),
    params: WebhookParams,
    responses: { 200: json(RolledSecret, 'The new secret') },
    errors: ['webhook.notFound', 'webhook.changed', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await rollSecret(deps, caller.orgId, params.webhookId)),
  }),
  route({
    method: 'GET',
    path: '/webhooks/{webhookId}/deliveries',
    role: 'member',
    summary: "An endpoint's deliveries, newest first, with their attempts",
    description: md(
      LOG,
      'Walked by cursor (`limit` 1 to 100, default 20): pass `pagination.nextCursor` as `cursor`, with the same `limit` (another answers 400 naming `cursor`). No total is counted: `total` counts the deliveries up to this page and `totalExact` is true on the last one, where `nextCursor` is null. A full page may be followed by an empty last one.',
    ),
    params: WebhookParams,
    query: DeliveryQuery,
    responses: {
      200: page(DeliveryView, 'A page of deliveries, newest first'),
    },
    errors: ['webhook.notFound'],
    handle: async (deps, { caller, params, query }) =>
      paginated(
        await listDeliveries(deps, caller.orgId, params.webhookId, query),
        { page: 1, limit: query.limit },
      ),
  }),
  route({
    method: 'GET',
    path: '/webhooks/{webhookId}/deliveries/{deliveryId}',
    role: 'member',
    summary:
      'One delivery: its attempts, what the endpoint answered, its payload',
    description: md(
      LOG,
      'With the body every attempt sends (`payload`) and the start of each answer (`responseBody`).',
    ),
    params: DeliveryParams,
    responses: { 200: json(DeliveryDetailView, 'The delivery') },
    errors: ['webhook.notFound', 'webhookDelivery.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(
        await getDelivery(
          deps,
          caller.orgId,
          params.webhookId,
          params.deliveryId,
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
    role: 'admin',
    summary: 'Send a delivery again now, with the same webhook-id (202)',
    description: md(
      'One more attempt, now, whatever the delivery’s state (one that succeeded may be sent again): the same `webhook-id` and body, signed afresh. It goes out even while the endpoint is failing. Its success ends a pending or failed delivery; its failure leaves the delivery as it was. Answered 202 before the attempt: read the delivery for its outcome.',
      'A disabled endpoint is refused: 409 `webhook.disabled`.',
    ),
    params: DeliveryParams,
    responses: {
      202: json(DeliveryView, 'The delivery, its attempt on its way'),
    },
    errors: [
      'webhook.notFound',
      'webhookDelivery.notFound',
      'webhook.disabled',
      'write.contended',
    ],
    handle: async (deps, { caller, params }) =>
      accepted(
        await requestRedelivery(
          deps,
          caller.orgId,
          params.webhookId,
          params.deliveryId,
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/webhooks/{webhookId}/test',
    role: 'admin',
    summary: 'Send a sample event to the endpoint (202): the delivery',
    description: md(
      'Sends a sample event of `type` (default: the first type the endpoint takes; any type may be tried) to this endpoint only, through the pipeline of real events: stored, signed, attempted, retried and logged. Its data is shaped like the type’s real data, with made-up ids, and says `test: true`. It goes out even while the endpoint is failing. Answered 202 before the attempt: read the delivery for its outcome.',
      'A disabled endpoint is refused: 409 `webhook.disabled`.',
    ),
    params: WebhookParams,
    body: TestWebhookBody,
    responses: {
      202: json(DeliveryView, 'The delivery, its attempt on its way'),
    },
    errors: ['webhook.notFound', 'webhook.disabled'],
    handle: async (deps, { caller, params, body }) =>
      accepted(await testWebhook(deps, caller.orgId, params.webhookId, body)),
  }),
];
