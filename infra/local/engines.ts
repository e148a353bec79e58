/**
 * The engines of the local stack, in one list, and the runner that starts
 * and stops them. `npm start` (start.ts) and the tests' global setup both
 * run `localEngines(…)` through `startEngines`, so an engine is added, and
 * its failures unwound, in one place.
 */
import { startDnsServer } from './dns-server.ts';
import { startDynamoDb } from './dynamodb.ts';
import { startMailbox } from './mailbox.ts';
import { startSqs } from './sqs.ts';

/** One engine: how to start it, and how to stop what that start returned. */
export interface Engine<Name extends string = string, Running = unknown> {
  readonly name: Name;
  /** Starts the engine; resolves to what it exposes (endpoint, url, address). */
  start(): Promise<Running>;
  stop(running: Running): Promise<void>;
}

/** Declares an engine, keeping its name and what it exposes in the types. */
export const engine = <const Name extends string, Running>(
  definition: Engine<Name, Running>,
): Engine<Name, Running> => definition;

/** What each started engine of a list exposes, by engine name. */
export type StartedEngines<List extends readonly Engine[]> = {
  [E in List[number] as E['name']]: E extends Engine<string, infer Running>
    ? Running
    : never;
};

/** The engines of a list, all started. */
export interface RunningEngines<List extends readonly Engine[]> {
  readonly engines: StartedEngines<List>;
  /**
   * Stops every engine in reverse order of start, each even if one before
   * it failed to stop (then rejects with all the failures). Runs once: a
   * second call returns the first one's promise.
   */
  stop(): Promise<void>;
}

interface StartedEngine {
  engine: Engine;
  running: unknown;
}

/** Stops started engines, last started first; returns what failed. */
const stopInReverse = async (started: StartedEngine[]): Promise<unknown[]> => {
  const failures: unknown[] = [];
  for (const { engine, running } of started.toReversed()) {
    try {
      await engine.stop(running);
    } catch (error) {
      failures.push(
        new Error(`The ${engine.name} engine did not stop`, { cause: error }),
      );
    }
  }
  return failures;
};

/**
 * Starts the engines of a list one after another, in list order (a later
 * engine may rely on an earlier one). When one fails to start, or `signal`
 * aborts (Ctrl-C during start-up), the engines already started are stopped
 * in reverse order before the promise rejects: nothing is left running.
 */
export const startEngines = async <const List extends readonly Engine[]>(
  list: List,
  options: { signal?: AbortSignal } = {},
): Promise<RunningEngines<List>> => {
  const started: StartedEngine[] = [];
  const unwind = async (error: unknown, message?: string): Promise<never> => {
    const failures = await stopInReverse(started);
    const reported = message ? new Error(message, { cause: error }) : error;
    if (failures.length === 0) throw reported;
    throw new AggregateError(
      [reported, ...failures],
      `${message ?? 'The engines were stopped while starting'}, and stopping the others failed`,
    );
  };

  for (const engine of list) {
    if (options.signal?.aborted) return unwind(options.signal.reason);
    try {
      started.push({ engine, running: await engine.start() });
    } catch (error) {
      return unwind(error, `The ${engine.name} engine did not start`);
    }
  }
  if (options.signal?.aborted) return unwind(options.signal.reason);

  let stopped: Promise<void> | undefined;
  return {
    engines: Object.fromEntries(
      started.map(({ engine, running }) => [engine.name, running]),
    ) as StartedEngines<List>,
    stop: () => {
      stopped ??= stopInReverse(started).then((failures) => {
        if (failures.length === 1) throw failures[0];
        if (failures.length > 1) {
          throw new AggregateError(failures, 'Some engines did not stop');
        }
      });
      return stopped;
    },
  };
};

/** Where the engines of a local stack keep their state. */
export interface LocalEngineOptions {
  /** DynamoDB's data directory; none keeps the data in memory (tests). */
  dynamodbDataDir?: string;
  /** The local provider's state file, whose quota the mailbox reports. */
  providerStateFile?: string;
  /** The records the DNS server answers. */
  dnsRecordsFile: string;
}

/**
 * The engines of a local stack, in start order: DynamoDB (DynamoDB Local on
 * Java), the mailbox (the SES v2 emulator), the DNS server and SQS (fauxqs).
 * Every one listens on a free loopback port.
 */
export const localEngines = (options: LocalEngineOptions) =>
  [
    engine({
      name: 'dynamodb',
      start: () => startDynamoDb({ dataDir: options.dynamodbDataDir }),
      stop: (dynamodb) => dynamodb.stop(),
    }),
    engine({
      name: 'mailbox',
      start: () =>
        startMailbox({ providerStateFile: options.providerStateFile }),
      stop: (mailbox) => mailbox.stop(),
    }),
    engine({
      name: 'dns',
      start: () => startDnsServer({ recordsFile: options.dnsRecordsFile }),
      stop: (dns) => dns.stop(),
    }),
    engine({
      name: 'sqs',
      start: () => startSqs(),
      stop: (sqs) => sqs.stop(),
    }),
  ] as const;
