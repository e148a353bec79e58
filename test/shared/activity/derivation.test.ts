/**
 * Issue 31, §4: what a contact's activity says, derived without a store —
 * the events of one committed write of a contact (status entered and how,
 * sign-up and confirmation with their consent, tags, field values), and
 * the event of one SES event (ids from the message's tags, the link
 * without the recipient's address). The same input always gives the same
 * ids: a redelivery writes the same items.
 */
import { describe, expect, it } from 'vitest';
import { contactActivityOf } from '../../../shared/activity/contact-activity.ts';
import {
  MAX_LINK_CHARS,
  mailActivityOf,
} from '../../../shared/activity/mail-activity.ts';
import { ADDRESS_MARK } from '../../../shared/activity/without-addresses.ts';
import type { ConsentRecord, Contact } from '../../../shared/audience/model.ts';

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

describe('the events of a contact write', () => {
  it('a new subscribed contact with tags and values: subscribed, its values, each tag, in that order, dated by the write', () => {
    // Arrange
    const after = contact({
      tagIds: ['t-1', 't-2'],
      fields: { plan: 'pro', seats: 3 },
    });
    // Act
    const events = contactActivityOf({ after, origin: 'api' });
    // Assert
    expect(events.map((e) => [e.type, e.tagId ?? null])).toEqual([
      ['subscribed', null],
      ['fields_changed', null],
      ['tagged', 't-1'],
      ['tagged', 't-2'],
    ]);
    expect(events[1]?.changes).toEqual([
      { key: 'plan', from: null, to: 'pro' },
      { key: 'seats', from: null, to: 3 },
    ]);
    expect(events.every((e) => e.at === T0 && e.via === 'api')).toBe(true);
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
    expect(events.every((e) => e.id.startsWith(`${T0}#`))).toBe(true);
  });

  it('a change: only what differs — a tag gained and one lost, a value changed and one removed', () => {
    // Arrange
    const before = contact({
      tagIds: ['t-1', 't-2'],
      fields: { plan: 'free', city: 'Oslo', seats: 2 },
    });
    const after = contact({
      tagIds: ['t-2', 't-3'],
      fields: { plan: 'pro', seats: 2 },
      updatedAt: T1,
      version: 2,
    });
    // Act
    const events = contactActivityOf({ before, after, origin: 'import' });
    // Assert
    expect(events).toEqual([
      expect.objectContaining({
        type: 'fields_changed',
        via: 'import',
        at: T1,
        changes: [
          { key: 'city', from: 'Oslo', to: null },
          { key: 'plan', from: 'free', to: 'pro' },
        ],
      }),
      expect.objectContaining({ type: 'tagged', tagId: 't-3' }),
      expect.objectContaining({ type: 'untagged', tagId: 't-1' }),
    ]);
  });

  it('a write that changes nothing it tells (names, a new confirmation link) has no event', () => {
    // Arrange
    const before = contact({ status: 'pending', confirmationNonce: 'n-1' });
    const after = contact({
      status: 'pending',
      confirmationNonce: 'n-2',
      firstName: 'Ann',
      updatedAt: T1,
      version: 2,
    });
    // Act
    const events = contactActivityOf({ before, after, origin: 'api' });
    // Assert
    expect(events).toEqual([]);
  });

  it('says how an unsubscribe came, and that a suppression entered its status', () => {
    // Arrange
    const before = contact();
    const left = contact({ status: 'unsubscribed', version: 2 });
    const bounced = contact({ status: 'bounced', version: 2 });
    // Act
    const byLink = contactActivityOf({ before, after: left, origin: 'link' });
    const byClient = contactActivityOf({
      before,
      after: left,
      origin: 'one_click',
    });
    const byReport = contactActivityOf({
      before,
      after: bounced,
      origin: 'delivery',
    });
    const unsaid = contactActivityOf({ before, after: left, origin: 'change' });
    // Assert
    expect(byLink).toEqual([
      expect.objectContaining({ type: 'unsubscribed', via: 'link' }),
    ]);
    expect(byClient).toEqual([
      expect.objectContaining({ type: 'unsubscribed', via: 'one_click' }),
    ]);
    expect(byReport).toEqual([
      expect.objectContaining({
        type: 'suppressed',
        status: 'bounced',
        via: 'delivery',
      }),
    ]);
    expect(unsaid[0]).not.toHaveProperty('via');
  });

  it('a sign-up on a hosted page carries its consent; its confirmation carries the consent it confirmed and the address it came from', () => {
    // Arrange
    const signedUp = contact({
      status: 'pending',
      joinedAt: undefined,
      consents: [consent()],
      version: 1,
    });
    const again = contact({
      ...signedUp,
      consents: [consent(), consent({ signedUpAt: T1, pageVersion: 4 })],
      updatedAt: T1,
      version: 2,
    });
    const confirmed = contact({
      ...again,
      status: 'subscribed',
      joinedAt: T1,
      confirmedAt: T1,
      confirmedIp: '198.51.100.2',
      consents: [
        consent(),
        consent({ signedUpAt: T1, pageVersion: 4, confirmedAt: T1 }),
      ],
      version: 3,
    });
    // Act
    const first = contactActivityOf({ after: signedUp, origin: 'form' });
    const second = contactActivityOf({
      before: signedUp,
      after: again,
      origin: 'form',
    });
    const third = contactActivityOf({
      before: again,
      after: confirmed,
      origin: 'confirmation',
    });
    // Assert
    expect(first).toEqual([
      expect.objectContaining({
        type: 'signed_up',
        via: 'form',
        consent: consent(),
      }),
    ]);
    expect(second).toEqual([
      expect.objectContaining({
        type: 'signed_up',
        consent: consent({ signedUpAt: T1, pageVersion: 4 }),
      }),
    ]);
    expect(third).toEqual([
      expect.objectContaining({
        type: 'confirmed',
        via: 'confirmation',
        ip: '198.51.100.2',
        consent: consent({ signedUpAt: T1, pageVersion: 4, confirmedAt: T1 }),
      }),
    ]);
  });

  it('only the confirmation link confirms: an import with a confirmation date subscribes', () => {
    // Arrange
    const after = contact({ confirmedAt: '2025-01-01T00:00:00.000Z' });
    // Act
    const events = contactActivityOf({ after, origin: 'import' });
    // Assert
    expect(events.map((e) => e.type)).toEqual(['subscribed']);
  });

  it('never holds the email address, not even where a referrer or a text value carried it, and gives the same ids for the same write', () => {
    // Arrange
    const after = contact({
      status: 'pending',
      tagIds: ['t-1'],
      fields: { plan: 'pro', work: 'Ann@Example.test' },
      consents: [
        consent({ referrer: 'https://blog.example/?who=ann%40example.TEST' }),
      ],
    });
    // Act
    const once = contactActivityOf({ after, origin: 'form' });
    const again = contactActivityOf({ after, origin: 'form' });
    // Assert
    expect(again).toEqual(once);
    expect(JSON.stringify(once).toLowerCase()).not.toMatch(
      /ann(@|%40)example\.test/,
    );
    expect(once[0]?.consent?.referrer).toBe(
      `https://blog.example/?who=${ADDRESS_MARK}`,
    );
    expect(once[1]?.changes).toContainEqual({
      key: 'work',
      from: null,
      to: ADDRESS_MARK,
    });
  });
});

describe('the event of an SES event', () => {
  const message = {
    id: 'm-1',
    kind: 'campaign' as const,
    campaignId: 'cmp-1',
  };

  it('is the same event for the same SES event, another for another type, instant or link', () => {
    // Arrange
    const open = { type: 'opened' as const, at: T1, message };
    // Act
    const first = mailActivityOf(open, ['ann@example.test']);
    const duplicate = mailActivityOf(open, ['ann@example.test']);
    const later = mailActivityOf({ ...open, at: T0 }, []);
    const click = mailActivityOf(
      { ...open, type: 'clicked', link: 'https://a.example/x' },
      [],
    );
    const otherClick = mailActivityOf(
      { ...open, type: 'clicked', link: 'https://a.example/y' },
      [],
    );
    // Assert
    expect(duplicate).toEqual(first);
    expect(first).toEqual({
      id: expect.stringMatching(/^2026-11-21T10:00:00\.000Z#m/),
      type: 'opened',
      at: T1,
      message,
    });
    expect(new Set([first.id, later.id, click.id, otherClick.id]).size).toBe(4);
  });

  it('keeps a clicked link without the recipient’s address, as it is or encoded, and cuts a long one', () => {
    // Arrange
    const address = 'Ann+News@Example.test';
    const link = `https://shop.example/p?u=${encodeURIComponent(address).toLowerCase()}&e=ann+news@example.TEST#x`;
    // Act
    const event = mailActivityOf({ type: 'clicked', at: T1, message, link }, [
      address.toLowerCase(),
    ]);
    const long = mailActivityOf(
      {
        type: 'clicked',
        at: T1,
        message,
        link: `https://a.example/${'x'.repeat(2000)}`,
      },
      [],
    );
    // Assert
    expect(event.link).toBe(
      `https://shop.example/p?u=${ADDRESS_MARK}&e=${ADDRESS_MARK}#x`,
    );
    expect([...(long.link ?? '')]).toHaveLength(MAX_LINK_CHARS);
    expect(long.link?.endsWith('…')).toBe(true);
  });
});
