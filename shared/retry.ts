/**
 * Optimistic concurrency: the one way to re-run a read-change-write step
 * whose conditional write lost a race, with one attempt budget for the
 * whole service. Agnostic to where data is stored.
 */
import pRetry from 'p-retry';
import { ConflictError } from './errors.ts';

/**
 * Attempts of one read-change-write step before its conflict is reported
 * (a 409). Five: a step loses a race only to a write that landed between
 * its read and its write, so five losses in a row mean sustained
 * contention on one item, which the caller should see rather than wait on.
 */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Backoff between attempts: 10 ms doubling, each delay drawn at random
 * between one and two times its step (10–20, 20–40, 40–80, 80–160 ms), so
 * racing writers spread out. At most 300 ms of waiting in all.
 */
const BACKOFF = { minTimeout: 10, factor: 2, randomize: true } as const;

/**
 * Marks a conflict as a lost race, so the step runs again, and rethrows it.
 * Any other error passes through unmarked. Use it on the conditional write
 * alone (`await save(...).catch(retryable)`), never on the checks before
 * it: a rule that refuses with a `ConflictError` must not be retried.
 */
export type Retryable = (error: unknown) => never;

/**
 * Runs `step` until it succeeds, retrying with jittered backoff only while
 * it fails with a conflict it marked with `retryable`, at most
 * `CONFLICT_ATTEMPTS` times in all. The last conflict then surfaces as it
 * was thrown; every other error surfaces at once.
 */
export const retryOnConflict = <T>(
  step: (retryable: Retryable, attempt: number) => Promise<T>,
): Promise<T> => {
  const races = new WeakSet<object>();
  const retryable: Retryable = (error) => {
    if (error instanceof ConflictError) races.add(error);
    throw error;
  };
  return pRetry((attempt) => step(retryable, attempt), {
    ...BACKOFF,
    retries: CONFLICT_ATTEMPTS - 1,
    shouldRetry: ({ error }) => races.has(error),
  });
};
