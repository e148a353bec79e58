import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  advanceClock,
  LocalClock,
} from '../../../../shared/adapters/local/local-clock.ts';
import {
  fireDueSchedules,
  LocalScheduler,
  startLocalScheduleRunner,
} from '../../../../shared/adapters/local/local-scheduler.ts';
import type { Clock } from '../../../../shared/ports.ts';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const MINUTE = 60_000;
const QUEUES = ['campaigns', 'sequences'];

/** What `deliver` was given, in order. */
type Delivered = { queue: string; body: string }[];

describe('the local scheduler', () => {
  let dir: string;
  let file: string;
  let time: number;
  const clock: Clock = { now: () => new Date(time) };
  let delivered: Delivered;
  const deliver = async (queue: string, body: string) => {
    delivered.push({ queue, body });
  };
  const scheduler = () => new LocalScheduler(file, { queues: QUEUES });
  const at = (minutes: number) => new Date(T0 + minutes * MINUTE);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-scheduler-'));
    file = join(dir, 'schedules.json');
    time = T0;
    delivered = [];
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps a schedule in the file until it is due, then delivers its JSON once', async () => {
    // Arrange
    await scheduler().schedule({
      name: 'campaign.c1',
      at: at(5),
      queue: 'campaigns',
      message: { campaignId: 'c1' },
    });
    // Act
    const early = await fireDueSchedules({ file, clock, deliver });
    time = T0 + 5 * MINUTE;
    const due = await fireDueSchedules({ file, clock, deliver });
    const again = await fireDueSchedules({ file, clock, deliver });
    // Assert
    expect(early).toEqual([]);
    expect(due).toEqual(['campaign.c1']);
    expect(again).toEqual([]);
    expect(delivered).toEqual([
      { queue: 'campaigns', body: '{"campaignId":"c1"}' },
    ]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ schedules: {} });
  });

  it('fires what was scheduled before a restart, by a new scheduler and runner', async () => {
    // Arrange: scheduled by one process, which then stops.
    await scheduler().schedule({
      name: 'step.s1',
      at: at(1),
      queue: 'sequences',
      message: { step: 1 },
    });
    time = T0 + 2 * MINUTE;
    // Act: a new process runs the file.
    const runner = startLocalScheduleRunner({
      file,
      clock,
      deliver,
      intervalMs: 20,
    });
    await vi.waitFor(() => expect(delivered).toHaveLength(1));
    await runner.stop();
    // Assert
    expect(delivered).toEqual([{ queue: 'sequences', body: '{"step":1}' }]);
  });

  it('fires everything a clock advance skipped at once, the earliest first, and nothing later', async () => {
    // Arrange: the local stack's movable clock, and three schedules.
    const clockFile = join(dir, 'clock.json');
    const localClock = new LocalClock(clockFile, { checkEveryMs: 0 });
    const now = Date.now();
    const s = scheduler();
    for (const [name, hours] of [
      ['b', 48],
      ['a', 24],
      ['c', 96],
    ] as const) {
      await s.schedule({
        name,
        at: new Date(now + hours * 60 * MINUTE),
        queue: 'sequences',
        message: { name },
      });
    }
    // Act
    const before = await fireDueSchedules({ file, clock: localClock, deliver });
    await advanceClock(clockFile, 3 * 24 * 60);
    const after = await fireDueSchedules({ file, clock: localClock, deliver });
    // Assert
    expect(before).toEqual([]);
    expect(after).toEqual(['a', 'b']);
    expect(delivered.map((d) => d.body)).toEqual([
      '{"name":"a"}',
      '{"name":"b"}',
    ]);
    const left = JSON.parse(await readFile(file, 'utf8'));
    expect(Object.keys(left.schedules)).toEqual(['c']);
  });

  it('never fires before its time: the time is rounded up to the second', async () => {
    // Arrange
    await scheduler().schedule({
      name: 'x',
      at: new Date(T0 + 200),
      queue: 'campaigns',
      message: 1,
    });
    // Act
    time = T0 + 500;
    const early = await fireDueSchedules({ file, clock, deliver });
    time = T0 + 1000;
    const due = await fireDueSchedules({ file, clock, deliver });
    // Assert
    expect(early).toEqual([]);
    expect(due).toEqual(['x']);
  });

  it('keeps a schedule whose delivery failed for the next round, and reports it', async () => {
    // Arrange
    await scheduler().schedule({
      name: 'x',
      at: at(0),
      queue: 'campaigns',
      message: { n: 1 },
    });
    const failure = new Error('queue down');
    const onError = vi.fn();
    // Act
    const failed = await fireDueSchedules({
      file,
      clock,
      deliver: () => Promise.reject(failure),
      onError,
    });
    const retried = await fireDueSchedules({ file, clock, deliver });
    // Assert
    expect(failed).toEqual([]);
    expect(onError).toHaveBeenCalledWith(failure, 'x');
    expect(retried).toEqual(['x']);
    expect(delivered).toEqual([{ queue: 'campaigns', body: '{"n":1}' }]);
  });

  it('replaces a schedule of the same name', async () => {
    // Arrange
    const s = scheduler();
    await s.schedule({ name: 'x', at: at(1), queue: 'campaigns', message: 1 });
    // Act
    await s.schedule({ name: 'x', at: at(2), queue: 'campaigns', message: 2 });
    time = T0 + 10 * MINUTE;
    await fireDueSchedules({ file, clock, deliver });
    // Assert
    expect(delivered).toEqual([{ queue: 'campaigns', body: '2' }]);
  });

  it('keeps a schedule replaced while its old version was being delivered', async () => {
    // Arrange
    const s = scheduler();
    await s.schedule({ name: 'x', at: at(0), queue: 'campaigns', message: 1 });
    // Act: the same name is scheduled anew during the delivery.
    await fireDueSchedules({
      file,
      clock,
      deliver: async (queue, body) => {
        await s.schedule({
          name: 'x',
          at: at(60),
          queue: 'campaigns',
          message: 2,
        });
        await deliver(queue, body);
      },
    });
    time = T0 + 60 * MINUTE;
    await fireDueSchedules({ file, clock, deliver });
    // Assert
    expect(delivered.map((d) => d.body)).toEqual(['1', '2']);
  });

  it('cancels a schedule, and a missing one without an error', async () => {
    // Arrange
    const s = scheduler();
    await s.schedule({ name: 'x', at: at(0), queue: 'campaigns', message: 1 });
    // Act
    await s.cancel('x');
    await s.cancel('x');
    await new LocalScheduler(join(dir, 'none.json'), { queues: [] }).cancel(
      'y',
    );
    // Assert
    expect(await fireDueSchedules({ file, clock, deliver })).toEqual([]);
    expect(delivered).toEqual([]);
  });

  it('refuses an unknown queue, an invalid name, a message that is not JSON and an invalid time', async () => {
    // Arrange
    const s = scheduler();
    const valid = { name: 'x', at: at(0), queue: 'campaigns', message: 1 };
    // Act
    const failures = [
      s.schedule({ ...valid, queue: 'events' }),
      s.schedule({ ...valid, name: 'a b' }),
      s.schedule({ ...valid, message: undefined }),
      s.schedule({ ...valid, at: new Date(Number.NaN) }),
    ];
    // Assert
    await expect(failures[0]).rejects.toThrow(
      'No queue is bound for scheduled messages to events',
    );
    await expect(failures[1]).rejects.toThrow('Invalid schedule name');
    await expect(failures[2]).rejects.toThrow('needs JSON');
    await expect(failures[3]).rejects.toThrow('needs a valid time');
    expect(await fireDueSchedules({ file, clock, deliver })).toEqual([]);
  });

  it('waits for the delivery under way when stopped', async () => {
    // Arrange: a slow delivery.
    await scheduler().schedule({
      name: 'x',
      at: at(0),
      queue: 'campaigns',
      message: 1,
    });
    let started!: () => void;
    const deliveryStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const runner = startLocalScheduleRunner({
      file,
      clock,
      deliver: async (queue, body) => {
        started();
        await new Promise((resolve) => setTimeout(resolve, 100));
        await deliver(queue, body);
      },
    });
    await deliveryStarted;
    // Act
    await runner.stop();
    // Assert: delivered and removed before stop() returned.
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ schedules: {} });
  });

  it('reports a round that failed and goes on with the next', async () => {
    // Arrange: a file that is not a schedules file.
    await writeFile(file, JSON.stringify({ schedules: { x: { at: 'soon' } } }));
    const onError = vi.fn();
    // Act
    const runner = startLocalScheduleRunner({
      file,
      clock,
      deliver,
      onError,
      intervalMs: 10,
    });
    await vi.waitFor(() =>
      expect(onError.mock.calls.length).toBeGreaterThanOrEqual(2),
    );
    await writeFile(file, JSON.stringify({ schedules: {} }));
    await scheduler().schedule({
      name: 'x',
      at: at(0),
      queue: 'campaigns',
      message: 1,
    });
    await vi.waitFor(() => expect(delivered).toHaveLength(1));
    await runner.stop();
    // Assert
    expect(onError.mock.calls[0]?.[0]).toBeInstanceOf(Error);
    expect(String(onError.mock.calls[0]?.[0])).toContain(
      `${file} is not a schedules file`,
    );
  });
});
