/**
 * Application logic of webhook endpoints: registering, reading, changing,
 * disabling, deleting them and rolling their signing secret. Agnostic to
 * how it is called and where data is stored.
 */
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import { urlRefusal } from './addresses.ts';
import type {
  DeliveryQueueDeps,
  WebhookDeliveryRepository,
  WebhookEndpointDeps,
} from './delivery-ports.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.ts';
import {
  SECRET_GRACE_MS,
  type WebhookEndpoint,
  type WebhookHealth,
} from './model.ts';
import type { ReleaseMessage } from './queues.ts';
import { newSecret } from './signing.ts';
import type {
  CreatedWebhook,
  CreateWebhookInput,
  DeletedWebhook,
  RolledSecret,
  UpdateWebhookInput,
  WebhookView,
} from './webhook.schema.ts';

/**
 * What the endpoint routes need: the endpoints, their health, and the
 * deliveries queue (an endpoint enabled again releases what waited).
 */
export type EndpointsDeps = WebhookEndpointDeps &
  DeliveryQueueDeps & {
    webhookDeliveries: Pick<WebhookDeliveryRepository, 'health'>;
  };

/** Why an endpoint disabled by a call is. */
export const DISABLED_BY_CALL = 'Disabled through the API';

/** The event types named, each once, in the catalogue's order. */
const normalizedEvents = (
  events: readonly WebhookEventType[],
): WebhookEventType[] =>
  WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type));

/** 400 naming `url` when this stack does not take the URL. */
const checkUrl = (
  deps: Pick<WebhookEndpointDeps, 'webhookUrlRules'>,
  url: string,
) => {
  const refusal = urlRefusal(url, deps.webhookUrlRules);
  if (refusal) {
    throw new ValidationError(`Invalid request: url: ${refusal}`, [
      { field: 'url', message: refusal },
    ]);
  }
};

/** The API view of an endpoint, its health and the time. */
export const webhookView = (
  endpoint: WebhookEndpoint,
  health: Pick<WebhookHealth, 'failingSince'>,
  now: Date,
): WebhookView => {
  const previous = endpoint.secrets
    .slice(1)
    .find(
      (secret) =>
        secret.expiresAt !== undefined &&
        Date.parse(secret.expiresAt) > now.getTime(),
    );
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description ?? null,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabledReason: endpoint.enabled
      ? null
      : (endpoint.disabledReason ?? DISABLED_BY_CALL),
    disabledAt: endpoint.enabled ? null : (endpoint.disabledAt ?? null),
    failingSince: health.failingSince ?? null,
    previousSecretExpiresAt: previous?.expiresAt ?? null,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
};

/** The stored endpoint, or 404 for a missing one or another organization's. */
export const requireWebhook = async (
  deps: Pick<WebhookEndpointDeps, 'webhooks'>,
  orgId: string,
  webhookId: string,
): Promise<WebhookEndpoint> => {
  const endpoint = await deps.webhooks.get(orgId, webhookId);
  if (!endpoint) {
    throw new NotFoundError('webhook.notFound', `No webhook ${webhookId}`);
  }
  return endpoint;
};

/**
 * Registers an endpoint: its URL checked against this stack's rules, its
 * event types, a new signing secret (shown in this answer only). 400
 * `webhook.limitReached` past the organization's cap.
 */
export const createWebhook = async (
  deps: WebhookEndpointDeps,
  orgId: string,
  input: CreateWebhookInput,
): Promise<CreatedWebhook> => {
  // 1. The URL, by this stack's rules.
  checkUrl(deps, input.url);
  // 2. A run of an Idempotency-Key's request after one that stopped
  // without answering finds what that one created, and shows its secret
  // (kept to sign; never shown by any other answer) — decision 0055.
  const now = deps.clock.now();
  const id = deps.ids.createdId();
  const earlier = deps.ids.rerun
    ? await deps.webhooks.get(orgId, id)
    : undefined;
  const first = earlier?.secrets[0];
  if (earlier && first) {
    return { ...webhookView(earlier, {}, now), secret: first.value };
  }
  // 3. The endpoint, with its first secret.
  const at = now.toISOString();
  const secret = newSecret(deps.ids);
  const enabled = input.enabled ?? true;
  const description = input.description || undefined;
  const endpoint: WebhookEndpoint = {
    id,
    url: input.url,
    ...(description ? { description } : {}),
    events: normalizedEvents(input.events),
    enabled,
    ...(enabled ? {} : { disabledReason: DISABLED_BY_CALL, disabledAt: at }),
    secrets: [{ value: secret, createdAt: at }],
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  // 4. Stored with the summary of the types, under the cap.
  await deps.webhooks.create(orgId, endpoint);
  return { ...webhookView(endpoint, {}, now), secret };
};

/** One endpoint. */
export const getWebhook = async (
  deps: EndpointsDeps,
  orgId: string,
  webhookId: string,
): Promise<WebhookView> => {
  const [endpoint, health] = await Promise.all([
    requireWebhook(deps, orgId, webhookId),
    deps.webhookDeliveries.health(orgId, webhookId),
  ]);
  return webhookView(endpoint, health, deps.clock.now());
};

/** The organization's endpoints, newest first. */
export const listWebhooks = async (
  deps: EndpointsDeps,
  orgId: string,
  request: PageRequest,
): Promise<Page<WebhookView>> => {
  const page = await deps.webhooks.page(orgId, request);
  const now = deps.clock.now();
  const healths = await Promise.all(
    page.items.map((endpoint) =>
      deps.webhookDeliveries.health(orgId, endpoint.id),
    ),
  );
  return {
    items: page.items.map((endpoint, i) =>
      webhookView(endpoint, healths[i] ?? {}, now),
    ),
    total: page.total,
  };
};

/**
 * Writes an endpoint changed by `change` (on the version read), again on a
 * fresh read when another write landed meanwhile (a failing endpoint may
 * be disabled by its deliveries at any time); 409 `webhook.changed` after
 * the attempts of a sustained race.
 */
const changeWebhook = (
  deps: WebhookEndpointDeps,
  orgId: string,
  webhookId: string,
  change: (
    before: WebhookEndpoint,
    now: Date,
  ) => { after: WebhookEndpoint; resetHealth?: boolean },
): Promise<{ endpoint: WebhookEndpoint; now: Date }> =>
  retryOnConflict(async (retryable) => {
    const before = await requireWebhook(deps, orgId, webhookId);
    const now = deps.clock.now();
    const { after, resetHealth } = change(before, now);
    const written = await deps.webhooks.update(orgId, before, after, {
      resetHealth: resetHealth ?? false,
    });
    if (!written) {
      retryable(
        new ConflictError(
          'webhook.changed',
          `The webhook ${webhookId} changed while the request ran; retry`,
        ),
      );
    }
    return { endpoint: after, now };
  });

/**
 * Changes an endpoint's URL, event types, description or state. Enabling
 * a disabled one clears its reason and forgets its failures. Either
 * switch releases the deliveries parked behind its failures.
 */
export const updateWebhook = async (
  deps: EndpointsDeps,
  orgId: string,
  webhookId: string,
  input: UpdateWebhookInput,
): Promise<WebhookView> => {
  if (input.url !== undefined) checkUrl(deps, input.url);
  let switched = false;
  const { endpoint, now } = await changeWebhook(
    deps,
    orgId,
    webhookId,
    (before, now) => {
      const at = now.toISOString();
      const enabled = input.enabled ?? before.enabled;
      const description =
        input.description === undefined
          ? before.description
          : input.description || undefined;
      const {
        description: _description,
        disabledReason: _reason,
        disabledAt: _at,
        ...rest
      } = before;
      const after: WebhookEndpoint = {
        ...rest,
        url: input.url ?? before.url,
        events: input.events ? normalizedEvents(input.events) : before.events,
        ...(description ? { description } : {}),
        enabled,
        ...(enabled
          ? {}
          : before.enabled
            ? { disabledReason: DISABLED_BY_CALL, disabledAt: at }
            : {
                disabledReason: before.disabledReason ?? DISABLED_BY_CALL,
                disabledAt: before.disabledAt ?? at,
              }),
        updatedAt: at,
        version: before.version + 1,
      };
      switched = enabled !== before.enabled;
      return { after, resetHealth: enabled && !before.enabled };
    },
  );
  if (switched) {
    // Parked deliveries go on their way: to fail at once if it was
    // disabled (as its pending ones do at their next attempt), to be
    // delivered if it was enabled again (a delivery parked in a race
    // with the disabling).
    const release: ReleaseMessage = { kind: 'release', orgId, webhookId };
    await deps.queues.webhookDeliveries.send(release, { group: orgId });
  }
  const health = await deps.webhookDeliveries.health(orgId, webhookId);
  return webhookView(endpoint, health, now);
};

/**
 * Deletes an endpoint. Its deliveries stop (an attempt finds no endpoint)
 * and expire with their log.
 */
export const deleteWebhook = (
  deps: WebhookEndpointDeps,
  orgId: string,
  webhookId: string,
): Promise<DeletedWebhook> =>
  retryOnConflict(async (retryable) => {
    const endpoint = await requireWebhook(deps, orgId, webhookId);
    if (!(await deps.webhooks.delete(orgId, endpoint))) {
      retryable(
        new ConflictError(
          'webhook.changed',
          `The webhook ${webhookId} changed while the request ran; retry`,
        ),
      );
    }
    return { id: webhookId };
  });

/**
 * A new signing secret, shown once. The secret it replaces keeps signing
 * beside it for 24 hours; one rolled before that ends its grace now.
 */
export const rollSecret = async (
  deps: WebhookEndpointDeps,
  orgId: string,
  webhookId: string,
): Promise<RolledSecret> => {
  const secret = newSecret(deps.ids);
  const { endpoint } = await changeWebhook(
    deps,
    orgId,
    webhookId,
    (before, now) => {
      const at = now.toISOString();
      const [current] = before.secrets;
      const graceEnds = new Date(now.getTime() + SECRET_GRACE_MS).toISOString();
      return {
        after: {
          ...before,
          secrets: [
            { value: secret, createdAt: at },
            ...(current
              ? [
                  {
                    value: current.value,
                    createdAt: current.createdAt,
                    expiresAt: graceEnds,
                  },
                ]
              : []),
          ],
          updatedAt: at,
          version: before.version + 1,
        },
      };
    },
  );
  const previous = endpoint.secrets[1]?.expiresAt ?? endpoint.updatedAt;
  return { secret, previousSecretExpiresAt: previous };
};
