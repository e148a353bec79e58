/**
 * The local SES emulator's sending limits: a middleware on the local
 * SESv2Client that refuses a SendEmail as SES does when the account's quota
 * (the provider's state file, `admin local quota set`) does not allow it,
 * and counts the sends it lets through.
 *
 * - The rate: a token bucket refilled at `maxSendRate` tokens a second and
 *   holding one second's sends; a send finding no token is refused with
 *   `TooManyRequestsException` "Maximum sending rate exceeded." The
 *   sustained rate is `maxSendRate`, while a send a few milliseconds late
 *   followed by one on time still passes: SES, too, tolerates a brief
 *   burst over the rate and refuses a lasting one. The bucket is in memory
 *   (the local stack sends from one process) and in real time: a movable
 *   clock jumping forward makes no one send faster.
 * - The 24 hours: a send that would pass `max24HourSend` within the rolling
 *   24 hours is refused with `TooManyRequestsException` "Daily message quota
 *   exceeded.", the throttling error SES answers (its guide: "Errors related
 *   to the sending quotas for your Amazon SES account"). The sends are
 *   counted per minute of the injected Clock (the stack's movable clock) in
 *   the state file's `sent`, so LocalEmailProvider's `sentLast24Hours` is
 *   real and slides with that clock, to the minute.
 * - Cheap at 100 sends a second: a check costs a `stat` of the state file
 *   (re-read only when it changed: the admin CLI may set a new quota), and
 *   accepted sends are written in groups: while one write holds the file's
 *   lock, the sends accepted meanwhile wait for the next, which takes them
 *   all. A send resolves once its count is written, so a caller that reads
 *   the account afterwards sees it.
 *
 * Sends in flight count against the 24 hours from their check, so two
 * concurrent sends cannot both take the last one left. Another process
 * counting on the same file is seen at its next write (file changed).
 */
import { stat } from 'node:fs/promises';
import {
  type SESv2Client,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { logger } from '../../observability.ts';
import type { Clock } from '../../ports.ts';
import { readJsonFile } from './json-file.ts';
import {
  countLast24Hours,
  minuteOf,
  type ProviderState,
  parseProviderState,
  recordSent,
  sentPerMinute,
} from './local-email-provider.ts';

/** Options of {@link LocalSendLimits}. */
export interface LocalSendLimitsOptions {
  /** The time of the 24-hour count (the local stack's movable clock). */
  clock: Clock;
  /** Real time in ms, for the rate; default `performance.now()`. */
  realNow?: () => number;
}

/** A send let through: it is counted once it succeeds. */
export interface Admission {
  /** The send succeeded: count it (resolves once written). */
  accept(): Promise<void>;
  /** The send failed: give its place in the 24 hours back. */
  release(): void;
}

/** What the state file says, as last read. */
interface Known {
  max24HourSend: number;
  maxSendRate: number;
  perMinute: Map<number, number>;
}

const SECOND_MS = 1000;

/** Seconds of sends the rate's bucket holds: the burst SES lets through. */
export const BURST_SECONDS = 1;

/** The least burst, whatever the rate. */
export const MIN_BURST = 1;

/** The sends a bucket holds at a rate. */
export const burstOf = (maxSendRate: number): number =>
  Math.max(MIN_BURST, maxSendRate * BURST_SECONDS);

const knownOf = (state: ProviderState): Known => ({
  max24HourSend: state.quota.max24HourSend,
  maxSendRate: state.quota.maxSendRate,
  perMinute: sentPerMinute(state),
});

/** The throttling error SES answers, with its message. */
const throttling = (message: string) =>
  new TooManyRequestsException({
    message,
    $metadata: { httpStatusCode: 429 },
  });

/** Adds `counts` to `into`, minute by minute. */
const addCounts = (into: Map<number, number>, counts: Map<number, number>) => {
  for (const [minute, count] of counts) {
    into.set(minute, (into.get(minute) ?? 0) + count);
  }
};

/** The sending limits of one local account (one provider state file). */
export class LocalSendLimits {
  private readonly clock: Clock;
  private readonly realNow: () => number;
  private known: Known | undefined;
  /** The state file's `stat` when last read. */
  private version: string | undefined;
  private refreshing: Promise<void> | undefined;
  /**
   * Bumped when a write replaces `known`: a read begun before is stale, as
   * is one that ends while a write is under way (the file may or may not
   * hold the counts being written).
   */
  private generation = 0;
  /** The rate's bucket: tokens left, as of `refilledAt` (real time). */
  private tokens: number | undefined;
  private refilledAt = 0;
  /** Sends checked and not yet over. */
  private inFlight = 0;
  /** Accepted sends not yet written, and those being written. */
  private pending = new Map<number, number>();
  private writing = new Map<number, number>();
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly stateFile: string,
    options: LocalSendLimitsOptions,
  ) {
    this.clock = options.clock;
    this.realNow = options.realNow ?? (() => performance.now());
  }

  /**
   * Lets one send through, or throws SES's `TooManyRequestsException`: for
   * the rate ("Maximum sending rate exceeded.") or the 24-hour quota
   * ("Daily message quota exceeded.").
   */
  async admit(): Promise<Admission> {
    // 1. The quota and the counts, fresh from the file if it changed.
    await this.refresh();
    const known = this.known;
    if (!known) throw new Error(`${this.stateFile} could not be read`);

    // 2. The checks and the reservation, with no await in between, so that
    //    concurrent sends see each other.
    const real = this.realNow();
    const burst = burstOf(known.maxSendRate);
    this.tokens = Math.min(
      burst,
      (this.tokens ?? burst) +
        ((real - this.refilledAt) * known.maxSendRate) / SECOND_MS,
    );
    this.refilledAt = real;
    const sent =
      countLast24Hours(known.perMinute, this.clock.now()) +
      this.sum(this.writing) +
      this.sum(this.pending) +
      this.inFlight;
    if (sent >= known.max24HourSend) {
      throw throttling('Daily message quota exceeded.');
    }
    if (this.tokens < 1) {
      throw throttling('Maximum sending rate exceeded.');
    }
    this.tokens -= 1;
    this.inFlight++;

    // 3. Counted on success, given back on failure; once only.
    let over = false;
    const end = () => {
      if (over) return false;
      over = true;
      this.inFlight--;
      return true;
    };
    return {
      accept: async () => {
        if (!end()) return;
        const minute = minuteOf(this.clock.now().getTime());
        this.pending.set(minute, (this.pending.get(minute) ?? 0) + 1);
        await this.write();
      },
      release: () => {
        end();
      },
    };
  }

  /** The sends of `counts` within the 24 hours. */
  private sum(counts: Map<number, number>): number {
    return countLast24Hours(counts, this.clock.now());
  }

  /** Re-reads the state file when it changed since the last read. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.readIfChanged().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readIfChanged(): Promise<void> {
    const generation = this.generation;
    const stats = await stat(this.stateFile).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
    const version = stats
      ? `${stats.ino}:${stats.mtimeMs}:${stats.size}`
      : 'missing';
    if (this.known && version === this.version) return;
    const state = parseProviderState(
      await readJsonFile(this.stateFile),
      this.stateFile,
    );
    // A write ended or is under way: its state is as new as this read.
    if (
      this.known &&
      (generation !== this.generation || this.writing.size > 0)
    ) {
      return;
    }
    this.known = knownOf(state);
    this.version = version;
  }

  /**
   * Writes the accepted sends, in turn with the other writes: the first
   * write after an acceptance takes every send accepted until it starts.
   * A failed write keeps its counts for the next; the send is not failed
   * (the email is gone), the failure is logged.
   */
  private write(): Promise<void> {
    this.writes = this.writes.then(async () => {
      if (this.pending.size === 0) return;
      this.writing = this.pending;
      this.pending = new Map();
      try {
        const state = await recordSent(
          this.stateFile,
          this.writing,
          this.clock.now(),
        );
        this.known = knownOf(state);
        // Read the file again at the next check: another process may have
        // changed it since this write.
        this.version = undefined;
        this.generation++;
      } catch (error) {
        logger.warn('Could not count the local sends', { error });
        addCounts(this.pending, this.writing);
      } finally {
        this.writing = new Map();
      }
    });
    return this.writes;
  }
}

/**
 * Adds the limits to an SESv2Client (the local emulator's): its SendEmail
 * calls are checked before anything is sent and counted once they succeed;
 * its other calls pass untouched. Returns the client.
 */
export const withSendLimits = (
  client: SESv2Client,
  limits: LocalSendLimits,
): SESv2Client => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendEmailCommand') return next(args);
      const admission = await limits.admit();
      let output: Awaited<ReturnType<typeof next>>;
      try {
        output = await next(args);
      } catch (error) {
        admission.release();
        throw error;
      }
      await admission.accept();
      return output;
    },
    { step: 'initialize', name: 'localSendLimits' },
  );
  return client;
};
