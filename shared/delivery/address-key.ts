/**
 * The key of an address in the suppression list: a keyed hash (HMAC-SHA256
 * under the platform's address key, base64url) of the normalized address.
 * Suppressions are stored under it, so an address can be looked up — one
 * key per address, as the send path reads it — without the item having to
 * hold the address: an erased person's suppression keeps only the hash.
 *
 * The address key is one secret of the deployment, never rotated: every
 * stored suppression is keyed by it, so a new key would need every item
 * rekeyed (and an erased address, whose item no longer says it, could not
 * be). Without the key the hash cannot be tested against guessed
 * addresses; with it, it can, so the key is read only by what reads or
 * writes suppressions.
 */
import { createHmac } from 'node:crypto';
import { normalizeEmail } from '../validation.ts';

/** The address key secret, fetched when first needed. */
export type AddressKeySecret = () => Promise<string>;

/**
 * The key of `email` under `secret`: 43 base64url characters (no `#`, so
 * it sits in a sort key as is). Trimmed and lower-cased first, so every
 * spelling of one address has one key.
 */
export const addressKeyOf = (secret: string, email: string): string =>
  createHmac('sha256', secret)
    .update(normalizeEmail(email), 'utf8')
    .digest('base64url');
