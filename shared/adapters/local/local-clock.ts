/**
 * The local stack's movable clock: real time plus an offset kept in a JSON
 * file of the data dir (`{"offsetMs": n}`; no file, no offset). Every
 * process of the stack (the gateway, the consumers, the scheduler, the admin
 * CLI) reads the same file, so `admin local clock advance` moves time for
 * all of them at once, and hours of waits pass in seconds. Time only moves
 * forward, but for a reset back to real time.
 */
import { readFileSync, statSync } from 'node:fs';
import * as v from 'valibot';
import type { Clock } from '../../ports.ts';
import { readJsonFile, updateJsonFile } from './json-file.ts';

const ClockFile = v.object({
  /** How far the local stack's time is ahead of real time. */
  offsetMs: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
});

/** The local stack's time and how far it is ahead of real time. */
export interface ClockReading {
  now: Date;
  offsetMs: number;
}

/** The offset in `contents` (a clock file's JSON; undefined: no file). */
const offsetOf = (file: string, contents: unknown): number => {
  if (contents === undefined) return 0;
  const parsed = v.safeParse(ClockFile, contents);
  if (!parsed.success) {
    throw new Error(
      `${file} is not a clock file: ${v.summarize(parsed.issues)}`,
    );
  }
  return parsed.output.offsetMs;
};

const readingOf = (offsetMs: number): ClockReading => ({
  now: new Date(Date.now() + offsetMs),
  offsetMs,
});

/** How the clock file stands now. */
export const readClock = async (file: string): Promise<ClockReading> =>
  readingOf(offsetOf(file, await readJsonFile(file)));

/**
 * Moves the local stack's time `minutes` forward (a positive number), for
 * every process that reads `file`.
 */
export const advanceClock = async (
  file: string,
  minutes: number,
): Promise<ClockReading> => {
  if (!Number.isFinite(minutes) || minutes <= 0) {
    throw new RangeError('The clock only moves forward: minutes must be > 0');
  }
  const { offsetMs } = await updateJsonFile(file, (current) => ({
    offsetMs: offsetOf(file, current) + Math.round(minutes * 60_000),
  }));
  return readingOf(offsetMs);
};

/** Brings the local stack back to real time. */
export const resetClock = async (file: string): Promise<ClockReading> => {
  await updateJsonFile(file, () => ({ offsetMs: 0 }));
  return readingOf(0);
};

/** Options of a {@link LocalClock}. */
export interface LocalClockOptions {
  /** The file is checked for a change at most this often; default 150. */
  checkEveryMs?: number;
  /** Real time, in ms since the epoch; tests give a fixed one. */
  realNow?: () => number;
}

/**
 * The Clock port on the clock file. `now()` is synchronous, so it checks the
 * file with a `stat` at most every `checkEveryMs` and reads it only when it
 * changed: cheap enough for every call, and a change made by another
 * process shows within that time. A write replaces the file (a rename), so
 * its inode tells a change even within the same mtime tick.
 */
export class LocalClock implements Clock {
  private readonly checkEveryMs: number;
  private readonly realNow: () => number;
  private offsetMs = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private version: string | undefined;

  constructor(
    private readonly file: string,
    options: LocalClockOptions = {},
  ) {
    this.checkEveryMs = options.checkEveryMs ?? 150;
    this.realNow = options.realNow ?? Date.now;
  }

  now(): Date {
    const real = this.realNow();
    this.refresh(real);
    return new Date(real + this.offsetMs);
  }

  /** Re-reads the offset if the file changed since the last check. */
  private refresh(real: number): void {
    const since = real - this.checkedAt;
    // A real clock set back also triggers a check.
    if (since >= 0 && since < this.checkEveryMs) return;
    this.checkedAt = real;
    const stat = statSync(this.file, { throwIfNoEntry: false });
    const version = stat
      ? `${stat.ino}:${stat.mtimeMs}:${stat.size}`
      : 'missing';
    if (version === this.version) return;
    this.offsetMs = offsetOf(this.file, stat ? this.readFile() : undefined);
    this.version = version;
  }

  /** The file's JSON; undefined if it vanished since the `stat`. */
  private readFile(): unknown {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.file} is not valid JSON`, { cause: error });
    }
  }
}
