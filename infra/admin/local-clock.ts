/**
 * The admin CLI's clock commands for the local stack: `local clock advance
 * --minutes <n>` moves the time of every process of the stack forward (the
 * schedules of the skipped span fire at once), `local clock show` tells it,
 * `local clock reset` goes back to real time. Each prints `{"now": <ISO>}`.
 */
import * as v from 'valibot';
import {
  advanceClock,
  type ClockReading,
  readClock,
  resetClock,
} from '../../shared/adapters/local/local-clock.ts';
import { parse } from '../../shared/validation.ts';
import type { LocalFiles } from './local-commands.ts';

/** The most one advance moves: a year, far beyond any wait we schedule. */
const MAX_MINUTES = 365 * 24 * 60;

const MINUTES_MESSAGE = `must be a whole number of minutes from 1 to ${MAX_MINUTES}`;

const AdvanceInput = v.object({
  minutes: v.pipe(
    v.string(),
    v.regex(/^\d+$/, MINUTES_MESSAGE),
    v.transform(Number),
    v.minValue(1, MINUTES_MESSAGE),
    v.maxValue(MAX_MINUTES, MINUTES_MESSAGE),
  ),
});

/** What every clock command prints. */
export interface ClockOutput {
  /** The local stack's time, ISO 8601 in UTC. */
  now: string;
}

const outputOf = (reading: ClockReading): ClockOutput => ({
  now: reading.now.toISOString(),
});

/** Moves the local stack's time `--minutes` forward. */
export const advanceLocalClock = async (
  files: LocalFiles,
  input: { minutes?: string },
): Promise<ClockOutput> => {
  const { minutes } = parse(AdvanceInput, input);
  return outputOf(await advanceClock(files.clockFile, minutes));
};

/** Tells the local stack's time. */
export const readLocalClock = async (files: LocalFiles): Promise<ClockOutput> =>
  outputOf(await readClock(files.clockFile));

/** Brings the local stack back to real time. */
export const resetLocalClock = async (
  files: LocalFiles,
): Promise<ClockOutput> => outputOf(await resetClock(files.clockFile));
