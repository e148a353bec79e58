/**
 * The sample events a test call sends: for each event type, data shaped
 * like what its real events carry (a contact, a campaign, a mail, a
 * journey), with made-up ids and the example.com domain, marked
 * `test: true` so that a receiver can tell it from a real one.
 */
import type { WebhookEventType } from './events.ts';

const SAMPLE = {
  contactId: '00000000-0000-7000-8000-000000000001',
  listId: '00000000-0000-7000-8000-000000000002',
  tagId: '00000000-0000-7000-8000-000000000003',
  campaignId: '00000000-0000-7000-8000-000000000004',
  sequenceId: '00000000-0000-7000-8000-000000000005',
  pageId: '00000000-0000-7000-8000-000000000006',
  email: 'jane.doe@example.com',
} as const;

const contact = (at: string, status = 'subscribed') => ({
  id: SAMPLE.contactId,
  listId: SAMPLE.listId,
  email: SAMPLE.email,
  firstName: 'Jane',
  lastName: 'Doe',
  status,
  tags: [{ id: SAMPLE.tagId, name: 'customer' }],
  fields: { plan: 'pro' },
  createdAt: at,
  updatedAt: at,
});

const campaign = (at: string, status: string) => ({
  id: SAMPLE.campaignId,
  name: 'November newsletter',
  status,
  listId: SAMPLE.listId,
  createdAt: at,
  updatedAt: at,
});

const mail = (at: string) => ({
  messageId: '0100018c-sample-0000-0000-000000000000-000000',
  contactId: SAMPLE.contactId,
  email: SAMPLE.email,
  campaignId: SAMPLE.campaignId,
  sequenceId: null,
  step: null,
  at,
});

/** The data of a test event of `type`, at `at`. */
export const sampleDataOf = (
  type: WebhookEventType,
  at: string,
): Record<string, unknown> => {
  const data = ((): Record<string, unknown> => {
    switch (type) {
      case 'contact.created':
      case 'contact.subscribed':
        return { contact: contact(at) };
      case 'contact.unsubscribed':
        return { contact: contact(at, 'unsubscribed'), via: 'link' };
      case 'contact.bounced':
        return { contact: contact(at, 'bounced') };
      case 'contact.complained':
        return { contact: contact(at, 'complained') };
      case 'contact.tagged':
      case 'contact.untagged':
        return {
          contact: contact(at),
          tag: { id: SAMPLE.tagId, name: 'customer' },
        };
      case 'contact.updated':
        return {
          contact: contact(at),
          changes: [{ key: 'plan', from: 'free', to: 'pro' }],
        };
      case 'contact.deleted':
        return { contactId: SAMPLE.contactId, listId: SAMPLE.listId };
      case 'contact.erased':
        return { contactIds: [SAMPLE.contactId] };
      case 'signup.submitted':
        return {
          contact: contact(at, 'pending'),
          pageId: SAMPLE.pageId,
          consent: { consentText: 'Yes, send me the newsletter', at },
        };
      case 'campaign.scheduled':
        return { campaign: { ...campaign(at, 'scheduled'), scheduledAt: at } };
      case 'campaign.sending':
        return { campaign: campaign(at, 'sending') };
      case 'campaign.sent':
        return {
          campaign: campaign(at, 'sent'),
          progress: { total: 1200, sent: 1187, failed: 13 },
        };
      case 'campaign.failed':
        return {
          campaign: campaign(at, 'failed'),
          failure: 'The organization cannot send: sending is paused',
        };
      case 'mail.delivered':
      case 'mail.opened':
      case 'mail.complained':
        return { mail: mail(at) };
      case 'mail.clicked':
        return { mail: mail(at), link: 'https://example.com/offer' };
      case 'mail.bounced':
        return { mail: mail(at), bounceType: 'Permanent' };
      case 'sequence.enrolled':
      case 'sequence.completed':
        return {
          sequenceId: SAMPLE.sequenceId,
          contactId: SAMPLE.contactId,
        };
      case 'sequence.exited':
        return {
          sequenceId: SAMPLE.sequenceId,
          contactId: SAMPLE.contactId,
          exitReason: 'unsubscribed',
        };
    }
  })();
  return { test: true, ...data };
};
