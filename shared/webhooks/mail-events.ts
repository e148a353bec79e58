/**
 * Application logic: the webhook events of one SES event about a mail we
 * sent to a contact (a campaign's, a sequence step's, a confirmation),
 * per recipient. Read from the event alone, its message's tags naming the
 * organization, the contact and what sent it: no read of the table. A
 * test send, which goes to no contact, has none. Before they are
 * published, those of an erased person's address are dropped.
 */

import type { SuppressionLookup } from '../audience/ports.ts';
import {
  activityMessageOf,
  instantOf,
  recipientsOf,
} from '../delivery/events.ts';
import { type SesEvent, tagOf } from '../delivery/ses-event.ts';
import { clickedLink } from '../links/public-links.ts';
import {
  type WebhookEvent,
  type WebhookEventType,
  webhookEventId,
} from './events.ts';

const MAIL_EVENT: Partial<Record<SesEvent['eventType'], WebhookEventType>> = {
  Delivery: 'mail.delivered',
  Open: 'mail.opened',
  Click: 'mail.clicked',
  Bounce: 'mail.bounced',
  Complaint: 'mail.complained',
};

/** The events of one SES event, one per recipient it names. */
export const mailEventsOf = (event: SesEvent): WebhookEvent[] => {
  const type = MAIL_EVENT[event.eventType];
  const orgId = tagOf(event, 'org');
  const message = activityMessageOf(event);
  if (!type || !orgId || !message) return [];
  const at = new Date(instantOf(event)).toISOString();
  const contactId = tagOf(event, 'contact') ?? null;
  const link =
    event.eventType === 'Click' ? clickedLink(event.click.link) : undefined;
  return recipientsOf(event).map((email) => ({
    id: webhookEventId(
      orgId,
      type,
      `ses:${message.id}:${email}:${at}${link === undefined ? '' : `:${link}`}`,
    ),
    type,
    orgId,
    occurredAt: at,
    data: {
      mail: {
        messageId: message.id,
        kind: message.kind,
        campaignId: message.campaignId ?? null,
        sequenceId: message.sequenceId ?? null,
        step: message.step ?? null,
      },
      email,
      contactId,
      ...(link === undefined ? {} : { link }),
      ...(event.eventType === 'Bounce'
        ? { bounceType: event.bounce.bounceType }
        : {}),
    },
  }));
};

/**
 * The events whose recipient was not erased. SES reports opens and clicks
 * for days after a mail, and a bounce or a complaint at any time; an
 * erased person's address must not come back in a payload. The erasure
 * keeps the address's suppression, without the address: one read per
 * organization of its distinct addresses (a `BatchGetItem`), made only
 * for events some endpoint takes.
 */
export const withoutErased = async (
  deps: { delivery: SuppressionLookup },
  events: readonly WebhookEvent[],
): Promise<WebhookEvent[]> => {
  const emailOf = (event: WebhookEvent) =>
    typeof event.data.email === 'string' ? event.data.email : undefined;
  const addresses = new Map<string, Set<string>>();
  for (const event of events) {
    const email = emailOf(event);
    if (email === undefined) continue;
    const known = addresses.get(event.orgId) ?? new Set<string>();
    addresses.set(event.orgId, known.add(email));
  }
  const erased = new Set(
    (
      await Promise.all(
        [...addresses].map(async ([orgId, emails]) => {
          const found = await deps.delivery.suppressions(orgId, [...emails]);
          return [...found.values()]
            .filter((s) => s.erased || s.reason === 'erased')
            .map((s) => `${orgId}\n${s.email}`);
        }),
      )
    ).flat(),
  );
  return events.filter(
    (event) => !erased.has(`${event.orgId}\n${emailOf(event)}`),
  );
};
