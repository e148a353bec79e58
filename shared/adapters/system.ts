/**
 * Driven adapters for time and randomness.
 */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Clock, Ids } from '../ports.ts';

/** The machine's clock. */
export const systemClock: Clock = { now: () => new Date() };

/**
 * Time-ordered UUIDs and cryptographically random secrets. A request
 * without an Idempotency-Key runs once: its created ids are new ones.
 */
export const randomIds: Ids = {
  id: () => uuidv7(),
  secret: (bytes) => randomBytes(bytes).toString('base64url'),
  createdId: () => uuidv7(),
  rerun: false,
};
