import { beforeAll, describe, expect, it } from 'vitest';
import { consumeRequest } from '../../../shared/access/rate-limit.ts';
import type { Deps } from '../../../shared/ports.ts';
import { createTestDeps, fixedClock } from '../../support/dynamo.ts';

describe('the per-key rate limit (Limits), on the embedded DynamoDB', () => {
  let deps: Deps;
  const clock = fixedClock('2026-11-22T10:00:00.000Z');

  beforeAll(async () => {
    ({ deps } = await createTestDeps({ clock }));
  });

  it('allows exactly 120 requests in a minute and refuses the 121st', async () => {
    // Act: 121 concurrent requests, as many containers would send them.
    const states = await Promise.all(
      Array.from({ length: 121 }, () => consumeRequest(deps, 'key-a')),
    );
    // Assert
    expect(states.filter((s) => s.allowed)).toHaveLength(120);
    expect(states.filter((s) => !s.allowed)).toHaveLength(1);
    expect(Math.min(...states.map((s) => s.remaining))).toBe(0);
  });

  it('opens a new window at the next minute, and counts keys apart', async () => {
    clock.set('2026-11-22T10:00:59.000Z');
    const last = await consumeRequest(deps, 'key-a');
    const other = await consumeRequest(deps, 'key-b');
    clock.set('2026-11-22T10:01:00.000Z');
    const next = await consumeRequest(deps, 'key-a');
    expect(last).toMatchObject({ allowed: false, resetSeconds: 1 });
    expect(other).toMatchObject({ allowed: true, remaining: 119 });
    expect(next).toMatchObject({
      allowed: true,
      remaining: 119,
      resetSeconds: 60,
    });
  });
});
