/**
 * The webhook event catalogue: every event type an endpoint may subscribe
 * to, what fact it comes from, and the envelope a receiver gets. Events
 * are derived from committed facts only (a record of the table's change
 * stream, an event SES reported, a campaign's stored transition), never
 * announced by the code that writes: a crash between a write and its
 * event loses nothing, and a fact delivered twice gives the same event,
 * with the same id, so receivers can drop the repeat.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';

/** Every event type, with what it means. */
export const WEBHOOK_EVENTS = {
  'contact.created':
    'A contact was added to a list (by the API, an import or a sign-up form).',
  'contact.subscribed':
    'A contact became subscribed: added as subscribed, or it confirmed its address (`confirmed: true`).',
  'contact.unsubscribed':
    'A contact unsubscribed; `via` says how (api, import, form, link, one_click, delivery…).',
  'contact.bounced':
    'A contact was marked bounced: its address bounced for good and is suppressed.',
  'contact.complained':
    'A contact was marked complained: its recipient reported a mail as spam; the address is suppressed.',
  'contact.tagged': 'A contact gained a tag (`tag`).',
  'contact.untagged': 'A contact lost a tag (`tag`).',
  'contact.updated':
    "Some of a contact's custom field values changed (`changes`).",
  'contact.deleted':
    'A contact was removed from its list. Names only ids: the same removal may be an erasure.',
  'contact.erased':
    'A person was erased on request: every contact holding the address is gone (`contactIds`), never the address.',
  'signup.submitted':
    'Someone submitted a hosted sign-up form; the contact and the consent it recorded.',
  'campaign.scheduled': 'A campaign was scheduled (`scheduledAt`).',
  'campaign.sending': 'A campaign started sending.',
  'campaign.sent': 'A campaign finished sending; `progress` says how many.',
  'campaign.failed': 'A campaign failed; `failure` says why.',
  'mail.delivered':
    "A recipient's mail server accepted a mail (a campaign's, a sequence step's or a confirmation).",
  'mail.opened': 'A recipient opened a mail (its images loaded).',
  'mail.clicked': 'A recipient followed a link of a mail (`link`).',
  'mail.bounced':
    'A mail bounced; `bounceType` Permanent suppresses the address.',
  'mail.complained': 'A recipient reported a mail as spam.',
  'sequence.enrolled': 'A contact entered a sequence.',
  'sequence.completed': 'A contact reached the end of a sequence.',
  'sequence.exited': 'A contact left a sequence before its end (`exitReason`).',
} as const;

/** A type of event, e.g. `contact.unsubscribed`. */
export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;

/** Every event type, in the catalogue's order. */
export const WEBHOOK_EVENT_TYPES = Object.keys(
  WEBHOOK_EVENTS,
) as WebhookEventType[];

/** The schema of an event type, as endpoints and the document name it. */
export const WebhookEventTypeSchema = v.pipe(
  v.picklist(WEBHOOK_EVENT_TYPES, 'must be a known event type'),
  v.description(
    WEBHOOK_EVENT_TYPES.map(
      (type) => `\`${type}\`: ${WEBHOOK_EVENTS[type]}`,
    ).join('\n'),
  ),
);

/**
 * One event: what happened, to which organization, when, and the resource
 * concerned as the API shows it (or the ids of what is gone).
 */
export interface WebhookEvent {
  /**
   * Stable: derived from the fact, so the same fact read again is the same
   * event. Sent as the `webhook-id` header and the body's `id`.
   */
  id: string;
  type: WebhookEventType;
  orgId: string;
  /** When the fact happened (ISO 8601, UTC, milliseconds). */
  occurredAt: string;
  data: Record<string, unknown>;
  /** Set on a test call's sample event only: no fact behind it. */
  test?: true;
}

/**
 * The id of the event of one fact: `evt_` and 32 hex digits of a hash of
 * the organization, the type and what the fact comes from (a contact's
 * version, SES's event, a campaign's transition).
 */
export const webhookEventId = (
  orgId: string,
  type: WebhookEventType,
  from: string,
): string =>
  `evt_${createHash('sha256').update(`${orgId}\n${type}\n${from}`).digest('hex').slice(0, 32)}`;

/** The body a receiver gets, and the document declares. */
export const WebhookPayload = v.pipe(
  v.object({
    id: v.pipe(
      v.string(),
      v.description(
        'The event id; the `webhook-id` header says it too. The same fact always has the same id: drop a repeat.',
      ),
    ),
    type: WebhookEventTypeSchema,
    timestamp: v.pipe(
      v.string(),
      v.description('When the fact happened (ISO 8601, UTC)'),
    ),
    organizationId: v.string(),
    data: v.pipe(
      v.record(v.string(), v.unknown()),
      v.description(
        'The resource as the API returns it, or the ids of what is gone',
      ),
    ),
    test: v.optional(v.literal(true)),
  }),
  v.title('WebhookPayload'),
);
export type WebhookPayload = v.InferOutput<typeof WebhookPayload>;

/** The body of an event, as sent. */
export const payloadOf = (event: WebhookEvent): WebhookPayload => ({
  id: event.id,
  type: event.type,
  timestamp: event.occurredAt,
  organizationId: event.orgId,
  data: event.data,
  ...(event.test ? { test: true as const } : {}),
});

/** An event, as queue messages carry it (validated on receipt). */
export const WebhookEventMessage = v.object({
  id: v.pipe(v.string(), v.regex(/^evt_[0-9a-f]{32}$/)),
  type: v.picklist(WEBHOOK_EVENT_TYPES),
  orgId: v.pipe(v.string(), v.minLength(1)),
  occurredAt: v.pipe(v.string(), v.isoTimestamp()),
  data: v.record(v.string(), v.unknown()),
});
