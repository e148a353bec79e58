import { beforeEach, describe, expect, it } from 'vitest';
import { consumeRequest } from '../../../shared/access/rate-limit.ts';
import { DynamoRateLimitCounter } from '../../../shared/adapters/aws/dynamo-rate-limit-counter.ts';
import type { Deps } from '../../../shared/deps.ts';
import {
  createTestDeps,
  fixedClock,
  testEngineClient,
} from '../../support/dynamo.ts';

/**
 * Two containers: each has its own limiter (and its own memory of the
 * log), both on the same table and the same clock.
 */
const twoContainers = async (clock: ReturnType<typeof fixedClock>) => {
  const { deps, tableName } = await createTestDeps({ clock });
  const table = { client: testEngineClient(), tableName };
  const other: Pick<Deps, 'rateLimits' | 'clock'> = {
    clock,
    rateLimits: new DynamoRateLimitCounter(table),
  };
  return [deps, other] as const;
};

// A clock in the future: DynamoDB Local really deletes items whose TTL is
// past, and the log's TTL follows the clock.
describe('the per-key rate limit (Limits), on the embedded DynamoDB', () => {
  let clock: ReturnType<typeof fixedClock>;
  let a: Pick<Deps, 'rateLimits' | 'clock'>;
  let b: Pick<Deps, 'rateLimits' | 'clock'>;

  beforeEach(async () => {
    clock = fixedClock('2030-01-07T10:00:00.000Z');
    [a, b] = await twoContainers(clock);
  });

  it('allows exactly 120 concurrent requests and refuses the 121st', async () => {
    // Act: 121 concurrent requests, half from each container.
    const states = await Promise.all(
      Array.from({ length: 121 }, (_, i) =>
        consumeRequest(i % 2 ? a : b, 'key-a'),
      ),
    );
    // Assert
    expect(states.filter((s) => s.allowed)).toHaveLength(120);
    expect(states.filter((s) => !s.allowed)).toHaveLength(1);
    expect(Math.min(...states.map((s) => s.remaining))).toBe(0);
  });

  it('A9: 120 per key in any 60 seconds, across a minute boundary and two containers', async () => {
    // Arrange: 120 requests in the last seconds of a calendar minute.
    clock.set('2030-01-07T10:00:50.000Z');
    for (let i = 0; i < 120; i++) {
      const state = await consumeRequest(i % 2 ? a : b, 'key-a');
      expect(state.allowed).toBe(true);
    }
    // Act: the next minute begins; both containers try again.
    clock.set('2030-01-07T10:01:00.500Z');
    const fromA = await consumeRequest(a, 'key-a');
    const fromB = await consumeRequest(b, 'key-a');
    // Assert: refused, and told to wait until 10:01:50, when the oldest leaves.
    expect(fromA).toMatchObject({ allowed: false, remaining: 0 });
    expect(fromB).toMatchObject({
      allowed: false,
      remaining: 0,
      resetSeconds: 50,
    });
  });

  it('A9: 120 per key in any 60 seconds, exactly: two containers racing at 8 requests a second for 90 s across minute boundaries', async () => {
    // Arrange: from 10:00:50, every 250 ms both containers at once.
    clock.set('2030-01-07T10:00:50.000Z');
    const admitted: number[] = [];
    const refused: number[] = [];

    // Act
    for (let step = 0; step < 360; step++) {
      const t = clock.now().getTime();
      const states = await Promise.all([
        consumeRequest(a, 'key-a'),
        consumeRequest(b, 'key-a'),
      ]);
      for (const state of states) (state.allowed ? admitted : refused).push(t);
      clock.advance(250);
    }

    // Assert: no 60-s interval holds more than 120 admissions (the fullest
    // ends at an admission)…
    const inWindowAt = (t: number) =>
      admitted.filter((at) => at > t - 60_000 && at <= t).length;
    for (const t of admitted) expect(inWindowAt(t)).toBeLessThanOrEqual(120);
    // …and a request is refused only when the window is really full.
    for (const t of refused) expect(inWindowAt(t)).toBe(120);
    // 10:00:50–10:01:04.875 and 10:01:50–10:02:04.875, then nothing.
    expect(admitted).toHaveLength(240);
  });

  it('admits again exactly when the oldest request leaves the window, one for one', async () => {
    // Arrange: one request at :00, 119 at :30.
    await consumeRequest(a, 'key-a');
    clock.set('2030-01-07T10:00:30.000Z');
    for (let i = 0; i < 119; i++) await consumeRequest(b, 'key-a');
    // Act and assert
    clock.set('2030-01-07T10:00:59.999Z');
    expect(await consumeRequest(a, 'key-a')).toMatchObject({
      allowed: false,
      resetSeconds: 1,
    });
    clock.set('2030-01-07T10:01:00.000Z');
    const reopened = await consumeRequest(a, 'key-a');
    const next = await consumeRequest(b, 'key-a');
    expect(reopened).toMatchObject({
      allowed: true,
      remaining: 0,
      resetSeconds: 30,
    });
    expect(next).toMatchObject({ allowed: false, resetSeconds: 30 });
  });

  it('refused requests consume nothing, and keys count apart', async () => {
    // Arrange: the key is full at :00.
    await Promise.all(
      Array.from({ length: 120 }, () => consumeRequest(a, 'key-a')),
    );
    // Act: hammering while refused.
    clock.set('2030-01-07T10:00:40.000Z');
    for (let i = 0; i < 30; i++) {
      expect((await consumeRequest(b, 'key-a')).allowed).toBe(false);
    }
    const other = await consumeRequest(a, 'key-b');
    clock.set('2030-01-07T10:01:00.000Z');
    const after = await consumeRequest(b, 'key-a');
    // Assert
    expect(other).toMatchObject({
      allowed: true,
      remaining: 119,
      resetSeconds: 60,
    });
    expect(after).toMatchObject({ allowed: true });
  });
});
