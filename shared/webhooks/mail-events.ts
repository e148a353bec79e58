/**
 * Application logic: the webhook events of one SES event about a mail we
 * sent to a contact (a campaign's, a sequence step's, a confirmation),
 * per recipient. Read from the event alone, its message's tags naming the
 * organization, the contact and what sent it: no read of the table. A
 * test send, which goes to no contact, has none.
 */

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
