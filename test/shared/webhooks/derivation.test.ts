/**
 * Issue 32, §1: which webhook events a committed fact gives, derived
 * without a store — a contact's write (created, subscribed or confirmed,
 * unsubscribed with how, bounced, complained, tagged, untagged, its
 * values, a form's sign-up, its removal), a campaign's status, a journey's
 * start and end, an erasure, and SES's events. The same fact always gives
 * the same event ids: a record read again is the same event.
 */

import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ConsentRecord, Contact } from '../../../shared/audience/model.ts';
import type { Campaign } from '../../../shared/campaigns/model.ts';
import type { SesEvent } from '../../../shared/delivery/ses-event.ts';
import type { Erasure } from '../../../shared/privacy/erasure-ports.ts';
import type { Enrolment } from '../../../shared/sequences/model.ts';
import { contactEventsOf } from '../../../shared/webhooks/contact-events.ts';
import {
  payloadOf,
  WEBHOOK_EVENT_TYPES,
  WebhookEventMessage,
  webhookEventId,
} from '../../../shared/webhooks/events.ts';
import { mailEventsOf } from '../../../shared/webhooks/mail-events.ts';
import {
  campaignEventsOf,
  erasureEventsOf,
  journeyEventsOf,
} from '../../../shared/webhooks/organization-events.ts';
import { webhookPayloadSchema } from '../../../shared/webhooks/payloads.ts';
import { sampleDataOf } from '../../../shared/webhooks/samples.ts';

const ORG = 'org-1';
const T0 = '2026-11-21T09:00:00.000Z';
const T1 = '2026-11-21T10:00:00.000Z';

const contact = (overrides: Partial<Contact> = {}): Contact => ({
  id: 'c-1',
  listId: 'list-1',
  email: 'ann@example.test',
  status: 'subscribed',
  tagIds: [],
  joinedAt: T0,
  createdAt: T0,
  updatedAt: T0,
  version: 1,
  ...overrides,
});

const consent = (overrides: Partial<ConsentRecord> = {}): ConsentRecord => ({
  pageId: 'p-1',
  pageVersion: 3,
  consentText: 'Yes, send me the newsletter.',
  ip: '203.0.113.7',
  signedUpAt: T0,
  ...overrides,
});

const typesOf = (events: { type: string }[]) => events.map((e) => e.type);

describe('the webhook events of a contact write (issue 32 §1)', () => {
  it('a new subscribed contact with a tag and a value: created, subscribed, updated, tagged — with how it came', () => {
    // Act
    const events = contactEventsOf({
      orgId: ORG,
      after: contact({ tagIds: ['t-1'], fields: { plan: 'pro' } }),
      origin: 'api',
    });
    // Assert
    expect(typesOf(events)).toEqual([
      'contact.created',
      'contact.subscribed',
      'contact.updated',
      'contact.tagged',
    ]);
    expect(events[0]?.detail).toEqual({ via: 'api' });
    expect(events[1]?.detail).toEqual({ via: 'api', confirmed: false });
    expect(events[2]?.detail).toEqual({
      changes: [{ key: 'plan', from: null, to: 'pro' }],
    });
    expect(events[3]?.detail).toEqual({ tag: { id: 't-1', name: null } });
  });

  it('a hosted form sign-up to a double opt-in list: created and signup.submitted (never subscribed yet); the confirmation: subscribed, confirmed', () => {
    // Arrange
    const pending = contact({
      status: 'pending',
      joinedAt: undefined,
      consents: [consent()],
    });
    const confirmed = contact({
      status: 'subscribed',
      consents: [consent({ confirmedAt: T1 })],
      confirmedAt: T1,
      updatedAt: T1,
      version: 2,
    });
    // Act
    const signedUp = contactEventsOf({
      orgId: ORG,
      after: pending,
      origin: 'form',
    });
    const confirming = contactEventsOf({
      orgId: ORG,
      before: pending,
      after: confirmed,
      origin: 'confirmation',
    });
    // Assert
    expect(typesOf(signedUp)).toEqual(['contact.created', 'signup.submitted']);
    expect(signedUp[1]?.detail).toEqual({ pageId: 'p-1', signedUpAt: T0 });
    expect(typesOf(confirming)).toEqual(['contact.subscribed']);
    expect(confirming[0]?.detail).toEqual({
      via: 'confirmation',
      confirmed: true,
    });
  });

  it('unsubscribed says how; bounced and complained are told apart; a tag lost is untagged, named from the tags given', () => {
    // Arrange
    const before = contact({ tagIds: ['t-1'] });
    const tags = new Map([['t-1', { id: 't-1', name: 'VIP' }]]);
    // Act
    const left = contactEventsOf(
      {
        orgId: ORG,
        before,
        after: contact({
          status: 'unsubscribed',
          tagIds: [],
          version: 2,
          updatedAt: T1,
        }),
        origin: 'one_click',
      },
      tags,
    );
    const bounced = contactEventsOf({
      orgId: ORG,
      before,
      after: contact({ status: 'bounced', tagIds: ['t-1'], version: 2 }),
      origin: 'delivery',
    });
    const complained = contactEventsOf({
      orgId: ORG,
      before,
      after: contact({ status: 'complained', tagIds: ['t-1'], version: 2 }),
      origin: 'delivery',
    });
    // Assert
    expect(typesOf(left)).toEqual(['contact.unsubscribed', 'contact.untagged']);
    expect(left[0]?.detail).toEqual({ via: 'one_click' });
    expect(left[1]?.detail).toEqual({ tag: { id: 't-1', name: 'VIP' } });
    expect(left.every((e) => e.at === T1)).toBe(true);
    expect(typesOf(bounced)).toEqual(['contact.bounced']);
    expect(typesOf(complained)).toEqual(['contact.complained']);
  });

  it('a write that changes nothing told gives none; a removal names only ids, never the address', () => {
    // Arrange
    const before = contact();
    // Act
    const none = contactEventsOf({
      orgId: ORG,
      before,
      after: contact({ firstName: 'Ann', version: 2 }),
      origin: 'api',
    });
    const removed = contactEventsOf({ orgId: ORG, before });
    // Assert
    expect(none).toEqual([]);
    expect(typesOf(removed)).toEqual(['contact.deleted']);
    expect(removed[0]?.detail).toEqual({ contactId: 'c-1', listId: 'list-1' });
    expect(JSON.stringify(removed)).not.toContain('ann@example.test');
  });

  it('a removal is dated when the stream says it was written, never before the last write', () => {
    // Arrange
    const before = contact({ updatedAt: '2026-11-21T09:00:00.250Z' });
    // Act
    const [later] = contactEventsOf({
      orgId: ORG,
      before,
      writtenAt: '2026-11-28T17:30:00.000Z',
    });
    const [sameSecond] = contactEventsOf({
      orgId: ORG,
      before,
      writtenAt: '2026-11-21T09:00:00.000Z',
    });
    const [untold] = contactEventsOf({ orgId: ORG, before });
    // Assert
    expect(later?.at).toBe('2026-11-28T17:30:00.000Z');
    expect(sameSecond?.at).toBe('2026-11-21T09:00:00.250Z');
    expect(untold?.at).toBe('2026-11-21T09:00:00.250Z');
  });

  it('the same record read again gives the same sources; the next version, other ones', () => {
    // Arrange
    const record = {
      orgId: ORG,
      before: contact(),
      after: contact({ tagIds: ['t-1'], version: 2 }),
      origin: 'api' as const,
    };
    // Act
    const first = contactEventsOf(record).map((e) => e.from);
    const again = contactEventsOf(record).map((e) => e.from);
    const next = contactEventsOf({
      ...record,
      before: record.after,
      after: contact({ tagIds: ['t-1', 't-2'], version: 3 }),
    }).map((e) => e.from);
    // Assert
    expect(again).toEqual(first);
    expect(next.some((from) => first.includes(from))).toBe(false);
  });
});

const campaign = (overrides: Partial<Campaign> = {}): Campaign =>
  ({
    id: 'cmp-1',
    name: 'November',
    subject: 'News',
    templateId: null,
    listId: 'list-1',
    segmentId: null,
    tagId: null,
    sendingIdentityId: null,
    topicId: null,
    origin: null,
    status: 'draft',
    scheduledAt: null,
    sendId: null,
    startedAt: null,
    completedAt: null,
    failure: null,
    lastHold: null,
    progress: { total: 0, sent: 0, failed: 0, skipped: 0 },
    createdAt: T0,
    updatedAt: T0,
    version: 1,
    ...overrides,
  }) as Campaign;

describe('the webhook events of a campaign change (issue 32 §1)', () => {
  it('each status entered is one event; a draft, or an unchanged status, gives none; a schedule moved is scheduled again', () => {
    // Arrange
    const scheduled = campaign({
      status: 'scheduled',
      scheduledAt: T1,
      version: 2,
    });
    const sending = campaign({ status: 'sending', startedAt: T1, version: 3 });
    const sent = campaign({
      status: 'sent',
      completedAt: T1,
      progress: { total: 2, sent: 2, failed: 0, skipped: 0 },
      version: 4,
    });
    // Act
    const events = [
      campaignEventsOf({ orgId: ORG, after: campaign() }),
      campaignEventsOf({ orgId: ORG, before: campaign(), after: scheduled }),
      campaignEventsOf({
        orgId: ORG,
        before: scheduled,
        after: {
          ...scheduled,
          scheduledAt: '2026-11-22T09:00:00.000Z',
          version: 3,
        },
      }),
      campaignEventsOf({ orgId: ORG, before: scheduled, after: sending }),
      campaignEventsOf({
        orgId: ORG,
        before: sending,
        after: { ...sending, version: 4 },
      }),
      campaignEventsOf({ orgId: ORG, before: sending, after: sent }),
    ];
    // Assert
    expect(events.map(typesOf)).toEqual([
      [],
      ['campaign.scheduled'],
      ['campaign.scheduled'],
      ['campaign.sending'],
      [],
      ['campaign.sent'],
    ]);
    const done = events[5]?.[0]?.data.campaign as Record<string, unknown>;
    expect(done.progress).toMatchObject({ total: 2, sent: 2, percent: 100 });
    expect(done).not.toHaveProperty('content');
    expect(events[1]?.[0]?.id).not.toBe(events[2]?.[0]?.id);
  });

  it('a failure is told with its reason', () => {
    // Arrange
    const failure = { reason: 'provider_rejected', message: 'Paused', at: T1 };
    // Act
    const [failed] = campaignEventsOf({
      orgId: ORG,
      before: campaign({ status: 'sending' }),
      after: campaign({
        status: 'failed',
        failure,
        version: 3,
      } as Partial<Campaign>),
    });
    // Assert
    expect(failed?.type).toBe('campaign.failed');
    expect(failed?.occurredAt).toBe(T1);
    expect(failed?.data.campaign).toMatchObject({ failure });
  });
});

const journey = (overrides: Partial<Enrolment> = {}): Enrolment => ({
  sequenceId: 'seq-1',
  contactId: 'c-1',
  listId: 'list-1',
  email: 'ann@example.test',
  versionId: 'v-1',
  position: 0,
  status: 'active',
  exitReason: null,
  enrolledAt: T0,
  dueAt: T1,
  waiting: false,
  claim: null,
  lastStep: null,
  lastHold: null,
  sent: 0,
  skipped: 0,
  endedAt: null,
  updatedAt: T0,
  revision: 1,
  ...overrides,
});

describe('the webhook events of a journey and an erasure (issue 32 §1)', () => {
  it('a journey: enrolled when created, completed or exited (with the reason) when it ends, nothing for a step between', () => {
    // Arrange
    const stepped = journey({ position: 1, sent: 1, revision: 2 });
    // Act
    const enrolled = journeyEventsOf({ orgId: ORG, after: journey() });
    const step = journeyEventsOf({
      orgId: ORG,
      before: journey(),
      after: stepped,
    });
    const completed = journeyEventsOf({
      orgId: ORG,
      before: stepped,
      after: journey({
        status: 'completed',
        endedAt: T1,
        sent: 2,
        revision: 3,
      }),
    });
    const exited = journeyEventsOf({
      orgId: ORG,
      before: stepped,
      after: journey({
        status: 'exited',
        exitReason: 'unsubscribed',
        endedAt: T1,
      }),
    });
    const removed = journeyEventsOf({ orgId: ORG, before: stepped });
    // Assert
    expect(typesOf(enrolled)).toEqual(['sequence.enrolled']);
    expect(step).toEqual([]);
    expect(typesOf(completed)).toEqual(['sequence.completed']);
    expect(completed[0]?.occurredAt).toBe(T1);
    expect(typesOf(exited)).toEqual(['sequence.exited']);
    expect(exited[0]?.data.journey).toMatchObject({
      exitReason: 'unsubscribed',
    });
    expect(removed).toEqual([]);
  });

  it('an erasure: one contact.erased with the record and the contact ids, never the address', () => {
    // Arrange
    const erasure: Erasure = {
      id: 'er-1',
      erasedAt: T1,
      erasedBy: { keyId: 'k-1', userId: 'u-1' },
      target: 'email',
      contacts: 2,
      contactIds: ['c-1', 'c-2'],
      journeys: 1,
      topicOptOuts: 0,
      items: 9,
    };
    // Act
    const events = erasureEventsOf({ orgId: ORG, after: erasure });
    const again = erasureEventsOf({
      orgId: ORG,
      before: erasure,
      after: erasure,
    });
    // Assert
    expect(typesOf(events)).toEqual(['contact.erased']);
    expect(events[0]?.data).toMatchObject({ contactIds: ['c-1', 'c-2'] });
    expect(again).toEqual([]);
  });
});

const ses = (
  eventType: 'Delivery' | 'Open' | 'Click' | 'Bounce' | 'Complaint' | 'Send',
  tags: Record<string, string[]>,
): SesEvent => {
  const mail = {
    messageId: 'm-1',
    timestamp: T0,
    destination: ['ann@example.test'],
    tags,
  };
  switch (eventType) {
    case 'Delivery':
      return {
        eventType,
        mail,
        delivery: { timestamp: T1, recipients: ['Ann@Example.test'] },
      } as SesEvent;
    case 'Open':
      return { eventType, mail, open: { timestamp: T1 } } as SesEvent;
    case 'Click':
      return {
        eventType,
        mail,
        click: { timestamp: T1, link: 'https://shop.example/offer' },
      } as SesEvent;
    case 'Bounce':
      return {
        eventType,
        mail,
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: [{ emailAddress: 'ann@example.test' }],
          timestamp: T1,
        },
      } as SesEvent;
    case 'Complaint':
      return {
        eventType,
        mail,
        complaint: {
          complainedRecipients: [{ emailAddress: 'ann@example.test' }],
          timestamp: T1,
        },
      } as SesEvent;
    default:
      return { eventType, mail } as SesEvent;
  }
};

describe('the webhook events of SES events (issue 32 §1)', () => {
  const campaignTags = {
    org: [ORG],
    kind: ['campaign'],
    campaign: ['cmp-1'],
    contact: ['c-1'],
  };

  it('delivered, opened, clicked (with the link), bounced (with its type), complained: per recipient, naming the campaign', () => {
    // Act
    const events = (
      ['Delivery', 'Open', 'Click', 'Bounce', 'Complaint'] as const
    ).flatMap((type) => mailEventsOf(ses(type, campaignTags)));
    // Assert
    expect(typesOf(events)).toEqual([
      'mail.delivered',
      'mail.opened',
      'mail.clicked',
      'mail.bounced',
      'mail.complained',
    ]);
    expect(events[0]?.data).toEqual({
      mail: {
        messageId: 'm-1',
        kind: 'campaign',
        campaignId: 'cmp-1',
        sequenceId: null,
        step: null,
      },
      email: 'ann@example.test',
      contactId: 'c-1',
    });
    expect(events[2]?.data.link).toBe('https://shop.example/offer');
    expect(events[3]?.data.bounceType).toBe('Permanent');
    expect(events.every((e) => e.occurredAt === T1 && e.orgId === ORG)).toBe(
      true,
    );
    for (const event of events) {
      expect(v.safeParse(WebhookEventMessage, event).success).toBe(true);
    }
  });

  it('a sequence step is named by its sequence and step; a send, a test send or an untagged message give none', () => {
    // Act
    const step = mailEventsOf(
      ses('Open', {
        org: [ORG],
        kind: ['sequence'],
        sequence: ['seq-1'],
        step: ['2'],
        contact: ['c-1'],
      }),
    );
    const none = [
      mailEventsOf(ses('Send', campaignTags)),
      mailEventsOf(ses('Open', { org: [ORG], kind: ['test'] })),
      mailEventsOf(ses('Open', {})),
    ];
    // Assert
    expect(step[0]?.data.mail).toMatchObject({
      kind: 'sequence',
      sequenceId: 'seq-1',
      step: 2,
    });
    expect(none).toEqual([[], [], []]);
  });

  it('the same SES event gives the same id; another click of the same mail, another id', () => {
    // Act
    const first = mailEventsOf(ses('Click', campaignTags))[0];
    const again = mailEventsOf(ses('Click', campaignTags))[0];
    const other = mailEventsOf({
      ...ses('Click', campaignTags),
      click: { timestamp: T1, link: 'https://shop.example/other' },
    } as SesEvent)[0];
    // Assert
    expect(again?.id).toBe(first?.id);
    expect(other?.id).not.toBe(first?.id);
    expect(first?.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(webhookEventId(ORG, 'mail.clicked', 'x')).not.toBe(
      webhookEventId('org-2', 'mail.clicked', 'x'),
    );
  });
});

describe("a test call's sample events (issue 32 §1)", () => {
  it.each(WEBHOOK_EVENT_TYPES)(
    '%s: its sample has the very shape of the real events (the document’s schema), marked test',
    (type) => {
      // Arrange
      const event = {
        id: webhookEventId(
          '00000000-0000-7000-8000-00000000000f',
          type,
          'sample',
        ),
        type,
        orgId: '00000000-0000-7000-8000-00000000000f',
        occurredAt: T1,
        data: sampleDataOf(type, T1),
        test: true as const,
      };
      // Act
      const parsed = v.safeParse(webhookPayloadSchema(type), payloadOf(event));
      // Assert
      expect(
        parsed.success
          ? []
          : parsed.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`),
      ).toEqual([]);
      // Nothing the schema does not name (it would have been stripped).
      expect(parsed.output).toEqual(payloadOf(event));
      expect(payloadOf(event).test).toBe(true);
    },
  );
});
