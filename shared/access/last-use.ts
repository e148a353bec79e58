/**
 * The last use of each key, recorded without a write per request: a key's
 * mark is written only when the one stored is an hour old or more, on the
 * condition that it still is (so containers racing write it once), and
 * each container remembers the marks it wrote or saw, so a key in steady
 * use costs one conditional write an hour, not one per request. A failure
 * to record never fails the request: it is logged, and the next request
 * tries again.
 */
import { logger } from '../observability.ts';
import type { AccessDeps } from './ports.ts';

/**
 * How precise a key's last use is: the mark is rewritten once it is this
 * old, so the key's last use lies within this long after the mark.
 */
export const LAST_USE_PRECISION_MS = 60 * 60 * 1000;

/** Marks remembered per container before the memory starts afresh. */
const REMEMBERED_MARKS = 10_000;

/**
 * A recorder of key uses for one container: `record(keyId)` marks the key
 * used now, when its known mark is an hour old or more. It never throws.
 */
export const createUseRecorder = (
  deps: Pick<AccessDeps, 'access' | 'clock'>,
) => {
  // The newest mark this container knows per key (epoch ms).
  const known = new Map<string, number>();

  return async (keyId: string): Promise<void> => {
    const now = deps.clock.now();
    const mark = known.get(keyId);
    if (mark !== undefined && now.getTime() - mark < LAST_USE_PRECISION_MS) {
      return;
    }
    try {
      const stored = await deps.access.markUsed(
        keyId,
        now,
        new Date(now.getTime() - LAST_USE_PRECISION_MS),
      );
      if (known.size >= REMEMBERED_MARKS) known.clear();
      known.set(keyId, stored.getTime());
    } catch (error) {
      logger.warn('Could not record the last use of an API key', {
        keyId,
        error,
      });
    }
  };
};
