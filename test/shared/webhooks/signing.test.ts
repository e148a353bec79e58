/**
 * Signing per Standard Webhooks, checked by the `standardwebhooks` package
 * (what receivers use): a delivery verifies with the endpoint's secret, a
 * tampered one does not, and during a secret's grace after a roll both the
 * old and the new secret verify the same delivery.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  newSecret,
  SECRET_PREFIX,
  signatureOf,
  signingSecrets,
  webhookHeaders,
} from '../../../shared/webhooks/signing.ts';

const ids = {
  secret: (bytes: number) => Buffer.alloc(bytes, 7).toString('base64url'),
};

const id = 'evt_0123456789abcdef0123456789abcdef';
const body = JSON.stringify({ id, type: 'contact.created', data: { a: 1 } });

describe('webhook signing', () => {
  it('makes a secret of whsec_ and the base64 of 24 random bytes', () => {
    // Act
    const secret = newSecret(ids);

    // Assert
    expect(secret.startsWith(SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')).toEqual(
      Buffer.alloc(24, 7),
    );
  });

  it('signs what the standardwebhooks package verifies, and nothing tampered', () => {
    // Arrange
    const secret = newSecret({
      secret: (bytes) => Buffer.alloc(bytes, 42).toString('base64url'),
    });
    const headers = webhookHeaders({
      id,
      body,
      secrets: [secret],
      now: new Date(),
    });

    // Act
    const verified = new Webhook(secret).verify(body, headers);

    // Assert
    expect(verified).toEqual(JSON.parse(body));
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(
      'No matching signature',
    );
    expect(() =>
      new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_x' }),
    ).toThrow('No matching signature');
  });

  it('signs with both secrets during a roll’s grace: the old and the new both verify', () => {
    // Arrange
    const now = new Date();
    const old = newSecret({
      secret: (bytes) => Buffer.alloc(bytes, 1).toString('base64url'),
    });
    const fresh = newSecret({
      secret: (bytes) => Buffer.alloc(bytes, 2).toString('base64url'),
    });
    const secrets = signingSecrets(
      [
        { value: fresh, createdAt: now.toISOString() },
        {
          value: old,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + 60_000).toISOString(),
        },
      ],
      now,
    );
    const headers = webhookHeaders({ id, body, secrets, now });

    // Act
    const byOld = new Webhook(old).verify(body, headers);
    const byNew = new Webhook(fresh).verify(body, headers);

    // Assert
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(byOld).toEqual(JSON.parse(body));
    expect(byNew).toEqual(JSON.parse(body));
  });

  it('stops signing with a rolled secret once its grace is over', () => {
    // Arrange
    const now = new Date('2030-01-02T00:00:00Z');
    const secrets = [
      { value: 'whsec_bmV3', createdAt: '2030-01-01T00:00:00.000Z' },
      {
        value: 'whsec_b2xk',
        createdAt: '2029-01-01T00:00:00.000Z',
        expiresAt: '2030-01-02T00:00:00.000Z',
      },
    ];

    // Act
    const signing = signingSecrets(secrets, now);

    // Assert
    expect(signing).toEqual(['whsec_bmV3']);
  });

  it('signs "id.timestamp.body" with the secret’s decoded bytes (the scheme’s example)', () => {
    // Arrange: the example of the Standard Webhooks specification.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const example = '{"test": 2432232314}';

    // Act
    const signature = signatureOf(
      secret,
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      example,
    );

    // Assert
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});
