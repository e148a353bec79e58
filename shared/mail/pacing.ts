/**
 * Pacing: how every send of every organization shares the SES account's
 * rate, and how one sender spends its share.
 *
 * The account's rate is cut into **lanes** ({@link ratePlan}): a handful
 * of items of the table, each the timeline of a fixed part of the rate
 * (about 100 mails a second; one lane below that). A sender holds one or
 * more lanes and reserves a **run** of instants on each, half a second's
 * worth at a time, by one conditional write; runs of one lane follow one
 * another, so the lanes together never exceed the account's rate, and
 * senders on different lanes send at the same instant instead of taking
 * turns. Why lanes rather than one item:
 * - one item hands each reservation an exclusive stretch of the whole
 *   account's time, so only one sender sends at any instant, and one
 *   sender cannot keep up with a rate of hundreds a second;
 * - a lane's run is short (half a second) and a lane is picked by each
 *   sender, so a sequence step or a small campaign waits behind at most
 *   one run of a lane, never behind a big campaign's whole share;
 * - the items spread the pacer's writes (one per ~50 mails) over as many
 *   keys as the rate needs.
 *
 * Which lanes: a send takes a **block** of them when it starts (the next
 * one in turn, `SendPacer.nextBlock`), and its senders hold whole lanes
 * side by side in it ({@link firstLaneOf}); sends started in turn tile the
 * lanes, so every lane has a sender while the sends want the rate.
 *
 * A sender never spins: runs are reserved ahead of their use (while half
 * a run is left), the first instant of a fresh run is always used even if
 * the round trip made it a little late, a wait for an instant is bounded
 * by the sender's deadline, and what a sender reserved but did not use is
 * given back when no one reserved after it.
 */

import { logger } from '../observability.ts';
import type { Clock, Mailer, OutgoingMessage } from '../ports.ts';
import type { SendPacer } from './ports.ts';
import { isSendRefused, type SendRefusalKind } from './refusal.ts';

/**
 * The share of the account's rate the pacer hands out: sends leave on time
 * give or take a few milliseconds, and SES counts its rate over any second,
 * so a little headroom keeps a late send and an on-time one from meeting
 * in the same second.
 */
export const RATE_HEADROOM = 0.98;

/** The rate of one lane, about: the account's rate is cut into lanes of it. */
export const LANE_RATE = 100;

/** The least lateness an instant is still used with (see `Slots`). */
export const LATE_TOLERANCE_MS = 20;

/** Instants dropped in a row for a late wake before one is used anyway. */
const MAX_LATE_IN_A_ROW = 3;

/** A run: how long a stretch of a lane one reservation takes, at most. */
export const RUN_MS = 500;

/**
 * The most one sender carries, in mails a second: what a sender of
 * 1,024 MB composes and sends with room (README, deploy guide). A send
 * runs as many senders at once as its rate needs.
 */
export const SENDER_RATE = 250;

/**
 * The most one campaign sends, in mails a second, whatever the account's
 * rate: an account above it uses its whole rate across campaigns,
 * sequences and tenants, and a campaign stays within what its items'
 * partitions and its senders carry with room.
 */
export const CAMPAIGN_RATE = 1_000;

/** How the account's rate is shared. */
export interface RatePlan {
  /** Lanes of the account's rate (at least 1). */
  lanes: number;
  /** Each lane's rate, mails per second. */
  laneRate: number;
  /** Lanes one sender of a campaign holds. */
  lanesPerSender: number;
  /** One sender's share: what it aims at, mails per second. */
  senderRate: number;
  /** Senders one campaign runs at once. */
  sendersPerSend: number;
}

/**
 * The lanes of an account's rate and what one campaign's senders take of
 * them. Below {@link LANE_RATE} one lane carries the whole usable rate;
 * above it, lanes of a whole number of mails a second each, so that in any
 * second the lanes together hold at most the usable rate.
 */
export const ratePlan = (accountRate: number): RatePlan => {
  const usable = Math.max(1, accountRate) * RATE_HEADROOM;
  const lanes = Math.max(1, Math.ceil(usable / LANE_RATE));
  const laneRate = lanes === 1 ? usable : Math.floor(usable / lanes);
  const campaignLanes = Math.min(
    lanes,
    Math.max(1, Math.floor(CAMPAIGN_RATE / laneRate)),
  );
  // Whole lanes per sender, within its rate; as many senders as cover the
  // campaign's lanes (side by side: at most one lane shared, at the end).
  const lanesPerSender = Math.max(
    1,
    Math.min(campaignLanes, Math.floor(SENDER_RATE / laneRate)),
  );
  const sendersPerSend = Math.ceil(campaignLanes / lanesPerSender);
  return {
    lanes,
    laneRate,
    lanesPerSender,
    senderRate: lanesPerSender * laneRate,
    sendersPerSend,
  };
};

/**
 * Where the lanes of a send's block start: a block is as many lanes as
 * the send's senders hold together, and blocks follow one another around
 * the lanes, so that sends started in turn sit side by side.
 */
export const blockSeed = (plan: RatePlan, block: number): number =>
  block * plan.sendersPerSend * plan.lanesPerSender;

/**
 * The first lane a batch's sender holds: from the send's `seed`, each of
 * its senders has `lanesPerSender` lanes side by side, and batch `b` takes
 * those of batch `b − sendersPerSend`, the one it follows, so that the
 * send's lanes stay covered from one batch to the next.
 */
export const firstLaneOf = (
  plan: RatePlan,
  seed: number,
  batch: number,
): number =>
  (seed + (batch % plan.sendersPerSend) * plan.lanesPerSender) % plan.lanes;

/**
 * How long one send holds a slot of a sender: its claim, its composing,
 * its wait for the instant and the provider's call (~0.1 s), with room.
 */
const SEND_CYCLE_SECONDS = 0.25;

/**
 * How long a sender may run before stopping (its time budget): a
 * campaign's sender on its batch, a sequence step's on its one mail.
 */
export const SENDER_BUDGET_MS = 40_000;

/** Most sends of one sender in flight at once. */
export const MAX_PARALLEL_SENDS = 100;

/**
 * Sends in flight at once for a sender's rate: about the rate times what
 * one send takes, so that the sender keeps up with its instants; one at a
 * time cannot go past a dozen a second.
 */
export const parallelSendsFor = (senderRate: number): number =>
  Math.min(
    MAX_PARALLEL_SENDS,
    Math.max(1, Math.ceil(senderRate * SEND_CYCLE_SECONDS)),
  );

const sleep = (ms: number) =>
  ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

/** A reserved run of one lane, as far as this sender used it. */
interface Run {
  lane: number;
  /** The instant after the run (the lane's next free instant it left). */
  end: number;
}

/** One reserved instant. */
interface Instant {
  at: number;
  run: Run;
}

/** What a {@link Slots} is given. */
export interface SlotsOptions {
  /** How many sends the sender means to make (more may be taken). */
  wanted: number;
  /** Lanes to hold at once (1 to the plan's lanes). */
  lanes?: number;
  /** The first lane to try; a random one when absent. */
  firstLane?: number;
  /**
   * The last instant (clock milliseconds) this sender may still send at:
   * an instant past it is not waited for.
   */
  deadline?: number;
}

/**
 * One sender's instants of the shared rate: runs reserved on the lanes it
 * holds, merged in time order and handed out one per send. Reserves the
 * next runs while half of the current ones is left, so that a sender never
 * waits on the pacer's round trip. A sender keeps the lanes it was given
 * (its send's block, `firstLaneOf`): sends started in turn sit side by
 * side, so the lanes stay covered; one shared with another sender is
 * shared fairly, run by run, and none is left idle by senders moving off.
 */
export class Slots {
  private readonly queue: Instant[] = [];
  private readonly held: number[] = [];
  private readonly lastRun = new Map<number, Run>();
  private reserving: Promise<void> | undefined;
  private failure: unknown;
  /** Calls of take() so far, served or waiting. */
  private taken = 0;
  /** Instants handed out. */
  private given = 0;
  /** Instants taken off the queue and waited for. */
  private waiting = 0;
  /** Instants dropped in a row for waking too late. */
  private lateInARow = 0;
  private reservedTotal = 0;
  /** Pacer writes made (reservations and give-backs): for benchmarks. */
  writes = 0;
  /** Instants dropped for being too late to use: for benchmarks. */
  dropped = 0;

  constructor(
    private readonly deps: { pacer: SendPacer; clock: Clock },
    private readonly plan: RatePlan,
    private readonly options: SlotsOptions,
  ) {
    const lanes = Math.max(1, Math.min(plan.lanes, options.lanes ?? 1));
    const first =
      options.firstLane ?? Math.floor(Math.random() * Math.max(1, plan.lanes));
    for (let i = 0; i < lanes; i++) this.held.push((first + i) % plan.lanes);
  }

  private get interval(): number {
    return 1000 / this.plan.laneRate;
  }

  /**
   * How late an instant may still be used: beyond, it is dropped, never
   * caught up. A lane's interval, and at least what a busy event loop
   * delays a timer by: a lane then sends at most a few more in a second
   * than its rate, within the rate's headroom.
   */
  private get tolerance(): number {
    return Math.max(this.interval, LATE_TOLERANCE_MS);
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /**
   * Waits for the next instant this sender may send at: true then; false
   * when the next one is past the deadline (nothing is waited for).
   */
  async take(): Promise<boolean> {
    this.taken++;
    for (;;) {
      if (this.failure !== undefined) {
        const failure = this.failure;
        this.failure = undefined;
        throw failure;
      }
      const now = this.now();
      while (
        this.queue.length > 0 &&
        (this.queue[0] as Instant).at < now - this.tolerance
      ) {
        this.queue.shift();
        this.dropped++;
      }
      this.topUp();
      const next = this.queue[0];
      if (next === undefined) {
        // A waiting take() always wants one more: a reservation is under way.
        if (!this.reserving)
          throw new Error('Slots: no reservation to wait for');
        await this.reserving;
        continue;
      }
      if (
        this.options.deadline !== undefined &&
        next.at > this.options.deadline
      ) {
        this.taken--;
        return false;
      }
      this.queue.shift();
      this.waiting++;
      await sleep(next.at - this.now());
      this.waiting--;
      // Woken too late (a busy event loop): used now, it would bunch with
      // the instants after it. Dropped, and the next one waited for —
      // but never more than a few in a row: a loop that is always late
      // still sends, at the rate it can.
      if (
        this.now() - next.at > this.tolerance &&
        this.lateInARow < MAX_LATE_IN_A_ROW
      ) {
        this.lateInARow++;
        this.dropped++;
        continue;
      }
      this.lateInARow = 0;
      this.given++;
      return true;
    }
  }

  /** Starts the next reservation if half a run is left and more is wanted. */
  private topUp(): void {
    if (this.reserving) return;
    const wanted = Math.max(this.options.wanted, this.taken);
    const needed = wanted - this.given - this.waiting - this.queue.length;
    if (needed <= 0) return;
    const perRun = Math.max(
      1,
      Math.floor((this.plan.laneRate * RUN_MS) / 1000),
    );
    if (this.queue.length >= (this.held.length * perRun) / 2) return;
    this.reserving = this.reserve(needed, perRun)
      .catch((error: unknown) => {
        this.failure = error;
      })
      .finally(() => {
        this.reserving = undefined;
      });
  }

  /**
   * One run on each lane held, at most what is still needed: the last
   * instants are spread over every lane held (not packed into full runs on
   * a few), so that a batch's tail goes at the sender's whole rate.
   */
  private async reserve(needed: number, perRun: number): Promise<void> {
    const lanes = this.held.slice(0, Math.min(this.held.length, needed));
    let left = needed;
    const asks = lanes.map((lane, i) => {
      const count = Math.min(perRun, Math.ceil(left / (lanes.length - i)));
      left -= count;
      return { lane, count };
    });
    const requested = this.now();
    const runs = await Promise.all(
      asks.map(async ({ lane, count }) => {
        const start = await this.deps.pacer.reserve(
          lane,
          count,
          this.plan.laneRate,
          new Date(requested),
        );
        this.writes++;
        return { lane, count, start };
      }),
    );
    const arrived = this.now();
    for (const { lane, count, start } of runs) {
      const run: Run = {
        lane,
        end: start + Math.ceil((count * 1000) / this.plan.laneRate),
      };
      this.lastRun.set(lane, run);
      this.reservedTotal += count;
      let late: Instant | undefined;
      for (let i = 0; i < count; i++) {
        const at = start + Math.floor(i * this.interval);
        if (at < arrived - this.tolerance) {
          // Made late by the round trip: only the last of them is kept,
          // used at once, so that a lone send never misses its run.
          if (late) this.dropped++;
          late = { at: arrived, run };
          continue;
        }
        if (late) {
          this.queue.push(late);
          late = undefined;
        }
        this.queue.push({ at, run });
      }
      if (late) this.queue.push(late);
    }
    this.queue.sort((a, b) => a.at - b.at);
  }

  /**
   * Gives back what was reserved and not used: on each lane whose last
   * run is still the lane's end, the lane's next free instant moves back
   * to this sender's first unused one. Called when the sender is done.
   */
  async release(): Promise<void> {
    await this.reserving?.catch(() => undefined);
    const now = this.now();
    const unused = new Map<number, number>();
    for (const { at, run } of this.queue) {
      if (at < now || this.lastRun.get(run.lane) !== run) continue;
      const first = unused.get(run.lane);
      if (first === undefined || at < first) unused.set(run.lane, at);
    }
    this.queue.length = 0;
    await Promise.all(
      [...unused].map(async ([lane, from]) => {
        const run = this.lastRun.get(lane) as Run;
        this.writes++;
        try {
          await this.deps.pacer.giveBack(lane, Math.max(from, now), run.end);
        } catch (error) {
          // Not given back: the lane runs idle for less than a run.
          logger.warn('Unused instants not given back', { lane, error });
        }
      }),
    );
  }

  /** Instants reserved so far: for benchmarks. */
  get reserved(): number {
    return this.reservedTotal;
  }
}

/** The longest pause after a throttled send. */
const MAX_THROTTLE_PAUSE_MS = 5_000;

/** What became of one paced send. */
export type SendResult =
  | { kind: 'sent'; messageId: string }
  | { kind: Exclude<SendRefusalKind, 'throttled'> | 'throttled' }
  /** `stillWanted` said no at the last instant: nothing was sent. */
  | { kind: 'withdrawn' }
  /** No instant came before the sender's deadline: nothing was sent. */
  | { kind: 'late' };

/**
 * Sends one message at the next instant of the shared rate. Throttled: a
 * pause growing each time, a new instant, again — until the deadline
 * (never a failure of the recipient). `stillWanted`, when given, is asked
 * at each instant, just before the provider is called: false withdraws the
 * send.
 */
export const sendPaced = async (
  deps: { mailer: Mailer },
  slots: Slots,
  mail: OutgoingMessage,
  deadline: number,
  stillWanted?: () => Promise<boolean>,
): Promise<SendResult> => {
  for (let attempt = 0; ; attempt++) {
    if (!(await slots.take())) {
      return attempt === 0 ? { kind: 'late' } : { kind: 'throttled' };
    }
    if (stillWanted && !(await stillWanted())) return { kind: 'withdrawn' };
    try {
      const { messageId } = await deps.mailer.send(mail);
      return { kind: 'sent', messageId };
    } catch (error) {
      if (isSendRefused(error, 'throttled')) {
        const pause = Math.min(MAX_THROTTLE_PAUSE_MS, 250 * 2 ** attempt);
        if (Date.now() + pause > deadline) return { kind: 'throttled' };
        logger.info('Send throttled: slowing down', { attempt, pause });
        await sleep(pause);
        continue;
      }
      if (isSendRefused(error, 'rejected')) return { kind: 'rejected' };
      if (isSendRefused(error, 'paused')) return { kind: 'paused' };
      logger.warn('Send outcome unknown: the claim stays', { error });
      return { kind: 'uncertain' };
    }
  }
};
