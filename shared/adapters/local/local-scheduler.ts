/**
 * The Scheduler port on the laptop, where no EventBridge Scheduler runs: the
 * schedules are kept in a JSON file of the data dir (they survive a
 * restart), and a runner fires the due ones every few hundred milliseconds,
 * by the local stack's clock, so that after `admin local clock advance`
 * everything that fell due in the skipped span fires at once. Like the AWS
 * side, a schedule fires at least once, never before its time: it is
 * delivered first and removed after, and consumers re-check state.
 */
import * as v from 'valibot';
import { logger } from '../../observability.ts';
import type { Clock } from '../../ports.ts';
import {
  isScheduleName,
  type ScheduledMessage,
  type Scheduler,
} from '../../scheduling/ports.ts';
import { readJsonFile, updateJsonFile } from './json-file.ts';

const IsoTime = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/),
  v.check((text) => !Number.isNaN(Date.parse(text)), 'must be a time'),
);

/** One pending schedule, as kept in the file. */
const Entry = v.object({
  /** ISO time in UTC, whole seconds. */
  at: IsoTime,
  /** The logical queue name, mapped to a real queue by `deliver`. */
  queue: v.pipe(v.string(), v.minLength(1)),
  /** The message's JSON, delivered as is. */
  body: v.string(),
});
type Entry = v.InferOutput<typeof Entry>;

const SchedulesFile = v.object({
  schedules: v.record(v.string(), Entry),
});
type Schedules = v.InferOutput<typeof SchedulesFile>;

/** The schedules in `contents` (a schedules file's JSON; undefined: none). */
const schedulesOf = (file: string, contents: unknown): Schedules => {
  if (contents === undefined) return { schedules: {} };
  const parsed = v.safeParse(SchedulesFile, contents);
  if (!parsed.success) {
    throw new Error(
      `${file} is not a schedules file: ${v.summarize(parsed.issues)}`,
    );
  }
  return parsed.output;
};

const SECOND_MS = 1000;

/** `at` rounded up to the second, like EventBridge's `at()` (never early). */
const isoSecondOf = (at: Date): string => {
  const time = at.getTime();
  if (Number.isNaN(time)) throw new Error('A schedule needs a valid time');
  return new Date(Math.ceil(time / SECOND_MS) * SECOND_MS).toISOString();
};

/** Schedules kept in a JSON file, fired by {@link startLocalScheduleRunner}. */
export class LocalScheduler implements Scheduler {
  private readonly queues: ReadonlySet<string>;

  /**
   * @param file the schedules file of the data dir
   * @param options.queues the logical queues a schedule may target; like
   *   the AWS adapter, any other is refused when scheduling, not when firing
   */
  constructor(
    private readonly file: string,
    options: { queues: readonly string[] },
  ) {
    this.queues = new Set(options.queues);
  }

  async schedule(s: ScheduledMessage): Promise<void> {
    if (!isScheduleName(s.name)) {
      throw new Error(`Invalid schedule name "${s.name}"`);
    }
    if (!this.queues.has(s.queue)) {
      throw new Error(`No queue is bound for scheduled messages to ${s.queue}`);
    }
    const body = JSON.stringify(s.message);
    if (body === undefined) throw new Error('A scheduled message needs JSON');
    const entry: Entry = { at: isoSecondOf(s.at), queue: s.queue, body };
    await updateJsonFile(this.file, (current) => {
      const state = schedulesOf(this.file, current);
      state.schedules[s.name] = entry;
      return state;
    });
  }

  async cancel(name: string): Promise<void> {
    await updateJsonFile(this.file, (current) => {
      const state = schedulesOf(this.file, current);
      delete state.schedules[name];
      return state;
    });
  }
}

/** What fires the schedules of a file. */
export interface LocalScheduleRunnerOptions {
  /** The schedules file of the data dir. */
  file: string;
  /** The local stack's clock: a schedule is due when `at` <= `now()`. */
  clock: Clock;
  /** Sends `body` to the logical queue `queue`; rejects on failure. */
  deliver: (queue: string, body: string) => Promise<void>;
  /** Time between two rounds; default 250 ms. */
  intervalMs?: number;
  /** Told of a delivery or a round that failed; default: logged. */
  onError?: (error: unknown, schedule?: string) => void;
}

const logError = (error: unknown, schedule?: string) =>
  logger.error('A local schedule could not be fired', { error, schedule });

const sameEntry = (a: Entry | undefined, b: Entry) =>
  a?.at === b.at && a.queue === b.queue && a.body === b.body;

/**
 * One round: delivers every schedule due by the clock, the earliest first,
 * and removes those delivered, unless one was replaced meanwhile (the same
 * name scheduled anew). A failed delivery stays for the next round. Returns
 * the names delivered.
 */
export const fireDueSchedules = async (
  options: Omit<LocalScheduleRunnerOptions, 'intervalMs'>,
): Promise<string[]> => {
  const { file, clock, deliver, onError = logError } = options;
  const { schedules } = schedulesOf(file, await readJsonFile(file));
  const now = clock.now().getTime();
  const due = Object.entries(schedules)
    .filter(([, entry]) => Date.parse(entry.at) <= now)
    .sort(
      ([a, x], [b, y]) =>
        Date.parse(x.at) - Date.parse(y.at) || a.localeCompare(b),
    );
  const delivered: [string, Entry][] = [];
  for (const [name, entry] of due) {
    try {
      await deliver(entry.queue, entry.body);
      delivered.push([name, entry]);
    } catch (error) {
      onError(error, name);
    }
  }
  if (delivered.length > 0) {
    await updateJsonFile(file, (current) => {
      const state = schedulesOf(file, current);
      for (const [name, entry] of delivered) {
        if (sameEntry(state.schedules[name], entry))
          delete state.schedules[name];
      }
      return state;
    });
  }
  return delivered.map(([name]) => name);
};

/** A running {@link startLocalScheduleRunner}. */
export interface LocalScheduleRunner {
  /** Stops the rounds, once the one under way (if any) is over. */
  stop(): Promise<void>;
}

/**
 * Fires the due schedules of `file` now and then every `intervalMs` (the
 * next round starts only when the last is over), until stopped. A round
 * that fails (say, a corrupt file) is reported and the next one runs.
 */
export const startLocalScheduleRunner = (
  options: LocalScheduleRunnerOptions,
): LocalScheduleRunner => {
  const { intervalMs = 250, onError = logError } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const next = (delayMs: number) => {
    timer = setTimeout(() => {
      round = fireDueSchedules({ ...options, onError })
        .then(
          () => undefined,
          (error: unknown) => onError(error),
        )
        .then(() => {
          if (!stopped) next(intervalMs);
        });
    }, delayMs);
  };
  next(0);

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
};
