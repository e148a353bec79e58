import { describe, expect, it } from 'vitest';
import type { AudienceEvent } from '../../../shared/audience/events.ts';
import {
  type ContactWrite,
  factsOf,
  publishContactFacts,
} from '../../../shared/audience/facts.ts';
import type { Contact } from '../../../shared/audience/model.ts';

const contact = (overrides: Partial<Contact> = {}): Contact => ({
  id: 'c-1',
  listId: 'list-1',
  email: 'ann@example.test',
  status: 'pending',
  tagIds: [],
  createdAt: '2026-11-20T10:00:00.000Z',
  updatedAt: '2026-11-20T10:00:00.000Z',
  version: 1,
  ...overrides,
});

const write = (overrides: Partial<ContactWrite>): ContactWrite => ({
  orgId: 'org-1',
  after: contact(),
  origin: 'change',
  ...overrides,
});

describe('the facts of a committed contact write', () => {
  it('makes a first join and each tag of a new subscribed contact, dated by the write', () => {
    // Arrange
    const after = contact({
      status: 'subscribed',
      joinedAt: '2026-11-21T09:00:00.000Z',
      updatedAt: '2026-11-21T09:00:00.000Z',
      tagIds: ['t-1', 't-2'],
    });
    // Act
    const events = factsOf(write({ after }));
    // Assert
    const base = {
      orgId: 'org-1',
      listId: 'list-1',
      contactId: 'c-1',
      at: '2026-11-21T09:00:00.000Z',
    };
    expect(events).toEqual([
      { type: 'contact.joinedList', ...base },
      { type: 'contact.tagged', ...base, tagId: 't-1' },
      { type: 'contact.tagged', ...base, tagId: 't-2' },
    ]);
  });

  it('makes only the tag a change adds, and no second join', () => {
    // Arrange
    const before = contact({
      status: 'subscribed',
      joinedAt: '2026-11-21T09:00:00.000Z',
      tagIds: ['t-1'],
    });
    const after = { ...before, tagIds: ['t-1', 't-2'], version: 2 };
    // Act
    const events = factsOf(write({ before, after }));
    // Assert
    expect(events).toEqual([
      expect.objectContaining({ type: 'contact.tagged', tagId: 't-2' }),
    ]);
  });

  it('makes a join when a pending contact confirms', () => {
    // Arrange
    const before = contact();
    const after = contact({
      status: 'subscribed',
      joinedAt: '2026-11-22T08:00:00.000Z',
      updatedAt: '2026-11-22T08:00:00.000Z',
    });
    // Act / Assert
    expect(factsOf(write({ before, after }))).toEqual([
      expect.objectContaining({
        type: 'contact.joinedList',
        at: '2026-11-22T08:00:00.000Z',
      }),
    ]);
  });

  it('makes nothing of an import, even a subscribed, tagged new contact', () => {
    // Arrange
    const after = contact({
      status: 'subscribed',
      joinedAt: '2026-11-21T09:00:00.000Z',
      tagIds: ['t-1'],
    });
    // Act / Assert
    expect(factsOf(write({ after, origin: 'import' }))).toEqual([]);
  });

  it('makes the tag of a later change of an imported contact, and nothing the import did', () => {
    // Arrange: imported subscribed with t-1; then tagged t-2 by hand.
    const before = contact({
      status: 'subscribed',
      joinedAt: '2026-11-21T09:00:00.000Z',
      tagIds: ['t-1'],
    });
    const after = { ...before, tagIds: ['t-1', 't-2'], version: 2 };
    // Act / Assert
    expect(factsOf(write({ before, after, origin: 'change' }))).toEqual([
      expect.objectContaining({ type: 'contact.tagged', tagId: 't-2' }),
    ]);
  });

  it('publishes the events of a write, and calls nobody for a write without any', async () => {
    // Arrange
    const calls: AudienceEvent[][] = [];
    const deps = {
      audienceEvents: {
        publish: async (events: AudienceEvent[]) => {
          calls.push(events);
        },
      },
    };
    const joined = contact({ status: 'subscribed', joinedAt: 'x' });
    // Act
    await publishContactFacts(deps, write({ after: contact() }));
    await publishContactFacts(deps, write({ after: joined }));
    // Assert
    expect(calls).toEqual([
      [expect.objectContaining({ type: 'contact.joinedList' })],
    ]);
  });
});
