/**
 * What an Idempotency-Key gives. Its value, with the organization and the
 * API key that sent it, makes a secret (SHA-256) that is never stored;
 * from it come the record's id, the fingerprint of the request, the key
 * sealing the kept answer, and the ids a run creates. The table thus holds
 * no readable request or answer: an answer (a contact's address…) is read
 * only by presenting the same key again, from the same API key — so an
 * erasure leaves no readable address behind in a kept answer, and the
 * fingerprint of a short body cannot be tested against guessed addresses
 * without the key. A key a client makes up from guessable parts weakens
 * this; the docs ask for random keys (UUIDs).
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
} from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { stringify } from 'uuid';

/** Who sent a key, and the key: the scope of one record. */
export interface KeyScope {
  orgId: string;
  /** The API key's id. */
  keyId: string;
  /** The `Idempotency-Key` value. */
  key: string;
}

/** The secret of a key in its scope (32 bytes): kept in memory only. */
export type KeySecret = Buffer;

/**
 * The secret of `scope`. Its parts never hold a line break (ids, and a
 * key of visible ASCII), so the joined text names one scope only.
 */
export const keySecretOf = ({ orgId, keyId, key }: KeyScope): KeySecret =>
  createHash('sha256')
    .update(['idempotency', orgId, keyId, key].join('\n'), 'utf8')
    .digest();

const mac = (secret: KeySecret, purpose: string): Buffer =>
  createHmac('sha256', secret).update(purpose, 'utf8').digest();

/** The record's id: 43 base64url characters (no `#`, fit for a key). */
export const recordIdOf = (secret: KeySecret): string =>
  mac(secret, 'record').toString('base64url');

/** The fingerprint of a request, given as one canonical text. */
export const fingerprintOf = (secret: KeySecret, request: string): string =>
  mac(secret, `request\n${request}`).toString('base64url');

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * An answer sealed: gzip (a template's HTML shrinks several times, and
 * the item is billed by the KB), then AES-256-GCM under the key's answer
 * key: the random IV, the ciphertext, the tag.
 */
export const sealAnswer = (secret: KeySecret, answer: string): Uint8Array => {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', mac(secret, 'answer'), iv);
  const body = Buffer.concat([
    cipher.update(gzipSync(Buffer.from(answer, 'utf8'))),
    cipher.final(),
  ]);
  return new Uint8Array(Buffer.concat([iv, body, cipher.getAuthTag()]));
};

/**
 * The answer a seal holds. Throws when the seal was not made under this
 * secret or was changed (the tag does not check out).
 */
export const openAnswer = (secret: KeySecret, sealed: Uint8Array): string => {
  const bytes = Buffer.from(sealed);
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const body = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', mac(secret, 'answer'), iv);
  decipher.setAuthTag(tag);
  return gunzipSync(
    Buffer.concat([decipher.update(body), decipher.final()]),
  ).toString('utf8');
};

/**
 * The `n`-th id a run of the key creates: a UUIDv7 whose time is the first
 * run's start (`startedAt`, epoch ms), so ids still sort by creation time,
 * and whose 74 other bits come from the secret, the start and `n`: the
 * same on every run of the request, unguessable without the key, and new
 * when the key is used again after its record expired.
 */
export const derivedIdOf = (
  secret: KeySecret,
  startedAt: number,
  n: number,
): string => {
  const bytes = mac(secret, `id\n${startedAt}\n${n}`).subarray(0, 16);
  let time = startedAt;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  return stringify(bytes);
};
