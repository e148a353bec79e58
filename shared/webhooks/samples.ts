/**
 * The sample events a test call sends: for each event type, data of the
 * very shape its real events carry (the schemas of `payloads.ts`, which
 * the tests hold every sample to), with made-up ids and the example.com
 * domain. The event itself says `test: true`, so that a receiver can tell
 * it from a real one.
 */
import type { WebhookEventType } from './events.ts';

const SAMPLE = {
  orgId: '00000000-0000-7000-8000-000000000000',
  contactId: '00000000-0000-7000-8000-000000000001',
  listId: '00000000-0000-7000-8000-000000000002',
  tagId: '00000000-0000-7000-8000-000000000003',
  campaignId: '00000000-0000-7000-8000-000000000004',
  sequenceId: '00000000-0000-7000-8000-000000000005',
  pageId: '00000000-0000-7000-8000-000000000006',
  versionId: '00000000-0000-7000-8000-000000000007',
  erasureId: '00000000-0000-7000-8000-000000000008',
  keyId: '00000000-0000-7000-8000-000000000009',
  userId: '00000000-0000-7000-8000-00000000000a',
  email: 'jane.doe@example.com',
} as const;

const TAG = { id: SAMPLE.tagId, name: 'customer' };

/** A contact as the API shows it (`ContactView`). */
const contact = (at: string, status: string, consented = false) => ({
  id: SAMPLE.contactId,
  listId: SAMPLE.listId,
  email: SAMPLE.email,
  firstName: 'Jane',
  lastName: 'Doe',
  status,
  tags: [TAG],
  optinAt: at,
  optinIp: null,
  confirmedAt: status === 'subscribed' ? at : null,
  confirmedIp: null,
  joinedAt: status === 'pending' ? null : at,
  unsubscribedAt: status === 'unsubscribed' ? at : null,
  consents: consented
    ? [
        {
          pageId: SAMPLE.pageId,
          pageVersion: 1,
          consentText: 'Yes, send me the newsletter.',
          ip: '203.0.113.7',
          userAgent: 'Mozilla/5.0',
          referrer: 'https://example.com/',
          askedFields: [],
          signedUpAt: at,
          confirmedAt: null,
        },
      ]
    : [],
  fields: { plan: 'pro' },
  createdAt: at,
  updatedAt: at,
});

/** A campaign as its events show it. */
const campaign = (at: string, status: string) => {
  const done = status === 'sent' || status === 'failed';
  const progress = done
    ? { total: 1200, sent: 1187, failed: 13, skipped: 0, percent: 100 }
    : { total: 0, sent: 0, failed: 0, skipped: 0, percent: 0 };
  return {
    campaign: {
      id: SAMPLE.campaignId,
      name: 'November newsletter',
      subject: 'Our November news',
      templateId: null,
      listId: SAMPLE.listId,
      segmentId: null,
      tagId: null,
      sendingIdentityId: null,
      topicId: null,
      origin: null,
      status,
      scheduledAt: status === 'scheduled' ? at : null,
      startedAt: status === 'scheduled' ? null : at,
      completedAt: done ? at : null,
      createdAt: at,
      updatedAt: at,
      progress,
      failure:
        status === 'failed'
          ? {
              reason: 'sending_paused',
              message: 'Sending is paused for the organization',
              at,
            }
          : null,
      paused: null,
    },
  };
};

/** A mail event's data. */
const mail = () => ({
  mail: {
    messageId: '0100018c-sample-0000-0000-000000000000-000000',
    kind: 'campaign',
    campaignId: SAMPLE.campaignId,
    sequenceId: null,
    step: null,
  },
  email: SAMPLE.email,
  contactId: SAMPLE.contactId,
});

/** A journey's data. */
const journey = (at: string, status: string, exitReason: string | null) => ({
  journey: {
    sequenceId: SAMPLE.sequenceId,
    versionId: SAMPLE.versionId,
    contactId: SAMPLE.contactId,
    listId: SAMPLE.listId,
    email: SAMPLE.email,
    status,
    exitReason,
    enrolledAt: at,
    endedAt: status === 'active' ? null : at,
    sent: status === 'active' ? 0 : 3,
    skipped: 0,
  },
});

/** The data of a test event of `type`, at `at`. */
export const sampleDataOf = (
  type: WebhookEventType,
  at: string,
): Record<string, unknown> => {
  switch (type) {
    case 'contact.created':
      return { contact: contact(at, 'subscribed'), via: 'api' };
    case 'contact.subscribed':
      return {
        contact: contact(at, 'subscribed'),
        via: 'api',
        confirmed: false,
      };
    case 'contact.unsubscribed':
      return { contact: contact(at, 'unsubscribed'), via: 'link' };
    case 'contact.bounced':
      return { contact: contact(at, 'bounced'), via: 'delivery' };
    case 'contact.complained':
      return { contact: contact(at, 'complained'), via: 'delivery' };
    case 'contact.tagged':
    case 'contact.untagged':
      return { contact: contact(at, 'subscribed'), tag: TAG };
    case 'contact.updated':
      return {
        contact: contact(at, 'subscribed'),
        changes: [{ key: 'plan', from: 'free', to: 'pro' }],
      };
    case 'contact.deleted':
      return { contactId: SAMPLE.contactId, listId: SAMPLE.listId };
    case 'contact.erased':
      return {
        erasure: {
          id: SAMPLE.erasureId,
          erasedAt: at,
          erasedBy: { keyId: SAMPLE.keyId, userId: SAMPLE.userId },
          target: 'email',
          contacts: 1,
          contactIds: [SAMPLE.contactId],
          journeys: 0,
          topicOptOuts: 0,
          items: 4,
        },
        contactIds: [SAMPLE.contactId],
      };
    case 'signup.submitted':
      return {
        contact: contact(at, 'pending', true),
        pageId: SAMPLE.pageId,
        signedUpAt: at,
      };
    case 'campaign.scheduled':
    case 'campaign.sending':
    case 'campaign.sent':
    case 'campaign.failed':
      return campaign(at, type.slice('campaign.'.length));
    case 'mail.delivered':
    case 'mail.opened':
    case 'mail.complained':
      return mail();
    case 'mail.clicked':
      return { ...mail(), link: 'https://example.com/offer' };
    case 'mail.bounced':
      return { ...mail(), bounceType: 'Permanent' };
    case 'sequence.enrolled':
      return journey(at, 'active', null);
    case 'sequence.completed':
      return journey(at, 'completed', null);
    case 'sequence.exited':
      return journey(at, 'exited', 'unsubscribed');
  }
};
