/**
 * Pacing on the embedded engine: how the account's rate is cut into
 * lanes, and how a sender's instants come — at once for a lone step,
 * never by spinning on the pacer, never past the deadline, never above the
 * rate with several senders at once, and given back when unused. The
 * pacer's round trip is made AWS-like (a fixed extra latency) where the
 * behaviour depends on it.
 */
import { describe, expect, it } from 'vitest';
import {
  blockSeed,
  CAMPAIGN_RATE,
  firstLaneOf,
  parallelSendsFor,
  RATE_HEADROOM,
  ratePlan,
  SENDER_RATE,
  Slots,
} from '../../../shared/mail/pacing.ts';
import type { SendPacer } from '../../../shared/mail/ports.ts';
import type { Clock } from '../../../shared/ports.ts';
import { createTestDeps } from '../../support/dynamo.ts';

const realClock: Clock = { now: () => new Date() };

/** One reservation the pacer answered. */
interface Reservation {
  lane: number;
  count: number;
  rate: number;
  start: number;
  /** Which sender made it (see `slowPacer(…).as`). */
  by: number;
}

/**
 * The pacer of the embedded engine, each call `latencyMs` longer, its
 * reservations recorded: `as(n)` is the same pacer for sender n.
 */
const slowPacer = (pacer: SendPacer, latencyMs: number) => {
  const calls = { reserve: 0, giveBack: 0 };
  const reservations: Reservation[] = [];
  const wait = () => new Promise((r) => setTimeout(r, latencyMs));
  const as = (by: number): SendPacer => ({
    reserve: async (lane, count, rate, now) => {
      calls.reserve++;
      await wait();
      const start = await pacer.reserve(lane, count, rate, now);
      reservations.push({ lane, count, rate, start, by });
      await wait();
      return start;
    },
    giveBack: async (...args) => {
      calls.giveBack++;
      await wait();
      return pacer.giveBack(...args);
    },
    nextBlock: () => pacer.nextBlock(),
  });
  return { pacer: as(0), as, calls, reservations };
};

/** Every instant the reservations hold, in order. */
const instantsOf = (reservations: readonly Reservation[]) =>
  reservations
    .flatMap((r) =>
      Array.from(
        { length: r.count },
        (_, i) => r.start + Math.floor((i * 1000) / r.rate),
      ),
    )
    .sort((a, b) => a - b);

/** The most instants in any second. */
const busiestSecond = (instants: readonly number[]) => {
  let most = 0;
  let from = 0;
  for (let to = 0; to < instants.length; to++) {
    while ((instants[to] as number) - (instants[from] as number) >= 1_000) {
      from++;
    }
    most = Math.max(most, to - from + 1);
  }
  return most;
};

describe('ratePlan', () => {
  it('keeps a new account’s rate in one lane, at 98 % of it', () => {
    expect(ratePlan(14)).toEqual({
      lanes: 1,
      laneRate: 14 * RATE_HEADROOM,
      lanesPerSender: 1,
      senderRate: 14 * RATE_HEADROOM,
      sendersPerSend: 1,
    });
  });

  it('cuts a fast account into lanes of a whole number of mails a second that never add up past 98 % of the rate', () => {
    for (const rate of [100, 150, 400, 1_000, 2_500, 5_000]) {
      const plan = ratePlan(rate);
      expect(Number.isInteger(plan.laneRate)).toBe(true);
      expect(plan.lanes * plan.laneRate).toBeLessThanOrEqual(
        rate * RATE_HEADROOM,
      );
      expect(plan.lanes * plan.laneRate).toBeGreaterThanOrEqual(rate * 0.96);
    }
  });

  it('runs as many senders for one campaign as its rate needs, up to 1,000 a second', () => {
    const at1000 = ratePlan(1_000);
    expect(at1000.sendersPerSend * at1000.senderRate).toBeGreaterThanOrEqual(
      980,
    );
    expect(at1000.sendersPerSend).toBe(5);
    expect(at1000.lanesPerSender).toBe(2);
    const at5000 = ratePlan(5_000);
    expect(at5000.lanes).toBe(49);
    expect(at5000.sendersPerSend * at5000.senderRate).toBeLessThanOrEqual(
      1_200,
    );
  });

  it('gives a campaign’s senders whole lanes side by side, at most one shared, each within the sender rate', () => {
    for (let rate = 1; rate <= 20_000; rate += rate < 1_000 ? 7 : 193) {
      const plan = ratePlan(rate);
      const campaignLanes = Math.min(
        plan.lanes,
        Math.max(1, Math.floor(CAMPAIGN_RATE / plan.laneRate)),
      );
      const held = plan.sendersPerSend * plan.lanesPerSender;
      expect(held).toBeGreaterThanOrEqual(campaignLanes);
      expect(held - campaignLanes).toBeLessThan(plan.lanesPerSender);
      if (plan.lanesPerSender > 1) {
        expect(plan.senderRate).toBeLessThanOrEqual(SENDER_RATE);
      }
    }
  });

  it('puts sends started one after the other side by side on the lanes, and a batch on the lanes of the sender it follows', () => {
    // 5,000/s: 49 lanes, five senders of two lanes a send.
    const plan = ratePlan(5_000);
    const lanesOf = (block: number, batch: number) => {
      const first = firstLaneOf(plan, blockSeed(plan, block), batch);
      return Array.from(
        { length: plan.lanesPerSender },
        (_, i) => (first + i) % plan.lanes,
      );
    };
    const sendLanes = (block: number) =>
      Array.from({ length: plan.sendersPerSend }, (_, b) =>
        lanesOf(block, b),
      ).flat();

    // Four sends started in turn hold 40 distinct lanes.
    const four = [0, 1, 2, 3].flatMap(sendLanes);
    expect(new Set(four).size).toBe(40);
    // Five cover all 49 (one lane shared, where the ring closes).
    expect(new Set([0, 1, 2, 3, 4].flatMap(sendLanes)).size).toBe(49);
    // Batch b + senders takes the lanes of batch b.
    expect(lanesOf(2, 7)).toEqual(lanesOf(2, 7 - plan.sendersPerSend));
  });

  it('keeps about a quarter of a second of a sender’s rate in flight', () => {
    expect(parallelSendsFor(14)).toBe(4);
    expect(parallelSendsFor(294)).toBe(74);
    expect(parallelSendsFor(100_000)).toBe(100);
  });
});

describe('Slots', () => {
  it('sends a lone step at once at 150/s with a 10 ms round trip: one reservation, no spinning (the pacer’s tail)', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const { pacer, calls } = slowPacer(deps.pacer, 5);
    const slots = new Slots({ pacer, clock: realClock }, ratePlan(150), {
      wanted: 1,
    });

    // Act
    const started = Date.now();
    const took = await slots.take();
    const waited = Date.now() - started;

    // Assert
    expect(took).toBe(true);
    expect(calls.reserve).toBe(1);
    expect(waited).toBeLessThan(1_000);
  });

  it('uses the first instant of a fresh run even when the round trip made it late', async () => {
    // Arrange: 40 ms each way, at 1,000/s (lanes of 98/s: 10 ms apart).
    const { deps } = await createTestDeps();
    const { pacer, calls } = slowPacer(deps.pacer, 40);
    const slots = new Slots({ pacer, clock: realClock }, ratePlan(1_000), {
      wanted: 1,
    });

    // Act
    const took = await slots.take();

    // Assert
    expect(took).toBe(true);
    expect(calls.reserve).toBe(1);
  });

  it('makes one pacer write per run of a lane: about one per 50 mails', async () => {
    // Arrange: 200 sends at 1,000/s on 3 lanes (a sender's share).
    const { deps } = await createTestDeps();
    const plan = ratePlan(1_000);
    const { pacer, calls } = slowPacer(deps.pacer, 5);
    const slots = new Slots({ pacer, clock: realClock }, plan, {
      wanted: 200,
      lanes: plan.lanesPerSender,
      firstLane: 0,
    });

    // Act
    const taken = await Promise.all(
      Array.from({ length: 20 }, async () => {
        let n = 0;
        while (n < 10 && (await slots.take())) n++;
        return n;
      }),
    );
    await slots.release();

    // Assert: a reservation per lane per run of 49, and nothing reserved
    // beyond what was sent or dropped as too late (a busy machine's timers).
    // At the end each lane may hold two runs partly used: its current one
    // and the one reserved ahead while half the current was left (which a
    // slow machine's late timers make likelier).
    expect(taken.reduce((a, b) => a + b, 0)).toBe(200);
    expect(slots.reserved).toBe(200 + slots.dropped);
    expect(calls.reserve).toBeLessThanOrEqual(
      Math.ceil(slots.reserved / 49) + 2 * plan.lanesPerSender,
    );
  });

  it('spreads a batch’s last instants over every lane it holds, so that its tail goes at the sender’s whole rate', async () => {
    // Arrange: 40 sends on a sender's two lanes of 98/s (a run is 49).
    const { deps } = await createTestDeps();
    const plan = ratePlan(1_000);
    const { pacer, reservations } = slowPacer(deps.pacer, 1);
    const slots = new Slots({ pacer, clock: realClock }, plan, {
      wanted: 40,
      lanes: plan.lanesPerSender,
      firstLane: 0,
    });

    // Act
    await Promise.all(Array.from({ length: 60 }, () => slots.take()));
    await slots.release();

    // Assert: the first round asks 20 of each lane, not 40 of one (later
    // rounds only replace instants a slow machine dropped).
    expect(
      reservations
        .slice(0, 2)
        .map((r) => [r.lane, r.count])
        .sort(),
    ).toEqual([
      [0, 20],
      [1, 20],
    ]);
  });

  it('does not wait past its deadline for a lane another sender holds far ahead, and reserves once', async () => {
    // Arrange: lane 0 of a 14/s account is taken for the next minute.
    const { deps } = await createTestDeps();
    const plan = ratePlan(14);
    await deps.pacer.reserve(0, 800, plan.laneRate, new Date());
    const { pacer, calls } = slowPacer(deps.pacer, 1);
    const slots = new Slots({ pacer, clock: realClock }, plan, {
      wanted: 5,
      deadline: Date.now() + 1_000,
    });

    // Act
    const started = Date.now();
    const took = await slots.take();

    // Assert
    expect(took).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(calls.reserve).toBe(1);
  });

  it('gives back what it reserved and did not use: the next sender starts where it stopped', async () => {
    // Arrange: one lane at 14/s, 10 wanted, 2 used.
    const { deps } = await createTestDeps();
    const plan = ratePlan(14);
    const slots = new Slots({ pacer: deps.pacer, clock: realClock }, plan, {
      wanted: 10,
    });
    await slots.take();
    await slots.take();

    // Act
    await slots.release();
    const next = await deps.pacer.reserve(0, 1, plan.laneRate, new Date());

    // Assert: the third instant, not the eleventh.
    expect(next - Date.now()).toBeLessThan(300);
  });

  it('keeps the senders of one campaign at 1,000/s within the rate in every second, all of them reserving side by side', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const plan = ratePlan(1_000);
    const { as, reservations } = slowPacer(deps.pacer, 5);
    const senders = Array.from(
      { length: plan.sendersPerSend },
      (_, i) =>
        new Slots({ pacer: as(i), clock: realClock }, plan, {
          wanted: 400,
          lanes: plan.lanesPerSender,
          firstLane: i * plan.lanesPerSender,
        }),
    );

    // Act: each sender takes its 400 instants with 45 sends in flight.
    await Promise.all(
      senders.map((slots) => {
        let left = 400;
        return Promise.all(
          Array.from({ length: 45 }, async () => {
            while (left > 0) {
              left--;
              await slots.take();
            }
          }),
        );
      }),
    );
    await Promise.all(senders.map((s) => s.release()));

    // Assert: what the pacer handed out never exceeds 98 % of the rate in
    // any second, and every sender had a run under way at the start.
    expect(busiestSecond(instantsOf(reservations))).toBeLessThanOrEqual(980);
    const firstRuns = senders.map((_, by) =>
      Math.min(...reservations.filter((r) => r.by === by).map((r) => r.start)),
    );
    expect(Math.max(...firstRuns) - Math.min(...firstRuns)).toBeLessThan(1_000);
  });
});
