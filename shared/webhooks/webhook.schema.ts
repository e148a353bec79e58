/**
 * Schemas of the webhook endpoints' routes: what a client sends, and the
 * endpoint as the API shows it (the secret only in the answer that makes
 * it).
 */
import * as v from 'valibot';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import { eachOnce, lineText, Timestamp, ViewId } from '../validation.ts';
import { WEBHOOK_EVENT_TYPES, WebhookEventTypeSchema } from './events.ts';
import {
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
} from './model.ts';

/** An endpoint URL, as a body gives it (the rules of this stack are the domain's). */
const Url = v.pipe(
  v.string('must be a string'),
  v.maxLength(
    MAX_WEBHOOK_URL_LENGTH,
    `must be at most ${MAX_WEBHOOK_URL_LENGTH.toLocaleString('en')} characters`,
  ),
  v.url('must be an absolute URL'),
  v.description(
    'Where deliveries are POSTed: an https URL (the local stack takes http too), without a user name, password or fragment, at most 1,000 characters. A host written as an IP address must be public; a host name is resolved on every attempt, and a private, loopback, link-local or metadata address refused then.',
  ),
);

/** The event types an endpoint takes: at least one, each once. */
const Events = v.pipe(
  v.array(WebhookEventTypeSchema),
  v.minLength(1, 'must name at least one event type'),
  v.maxLength(
    WEBHOOK_EVENT_TYPES.length,
    `must name at most the ${WEBHOOK_EVENT_TYPES.length} event types there are`,
  ),
  eachOnce('an event type'),
  inJsonSchema({ uniqueItems: true }),
  v.description(
    'The event types this endpoint takes, each once. Each type is described under `type` of the payload.',
  ),
);

const Description = v.pipe(
  lineText(MAX_WEBHOOK_DESCRIPTION_LENGTH * 4),
  v.trim(),
  v.maxLength(
    MAX_WEBHOOK_DESCRIPTION_LENGTH,
    `must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`,
  ),
);

/** Body of POST /webhooks. */
export const CreateWebhookBody = v.object({
  url: Url,
  events: Events,
  description: v.optional(Description),
  enabled: v.optional(
    v.pipe(
      v.boolean(),
      v.description('Whether it takes deliveries now (default true)'),
    ),
  ),
});
export type CreateWebhookInput = v.InferOutput<typeof CreateWebhookBody>;

/** Body of PATCH /webhooks/{webhookId}. */
export const UpdateWebhookBody = v.pipe(
  v.object({
    url: v.optional(Url),
    events: v.optional(Events),
    description: v.optional(
      v.pipe(v.nullable(Description), v.description('null (or "") clears it')),
    ),
    enabled: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          'false stops its deliveries; true starts them again and clears `disabledReason`',
        ),
      ),
    ),
  }),
  v.check(
    hasSomeField,
    'must change at least one of url, events, description, enabled',
  ),
);
export type UpdateWebhookInput = v.InferOutput<typeof UpdateWebhookBody>;

/** An endpoint as the API shows it: every field present, null when unset. */
export const WebhookView = v.pipe(
  v.object({
    id: ViewId,
    url: v.string(),
    description: v.nullable(v.string()),
    events: v.array(WebhookEventTypeSchema),
    enabled: v.boolean(),
    disabledReason: v.pipe(
      v.nullable(v.string()),
      v.description(
        'Why it is disabled: by a call, or because every attempt failed for 5 days; null while enabled',
      ),
    ),
    disabledAt: v.nullable(Timestamp),
    failingSince: v.pipe(
      v.nullable(Timestamp),
      v.description(
        'Since when every attempt failed (null while the last one succeeded): at 5 days the endpoint is disabled. Meanwhile one failing delivery’s retries test it, and the other deliveries wait for its recovery.',
      ),
    ),
    previousSecretExpiresAt: v.pipe(
      v.nullable(Timestamp),
      v.description(
        'Until when the secret before the last roll still signs beside the current one; null when none does',
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('Webhook'),
);
export type WebhookView = v.InferOutput<typeof WebhookView>;

const Secret = v.pipe(
  v.string(),
  v.description(
    'The signing secret, shown this once: `whsec_` and the base64 of 24 random bytes. Verify each delivery with it (any Standard Webhooks library takes it as is).',
  ),
);

/** The answer of POST /webhooks: the endpoint and its secret, once. */
export const CreatedWebhook = v.pipe(
  v.object({ ...WebhookView.pipe[0].entries, secret: Secret }),
  v.title('CreatedWebhook'),
);
export type CreatedWebhook = v.InferOutput<typeof CreatedWebhook>;

/** The answer of POST /webhooks/{webhookId}/secret/roll. */
export const RolledSecret = v.pipe(
  v.object({
    secret: Secret,
    previousSecretExpiresAt: v.pipe(
      Timestamp,
      v.description(
        'The secret before keeps signing beside this one until then (24 hours): deliveries carry both signatures, so receivers can switch in their own time',
      ),
    ),
  }),
  v.title('RolledSecret'),
);
export type RolledSecret = v.InferOutput<typeof RolledSecret>;

/** The answer of DELETE /webhooks/{webhookId}. */
export const DeletedWebhook = v.pipe(
  v.object({ id: v.pipe(ViewId, v.description('The endpoint removed')) }),
  v.title('DeletedWebhook'),
);
export type DeletedWebhook = v.InferOutput<typeof DeletedWebhook>;
