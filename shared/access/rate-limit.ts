/**
 * Application logic: the per-key request rate, counted in fixed one-minute
 * windows shared by every container (so the limit is exact, locally and on
 * AWS alike).
 */
import type { Deps } from '../ports.ts';

/** Requests allowed per key and minute (spec, Limits). */
export const REQUESTS_PER_MINUTE = 120;
const WINDOW_MS = 60_000;

/** What the caller may still do in the current window. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * Counts one request of the key and tells whether it is within the limit.
 * Refused requests count too, so hammering does not reopen the window.
 */
export const consumeRequest = async (
  deps: Pick<Deps, 'rateLimits' | 'clock'>,
  keyId: string,
): Promise<RateLimitState> => {
  const now = deps.clock.now().getTime();
  const windowStart = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  const windowEnd = windowStart + WINDOW_MS;
  // Keep the counter a little past its window; TTL deletion is lazy anyway.
  const count = await deps.rateLimits.hit(
    keyId,
    windowStart,
    new Date(windowEnd + WINDOW_MS),
  );
  return {
    limit: REQUESTS_PER_MINUTE,
    remaining: Math.max(0, REQUESTS_PER_MINUTE - count),
    resetSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    allowed: count <= REQUESTS_PER_MINUTE,
  };
};
