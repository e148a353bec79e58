/**
 * Ports of scheduling: one-shot deliveries of a message to a consumer queue
 * at a given time (a scheduled campaign, the next step of a sequence). On
 * AWS, EventBridge Scheduler; on the laptop, the local scheduler. A fire may
 * come late, or twice: the consumer re-checks the state it acts on.
 */
import { createHash } from 'node:crypto';

/** One one-shot delivery: `message` to the consumer queue `queue` at `at`. */
export interface ScheduledMessage {
  /** Unique per schedule; see {@link scheduleName}. */
  name: string;
  /** When to deliver (UTC); never before, possibly up to a minute after. */
  at: Date;
  /**
   * The logical name of a consumer group (e.g. `campaigns`): each adapter
   * resolves it to its real queue.
   */
  queue: string;
  /** The message, delivered as its JSON. */
  message: unknown;
}

/** Creates and cancels one-shot deliveries. */
export interface Scheduler {
  /**
   * Creates a one-shot schedule delivering `message` (JSON) to the consumer
   * queue `queue` at `at` (to the second, UTC; never before it). Idempotent:
   * the same name again replaces it (or is a no-op when equal).
   */
  schedule(s: ScheduledMessage): Promise<void>;
  /** Deletes it; a missing schedule is not an error. */
  cancel(name: string): Promise<void>;
}

/** What a service that schedules needs. */
export interface SchedulingDeps {
  scheduler: Scheduler;
}

/**
 * The shortest lead of a `scheduledAt` when no configuration says otherwise
 * (env `SCHEDULE_MIN_LEAD_SECONDS`): time enough for the request to commit
 * and for the scheduler to take the schedule before it falls due.
 */
export const DEFAULT_SCHEDULE_MIN_LEAD_SECONDS = 120;

/** The longest schedule name EventBridge Scheduler accepts. */
const MAX_NAME_LENGTH = 64;

/** Characters of the digest that ends a hashed name (~160 bits). */
const DIGEST_LENGTH = 27;

/** A part that can stand in a name as it is (no `.`: see below). */
const PLAIN_PART = /^[0-9a-zA-Z_-]+$/;

/** Whether `name` is a valid schedule name (1–64 of `[0-9a-zA-Z-_.]`). */
export const isScheduleName = (name: string): boolean =>
  /^[0-9a-zA-Z_.-]{1,64}$/.test(name);

/**
 * A schedule name for `parts` (e.g. `scheduleName('campaign', orgId, id)`),
 * valid for EventBridge Scheduler and the same for the same parts, so a
 * schedule can be replaced or cancelled from what it is about.
 *
 * Parts made of `[0-9a-zA-Z_-]` are joined with `.` when that fits in 64
 * characters. Otherwise the name is a readable prefix, `..` and a digest of
 * all the parts (SHA-256, 27 base64url characters). Distinct parts give
 * distinct names, but for a digest collision.
 */
export const scheduleName = (...parts: string[]): string => {
  if (parts.length === 0) throw new Error('A schedule name needs a part');
  const joined = parts.join('.');
  if (
    parts.every((part) => PLAIN_PART.test(part)) &&
    joined.length <= MAX_NAME_LENGTH
  ) {
    return joined;
  }
  const digest = createHash('sha256')
    .update(JSON.stringify(parts))
    .digest('base64url')
    .slice(0, DIGEST_LENGTH);
  const prefix = joined
    .replace(/[^0-9a-zA-Z_.-]/g, '_')
    .slice(0, MAX_NAME_LENGTH - DIGEST_LENGTH - 2);
  // `..` marks a hashed name: a joined name never has two dots in a row
  // (its parts are not empty), so the two kinds of name never meet.
  return `${prefix}..${digest}`;
};
