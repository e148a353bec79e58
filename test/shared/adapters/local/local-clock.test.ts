import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  advanceClock,
  LocalClock,
  readClock,
  resetClock,
} from '../../../../shared/adapters/local/local-clock.ts';

const MINUTE = 60_000;
const REAL = Date.parse('2030-01-01T12:00:00.000Z');

describe('the local movable clock', () => {
  let dir: string;
  let file: string;
  /** The real time the clock under test sees. */
  let real: number;
  const clock = (checkEveryMs?: number) =>
    new LocalClock(file, {
      realNow: () => real,
      ...(checkEveryMs !== undefined ? { checkEveryMs } : {}),
    });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-clock-'));
    file = join(dir, 'clock.json');
    real = REAL;
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells real time while no clock file exists', async () => {
    // Act
    const reading = await readClock(file);
    // Assert
    expect(clock().now()).toEqual(new Date(REAL));
    expect(reading.offsetMs).toBe(0);
    expect(Math.abs(reading.now.getTime() - Date.now())).toBeLessThan(1000);
  });

  it('moves forward by the minutes advanced, adding up', async () => {
    // Act
    await advanceClock(file, 60);
    const reading = await advanceClock(file, 24 * 60);
    // Assert
    expect(reading.offsetMs).toBe(25 * 60 * MINUTE);
    expect(reading.now.getTime() - Date.now()).toBeGreaterThan(
      25 * 60 * MINUTE - 1000,
    );
    expect((await readClock(file)).offsetMs).toBe(25 * 60 * MINUTE);
    expect(clock().now()).toEqual(new Date(REAL + 25 * 60 * MINUTE));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      offsetMs: 25 * 60 * MINUTE,
    });
  });

  it("notices another writer's change at its next check, without reading the file each call", async () => {
    // Arrange: a clock checking every 150 ms.
    const local = clock(150);
    expect(local.now()).toEqual(new Date(REAL));
    // Act: the file changes (as another process would change it).
    await advanceClock(file, 10);
    real = REAL + 100;
    const beforeCheck = local.now();
    real = REAL + 150;
    const atCheck = local.now();
    // Assert
    expect(beforeCheck).toEqual(new Date(REAL + 100));
    expect(atCheck).toEqual(new Date(REAL + 150 + 10 * MINUTE));
  });

  it('notices two changes in a row, and a reset back to real time', async () => {
    // Arrange
    const local = clock(0);
    await advanceClock(file, 5);
    expect(local.now()).toEqual(new Date(REAL + 5 * MINUTE));
    // Act
    await advanceClock(file, 5);
    const advanced = local.now();
    const reading = await resetClock(file);
    const reset = local.now();
    // Assert
    expect(advanced).toEqual(new Date(REAL + 10 * MINUTE));
    expect(reset).toEqual(new Date(REAL));
    expect(reading.offsetMs).toBe(0);
    expect(await readClock(file)).toMatchObject({ offsetMs: 0 });
  });

  it('goes back to real time when the file is removed', async () => {
    // Arrange
    const local = clock(0);
    await advanceClock(file, 5);
    expect(local.now()).toEqual(new Date(REAL + 5 * MINUTE));
    // Act
    await rm(file);
    // Assert
    expect(local.now()).toEqual(new Date(REAL));
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY])(
    'never moves backwards: refuses to advance by %s minutes',
    async (minutes) => {
      // Arrange
      await advanceClock(file, 1);
      // Act
      const failure = advanceClock(file, minutes);
      // Assert
      await expect(failure).rejects.toThrow(RangeError);
      expect((await readClock(file)).offsetMs).toBe(MINUTE);
    },
  );

  it('refuses a clock file that is not one, naming it', async () => {
    // Arrange
    await writeFile(file, JSON.stringify({ offsetMs: -1 }));
    // Act
    const failure = readClock(file);
    // Assert
    await expect(failure).rejects.toThrow(`${file} is not a clock file`);
    expect(() => clock().now()).toThrow(`${file} is not a clock file`);
    await expect(advanceClock(file, 1)).rejects.toThrow('is not a clock file');
  });

  it('refuses a clock file that is not JSON', async () => {
    // Arrange
    await writeFile(file, '{');
    // Act
    const now = () => clock().now();
    // Assert
    expect(now).toThrow(`${file} is not valid JSON`);
  });
});
