/**
 * API key values. A value is `emk_<keyId as 32 hex>_<43-char secret>`: the id
 * inside it lets one read find the stored record, whose hash must then match
 * the whole value. Only the hash is ever stored.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const VALUE_PATTERN = /^emk_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

/** Bytes of randomness in a key's secret part (256 bits). */
export const KEY_SECRET_BYTES = 32;

/** Builds the value of a new key from its id and a random secret. */
export const formatApiKey = (keyId: string, secret: string): string =>
  `emk_${keyId.replaceAll('-', '')}_${secret}`;

/** Extracts the key id of a well-formed value; undefined for anything else. */
export const keyIdOf = (value: string): string | undefined => {
  const hex = VALUE_PATTERN.exec(value)?.[1];
  if (!hex) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * SHA-256 of the value, hex. The secret carries 256 random bits, so a fast
 * hash is safe here: there is nothing to brute-force.
 */
export const hashApiKey = (value: string): string =>
  createHash('sha256').update(value).digest('hex');

/** Compares a value with a stored hash in constant time. */
export const apiKeyMatches = (value: string, storedHash: string): boolean => {
  const actual = Buffer.from(hashApiKey(value), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
};
