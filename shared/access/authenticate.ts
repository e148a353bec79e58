/**
 * Application logic: turns an `x-api-key` value into the caller, or refuses.
 * One DynamoDB read per key and container per cache period, and the key's
 * last use recorded at most once an hour (`last-use.ts`).
 */
import { UnauthorizedError } from '../errors.ts';
import { apiKeyMatches, hashApiKey, keyIdOf } from './api-key.ts';
import { createUseRecorder } from './last-use.ts';
import type { Caller } from './model.ts';
import type { AccessDeps as Deps } from './ports.ts';

type AuthDeps = Pick<Deps, 'access' | 'clock' | 'apiKeyCacheTtlSeconds'>;

const MISSING = 'Missing API key: send it in the x-api-key header';
const INVALID =
  'Invalid API key: unknown, revoked, or its owner left the organization';

/**
 * Resolves API keys to callers, remembering positive answers for a short
 * while. A revocation or a member's removal therefore takes effect within
 * `apiKeyCacheTtlSeconds` on a warm container. Failures are never cached.
 */
export const createAuthenticator = (deps: AuthDeps) => {
  const cache = new Map<string, { caller: Caller; expiresAt: number }>();
  const recordUse = createUseRecorder(deps);

  const resolve = async (value: string | undefined): Promise<Caller> => {
    // 1. Refuse a missing or malformed value without any read.
    if (!value) throw new UnauthorizedError('auth.missingKey', MISSING);
    const keyId = keyIdOf(value);
    if (!keyId) throw new UnauthorizedError('auth.invalidKey', INVALID);

    // 2. Serve a fresh cached answer for exactly this value.
    const now = deps.clock.now().getTime();
    const cacheKey = hashApiKey(value);
    const cached = cache.get(cacheKey);
    if (cached && cached.expiresAt > now) return cached.caller;
    cache.delete(cacheKey);

    // 3. One read: the key record, which carries the creator's current role.
    const record = await deps.access.findKey(keyId);
    if (
      !record ||
      record.revokedAt ||
      !apiKeyMatches(value, record.secretHash)
    ) {
      throw new UnauthorizedError('auth.invalidKey', INVALID);
    }
    const caller: Caller = {
      keyId: record.keyId,
      orgId: record.orgId,
      userId: record.userId,
      role: record.role,
      ...(record.scopes ? { scopes: record.scopes } : {}),
    };
    if (deps.apiKeyCacheTtlSeconds > 0) {
      cache.set(cacheKey, {
        caller,
        expiresAt: now + deps.apiKeyCacheTtlSeconds * 1000,
      });
    }
    return caller;
  };

  /** The caller of a key value, its use recorded (which never fails it). */
  return async (value: string | undefined): Promise<Caller> => {
    const caller = await resolve(value);
    await recordUse(caller.keyId);
    return caller;
  };
};

/** Resolves an `x-api-key` value to its caller. */
export type Authenticator = ReturnType<typeof createAuthenticator>;
