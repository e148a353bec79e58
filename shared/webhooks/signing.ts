/**
 * Signing per the Standard Webhooks scheme (standardwebhooks.com), so that
 * receivers verify with an existing library: a secret is `whsec_` and the
 * base64 of its key's bytes; a delivery carries `webhook-id` (the event's
 * id, the same on every attempt), `webhook-timestamp` (seconds) and
 * `webhook-signature`: `v1,` and the base64 HMAC-SHA256, under the key's
 * bytes, of `<id>.<timestamp>.<body>`. While a rolled secret is in its
 * grace, both sign: the header holds both signatures, space-separated, and
 * a receiver holding either verifies.
 */
import { createHmac } from 'node:crypto';
import type { Ids } from '../ports.ts';
import { SECRET_BYTES, type WebhookSecret } from './model.ts';

/** The prefix of a signing secret. */
export const SECRET_PREFIX = 'whsec_';

/** Who calls: the `user-agent` of every delivery. */
export const WEBHOOK_USER_AGENT = 'email-marketing-webhooks/1.0';

/** A new signing secret: `whsec_` and the base64 of 24 random bytes. */
export const newSecret = (ids: Pick<Ids, 'secret'>): string =>
  `${SECRET_PREFIX}${Buffer.from(ids.secret(SECRET_BYTES), 'base64url').toString('base64')}`;

/** The key's bytes of a secret. */
const keyOf = (secret: string): Buffer =>
  Buffer.from(
    secret.startsWith(SECRET_PREFIX)
      ? secret.slice(SECRET_PREFIX.length)
      : secret,
    'base64',
  );

/** One signature: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export const signatureOf = (
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string =>
  `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;

/** The secrets that sign at `now`: the current one, and one in its grace. */
export const signingSecrets = (
  secrets: readonly WebhookSecret[],
  now: Date,
): string[] =>
  secrets
    .filter(
      (secret) =>
        secret.expiresAt === undefined ||
        Date.parse(secret.expiresAt) > now.getTime(),
    )
    .map((secret) => secret.value);

/** The headers of one delivery attempt, signed with every secret given. */
export const webhookHeaders = (options: {
  id: string;
  body: string;
  secrets: readonly string[];
  now: Date;
}): Record<string, string> => {
  const timestamp = Math.floor(options.now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': options.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': options.secrets
      .map((secret) => signatureOf(secret, options.id, timestamp, options.body))
      .join(' '),
  };
};
