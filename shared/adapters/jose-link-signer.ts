/**
 * Driven adapter: public links carry a JWS (HS256) made with jose. Checking
 * a link needs the secret only, no database read; each token names its
 * purpose, so a confirmation token cannot unsubscribe anyone.
 */
import { webcrypto } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { ExpiredLinkError, InvalidLinkError } from '../errors.ts';
import type { Clock, LinkSigner } from '../ports.ts';

/** Signs with a secret fetched once, lazily (it may live in Secrets Manager). */
export class JoseLinkSigner implements LinkSigner {
  private key: Promise<webcrypto.CryptoKey> | undefined;

  constructor(
    private readonly secret: () => Promise<string>,
    private readonly clock: Clock,
  ) {}

  async sign(
    purpose: string,
    claims: Record<string, string>,
    ttlSeconds: number,
  ): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ ...claims, pur: purpose })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(await this.signingKey());
  }

  async verify(
    purpose: string,
    token: string,
  ): Promise<Record<string, string>> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, await this.signingKey(), {
        algorithms: ['HS256'],
        currentDate: this.clock.now(),
      }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        throw new ExpiredLinkError('link.expired', 'This link has expired', {
          cause: error,
        });
      }
      throw new InvalidLinkError('link.invalid', 'This link is not valid', {
        cause: error,
      });
    }
    if (payload.pur !== purpose) {
      throw new InvalidLinkError('link.invalid', 'This link is not valid');
    }
    return Object.fromEntries(
      Object.entries(payload).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  }

  /**
   * The HMAC key, imported once: jose imports raw bytes again on every
   * call, which was half of what signing a mail's links cost.
   */
  private signingKey(): Promise<webcrypto.CryptoKey> {
    this.key ??= this.secret().then((secret) => {
      if (secret.length < 32) {
        throw new Error(
          'The link signing secret must be at least 32 characters',
        );
      }
      return webcrypto.subtle.importKey(
        'raw',
        new TextEncoder().encode(secret),
        { name: 'HMAC', hash: 'SHA-256' },
        false,
        ['sign', 'verify'],
      );
    });
    return this.key;
  }
}
