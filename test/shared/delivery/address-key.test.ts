/**
 * The key of an address in the suppression list: an HMAC-SHA256 of the
 * normalized address under the address key secret.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addressKeyOf } from '../../../shared/delivery/address-key.ts';

const SECRET = 'address-key-secret-of-the-tests-at-least-32';

describe('addressKeyOf', () => {
  it('is the base64url HMAC-SHA256 of the address under the secret', () => {
    // Arrange
    const expected = createHmac('sha256', SECRET)
      .update('ana@example.com')
      .digest('base64url');

    // Act
    const key = addressKeyOf(SECRET, 'ana@example.com');

    // Assert
    expect(key).toBe(expected);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('gives every spelling of one address one key: trimmed, lower-cased', () => {
    // Act
    const keys = new Set(
      [' Ana@Example.COM ', 'ana@example.com', 'ANA@EXAMPLE.COM\n'].map(
        (spelling) => addressKeyOf(SECRET, spelling),
      ),
    );

    // Assert
    expect(keys.size).toBe(1);
  });

  it('differs between addresses and between secrets', () => {
    // Act
    const ana = addressKeyOf(SECRET, 'ana@example.com');
    const bob = addressKeyOf(SECRET, 'bob@example.com');
    const otherSecret = addressKeyOf(`${SECRET}-2`, 'ana@example.com');

    // Assert
    expect(new Set([ana, bob, otherSecret]).size).toBe(3);
  });

  it('does not contain the address', () => {
    // Act
    const key = addressKeyOf(SECRET, 'ana@example.com');

    // Assert
    expect(key).not.toContain('ana');
    expect(key).not.toContain('@');
  });
});
