/**
 * What a suppression does to one contact (`followSuppression`): its status
 * taken, the first reason kept, and a confirmation link it held voided, so
 * an unsubscribed address that signed up again cannot confirm while it is
 * suppressed.
 */
import { describe, expect, it } from 'vitest';
import type { Contact } from '../../../shared/audience/model.ts';
import {
  followSuppression,
  SUPPRESSED_STATUS,
} from '../../../shared/audience/suppressed.ts';

const NOW = '2026-11-28T10:00:00.000Z';

const contact = (changes: Partial<Contact>): Contact => ({
  id: 'c1',
  listId: 'l1',
  email: 'ana@example.com',
  status: 'subscribed',
  tagIds: [],
  joinedAt: '2026-01-01T00:00:00.000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  version: 3,
  ...changes,
});

describe('followSuppression', () => {
  it('gives a bounce and a complaint their statuses, and the other reasons unsubscribed', () => {
    expect(SUPPRESSED_STATUS).toEqual({
      bounce: 'bounced',
      complaint: 'complained',
      manual: 'unsubscribed',
      imported: 'unsubscribed',
      erased: 'unsubscribed',
    });
  });

  it('unsubscribes a subscribed contact, with unsubscribedAt', () => {
    // Act
    const after = followSuppression(contact({}), 'unsubscribed', NOW);

    // Assert
    expect(after).toMatchObject({
      status: 'unsubscribed',
      unsubscribedAt: NOW,
      updatedAt: NOW,
    });
  });

  it('voids the link of an unsubscribed contact that signed up again, and of a pending one', () => {
    // Act
    const resigned = followSuppression(
      contact({ status: 'unsubscribed', confirmationNonce: 'n1' }),
      'unsubscribed',
      NOW,
    );
    const pending = followSuppression(
      contact({ status: 'pending', confirmationNonce: 'n2' }),
      'bounced',
      NOW,
    );

    // Assert
    expect(resigned.status).toBe('unsubscribed');
    expect(resigned.confirmationNonce).toBeUndefined();
    expect(resigned.updatedAt).toBe(NOW);
    expect(pending.status).toBe('bounced');
    expect(pending.confirmationNonce).toBeUndefined();
  });

  it('leaves a bounced or complained contact, and an unsubscribed one without a link, as they are (the same object: nothing to write)', () => {
    // Arrange
    const bounced = contact({ status: 'bounced' });
    const complained = contact({ status: 'complained' });
    const unsubscribed = contact({ status: 'unsubscribed' });

    // Act / Assert
    expect(followSuppression(bounced, 'unsubscribed', NOW)).toBe(bounced);
    expect(followSuppression(complained, 'bounced', NOW)).toBe(complained);
    expect(followSuppression(unsubscribed, 'unsubscribed', NOW)).toBe(
      unsubscribed,
    );
  });
});
