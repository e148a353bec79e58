/**
 * Application logic: the per-key request rate, 120 requests in any rolling
 * 60 seconds (as Kit's API counts), exact across every container, locally
 * and on AWS alike.
 */
import type { AccessDeps as Deps } from './ports.ts';

/** Requests allowed per key in any rolling window (spec, Limits). */
export const REQUESTS_PER_MINUTE = 120;
/** The rolling window, in milliseconds. */
export const WINDOW_MS = 60_000;

/** What the caller may still do, as the RateLimit headers say it. */
export interface RateLimitState {
  limit: number;
  /** Requests the key may still make right now. */
  remaining: number;
  /**
   * Seconds until one more request is allowed: until the oldest admitted
   * request in the window leaves it (with none, the full window).
   */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * Admits one request of the key if fewer than 120 were admitted in the
 * 60 seconds before it. A refused request consumes nothing: the window
 * rolls on by itself, so hammering never extends a wait.
 */
export const consumeRequest = async (
  deps: Pick<Deps, 'rateLimits' | 'clock'>,
  keyId: string,
): Promise<RateLimitState> => {
  const now = deps.clock.now().getTime();
  const { admitted, inWindow } = await deps.rateLimits.admit(
    keyId,
    now,
    WINDOW_MS,
    REQUESTS_PER_MINUTE,
  );
  const oldest = inWindow[0];
  const untilOldestLeaves =
    oldest === undefined ? WINDOW_MS : oldest + WINDOW_MS - now;
  return {
    limit: REQUESTS_PER_MINUTE,
    remaining: Math.max(0, REQUESTS_PER_MINUTE - inWindow.length),
    resetSeconds: Math.max(1, Math.ceil(untilOldestLeaves / 1000)),
    allowed: admitted,
  };
};
