/**
 * What an Idempotency-Key gives (shared/idempotency/key-secret.ts): a
 * record id, fingerprints and sealed answers that only the key, in its
 * scope, reads; the ids its runs create, the same on every run.
 */
import { describe, expect, it } from 'vitest';
import {
  derivedIdOf,
  fingerprintOf,
  keySecretOf,
  openAnswer,
  recordIdOf,
  sealAnswer,
} from '../../../shared/idempotency/key-secret.ts';

const scope = { orgId: 'org-1', keyId: 'key-1', key: 'k-1' };
const secret = keySecretOf(scope);
const UUID_V7 =
  /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the secret of an Idempotency-Key', () => {
  it('names one record per organization, API key and key value', () => {
    const ids = [
      scope,
      { ...scope, orgId: 'org-2' },
      { ...scope, keyId: 'key-2' },
      { ...scope, key: 'k-2' },
    ].map((s) => recordIdOf(keySecretOf(s)));
    expect(new Set(ids).size).toBe(4);
    expect(recordIdOf(keySecretOf({ ...scope }))).toBe(ids[0]);
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('fingerprints a request: the same text, the same print; another, another', () => {
    expect(fingerprintOf(secret, 'POST /a {}')).toBe(
      fingerprintOf(secret, 'POST /a {}'),
    );
    expect(fingerprintOf(secret, 'POST /a {}')).not.toBe(
      fingerprintOf(secret, 'POST /a {"x":1}'),
    );
    // Under another key, the same request prints differently: a guessed
    // body cannot be tested against a print without the key.
    expect(
      fingerprintOf(keySecretOf({ ...scope, key: 'k-2' }), 'POST /a {}'),
    ).not.toBe(fingerprintOf(secret, 'POST /a {}'));
  });

  it('seals an answer only its key opens, compressed, and refuses a seal changed', () => {
    // Arrange
    const answer = JSON.stringify({
      statusCode: 201,
      body: `{"html":"${'<p>Hello</p>'.repeat(10_000)}"}`,
    });
    // Act
    const sealed = sealAnswer(secret, answer);
    const tampered = new Uint8Array(sealed);
    tampered[20] = (tampered[20] ?? 0) ^ 1;
    // Assert
    expect(openAnswer(secret, sealed)).toBe(answer);
    expect(sealed.byteLength).toBeLessThan(answer.length / 20);
    expect(Buffer.from(sealed).toString('latin1')).not.toContain('Hello');
    expect(() =>
      openAnswer(keySecretOf({ ...scope, key: 'k-2' }), sealed),
    ).toThrow();
    expect(() => openAnswer(secret, tampered)).toThrow();
  });

  it('derives the ids of a run: UUIDv7 at the first run’s start, the same on every run, new for each n and each start', () => {
    const startedAt = Date.parse('2030-05-06T09:00:00.123Z');
    const first = derivedIdOf(secret, startedAt, 0);
    expect(first).toMatch(UUID_V7);
    // The time part is the start, in ms: ids still sort by creation.
    expect(Number.parseInt(first.replaceAll('-', '').slice(0, 12), 16)).toBe(
      startedAt,
    );
    expect(derivedIdOf(secret, startedAt, 0)).toBe(first);
    const others = [
      derivedIdOf(secret, startedAt, 1),
      derivedIdOf(secret, startedAt + 1, 0),
      derivedIdOf(keySecretOf({ ...scope, keyId: 'key-2' }), startedAt, 0),
    ];
    for (const other of others) expect(other).toMatch(UUID_V7);
    expect(new Set([first, ...others]).size).toBe(4);
    // The random part changes with the start too, not only the time.
    expect(derivedIdOf(secret, startedAt + 1, 0).slice(14)).not.toBe(
      first.slice(14),
    );
  });
});
