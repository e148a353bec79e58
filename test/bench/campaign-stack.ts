/**
 * The local stack of the benchmarks (`bench:campaign`, `bench:sequences`,
 * `bench:webhooks`),
 * built in process like `npm start` (DynamoDB Local, the SES v2 emulator
 * with its sending limits, SQS, the consumers' pollers, the local
 * scheduler and, on request, the stream consumers' pollers), with meters
 * on its edges:
 * - every DynamoDB call, labelled with the consumer group that made it
 *   (`api` outside a consumer);
 * - every SQS call, by command and queue;
 * - every scheduler call (schedule, cancel), by consumer;
 * - every consumer invocation and its duration;
 * - every send the mailer accepted or SES refused.
 * The fault run adds crashes: at random calls inside consumer invocations,
 * every invocation in flight dies (see {@link Faults}).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  type ConsumerFunction,
  consumerFunctions,
} from '../../functions/consumers.ts';
import { localSqs, prepareLocalAsync } from '../../infra/local/async.ts';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';
import type { PollerHandler } from '../../infra/local/poller.ts';
import {
  memoryCheckpoints,
  type StreamPollerHandler,
} from '../../infra/local/stream-poller.ts';
import { startLocalStreams } from '../../infra/local/streams.ts';
import { setQuota } from '../../shared/adapters/local/local-email-provider.ts';
import { SimulatedSesEvents } from '../../shared/adapters/local/simulated-ses-events.ts';
import { sqsEventPublisher } from '../../shared/adapters/local/sqs-event-publisher.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { Deps } from '../../shared/deps.ts';
import { isSendRefused } from '../../shared/mail/refusal.ts';
import type {
  Mailer,
  OutgoingMessage,
  QueueSender,
} from '../../shared/ports.ts';
import { localDeps, localDynamo } from '../../shared/runtime/local.ts';
import type { Scheduler } from '../../shared/scheduling/ports.ts';
import { type DynamoCall, meterDynamo } from './dynamo-meter.ts';

/** The bench's clock: real time plus an offset it moves. */
export class BenchClock {
  private offset = 0;
  now = () => new Date(Date.now() + this.offset);
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** One consumer invocation, as the ambient context knows it. */
interface Invocation {
  group: string;
  /** A crash happened while it ran: nothing it does reaches anyone. */
  died: boolean;
}

/** One SQS call. */
export interface SqsCall {
  command: string;
  /** The consumer group of its queue ('' when none: GetQueueUrl…). */
  queue: string;
  /** A receive that returned nothing. */
  empty: boolean;
  /** The consumer whose invocation made it, if one did. */
  consumer: string | undefined;
}

/** One call to the scheduler. */
export interface SchedulerCall {
  op: 'schedule' | 'cancel';
  /** The consumer whose invocation made it (`api` outside one). */
  consumer: string;
  /** How long it took (the local scheduler rewrites its file). */
  ms: number;
}

/** One send the mailer accepted. */
export interface Accepted {
  to: string;
  subject: string;
  campaignId: string | undefined;
  sequenceId: string | undefined;
  /** Real time (performance.now()) and the bench clock's time. */
  at: number;
  clockAt: number;
  /** The invocation that sent it. */
  by: Invocation | undefined;
}

/** The label of the bench's own reads (polling for the end of a send). */
export const BENCH = 'bench';

/** Thrown into a dead invocation: its process is gone. */
export class Crash extends Error {
  override name = 'Crash';
}

/** A mulberry32 generator: numbers in [0, 1), the same for the same seed. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * Crashes of the consumer fleet. Each call an invocation makes to DynamoDB,
 * SQS or the mailer may be the point where every invocation in flight dies
 * (probability `perCall` of its consumer group), just before the call or just after it (the call
 * then took effect, and nobody learns it). A dead invocation's every later
 * call throws, and so does its end: its messages are not deleted and come
 * back after their visibility timeout, as after a Lambda crash. The clock
 * then jumps past every lease (`leaseJumpMs`), as if the fleet came back
 * that much later.
 */
export class Faults {
  /** The chance that a call is the crash point, by consumer group. */
  perCall: Record<string, number> = {};
  readonly injected: { at: string; when: 'before' | 'after' }[] = [];
  private readonly inFlight = new Set<Invocation>();
  /** The same seed, the same crashes. */
  private readonly random: () => number;

  constructor(
    seed: number,
    private readonly clock: BenchClock,
    private readonly leaseJumpMs: number,
  ) {
    this.random = seededRandom(seed);
  }

  begin(invocation: Invocation): void {
    this.inFlight.add(invocation);
  }

  end(invocation: Invocation): void {
    this.inFlight.delete(invocation);
  }

  private kill(at: string, when: 'before' | 'after'): never {
    this.injected.push({ at, when });
    for (const invocation of this.inFlight) invocation.died = true;
    this.inFlight.clear();
    this.clock.advance(this.leaseJumpMs);
    throw new Crash(`crash ${when} ${at}`);
  }

  /** Wraps one call of `invocation` (none: not a consumer's call). */
  async around<T>(
    invocation: Invocation | undefined,
    at: string,
    call: () => Promise<T>,
  ): Promise<T> {
    if (!invocation || invocation.group === BENCH) return call();
    if (invocation.died) throw new Crash('dead');
    const chance = this.perCall[invocation.group] ?? 0;
    const roll = chance > 0 ? this.random() : 1;
    if (roll < chance / 2) this.kill(`${invocation.group} ${at}`, 'before');
    const result = await call();
    if (invocation.died) throw new Crash('died while waiting');
    if (roll < chance) this.kill(`${invocation.group} ${at}`, 'after');
    return result;
  }
}

/** Options of {@link startBenchStack}. */
export interface BenchStackOptions {
  /** The SES account's rate (sends per second) and 24-hour quota. */
  rate: number;
  max24h: number;
  /** Seconds before `scheduledAt` is allowed (the API's minimum lead). */
  minLeadSeconds: number;
  /** Visibility timeouts by group, instead of the declared ones. */
  visibility?: Partial<Record<string, number>>;
  /** Batching windows by consumer group, in seconds (0: none). */
  batchWindow?: Partial<Record<string, number>>;
  faults?: { seed: number; leaseJumpMs: number };
  /** Batches at once by consumer group, instead of the local cap of 5. */
  concurrency?: Partial<Record<string, number>>;
  /**
   * The longest wait sent as a delayed message (default 900 s, as on AWS);
   * a longer one is a schedule, which the bench clock moves.
   */
  queueDelayMaxSeconds?: number;
  /** Runs the stream consumers too (enrolment needs them). */
  streams?: boolean;
  /**
   * Told of each accepted send before the mailer returns (so before the
   * sender records it), its calls labelled as the bench's own.
   */
  onAccepted?: (message: OutgoingMessage, accepted: Accepted) => Promise<void>;
}

/** Starts the stack; `stop` stops it and removes its files. */
export const startBenchStack = async (options: BenchStackOptions) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-campaign-'));
  const providerStateFile = join(dataDir, 'provider.json');
  const dnsRecordsFile = join(dataDir, 'dns.json');
  const sentLogFile = join(dataDir, 'sent.jsonl');
  await ensureDnsRecordsFile(dnsRecordsFile);
  await setQuota(providerStateFile, {
    max24HourSend: options.max24h,
    maxSendRate: options.rate,
  });
  const running = await startEngines(
    localEngines({ providerStateFile, dnsRecordsFile }),
  );
  const { dynamodb, mailbox, dns, sqs } = running.engines;
  const clock = new BenchClock();
  const context = new AsyncLocalStorage<Invocation>();
  const current = () => context.getStore();
  const faults = options.faults
    ? new Faults(options.faults.seed, clock, options.faults.leaseJumpMs)
    : undefined;

  // DynamoDB: metered, labelled, and crashing in the fault run.
  const dynamoCalls: DynamoCall[] = [];
  /** Invocations and calls under way (a call that never returns shows). */
  const inFlight = new Set<{ group: string; started: number }>();
  const dynamo = localDynamo(dynamodb.endpoint);
  meterDynamo(dynamo, dynamoCalls, () => current()?.group ?? 'api');
  dynamo.middlewareStack.add(
    (next, ctx) => async (args) => {
      const pending = {
        group: `${current()?.group ?? 'api'} ${String(ctx.commandName)}`,
        started: performance.now(),
      };
      inFlight.add(pending);
      try {
        return await next(args);
      } finally {
        inFlight.delete(pending);
      }
    },
    { step: 'initialize', name: 'benchInFlight' },
  );
  if (faults) {
    dynamo.middlewareStack.add(
      (next, ctx) => (args) =>
        faults.around(current(), String(ctx.commandName), () => next(args)),
      { step: 'initialize', name: 'benchCrash', priority: 'high' },
    );
  }
  const tableName = 'bench';
  await ensureTable(dynamo, tableName, tableDefinition);

  // The consumers, with the bench's visibility timeouts and windows.
  const consumers: ConsumerFunction[] = consumerFunctions.map((consumer) => {
    const seconds = options.visibility?.[consumer.group.name];
    const window = options.batchWindow?.[consumer.group.name];
    return {
      ...consumer,
      group: {
        ...consumer.group,
        queue: {
          ...consumer.group.queue,
          ...(seconds === undefined
            ? {}
            : { visibilityTimeoutSeconds: seconds }),
          ...(window === undefined ? {} : { batchWindowSeconds: window }),
        },
      },
    };
  });
  const invocations: { group: string; ms: number; messages: number }[] = [];
  /** Runs one invocation of a consumer: labelled, timed, maybe crashed. */
  const invoke = async <T>(
    group: string,
    messages: number,
    run: () => Promise<T>,
  ): Promise<T> => {
    const invocation: Invocation = { group, died: false };
    faults?.begin(invocation);
    const started = performance.now();
    const running = { group, started };
    inFlight.add(running);
    try {
      const answer = await context.run(invocation, run);
      // Died after its last call: Lambda never saw it return.
      if (invocation.died) throw new Crash('died before returning');
      return answer;
    } finally {
      inFlight.delete(running);
      faults?.end(invocation);
      invocations.push({ group, ms: performance.now() - started, messages });
    }
  };
  const wrapHandler =
    (group: string, handler: PollerHandler): PollerHandler =>
    (event, lambdaContext) =>
      invoke(group, event.Records.length, () => handler(event, lambdaContext));
  const wrapStreamHandler =
    (group: string, handler: StreamPollerHandler): StreamPollerHandler =>
    (event, lambdaContext) =>
      invoke(group, event.Records.length, () => handler(event, lambdaContext));
  const asyncHalf = await prepareLocalAsync({
    sqsEndpoint: sqs.endpoint,
    sentLogFile,
    schedulesFile: join(dataDir, 'schedules.json'),
    clock,
    consumers,
    wrapHandler,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });

  // SQS: metered by command and queue, and crashing in the fault run.
  const queueOf = new Map(
    Object.entries(asyncHalf.queues).flatMap(([name, queue]) => [
      [queue.url, name],
      [queue.deadLetterUrl, `${name} DLQ`],
    ]),
  );
  const sqsCalls: SqsCall[] = [];
  const meterSqs = (client: SQSClient, crashes: Faults | undefined) =>
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const input = args.input as { QueueUrl?: string };
        const command = String(ctx.commandName).replace(/Command$/, '');
        const call = async () => {
          const result = await next(args);
          const output = result.output as { Messages?: unknown[] };
          sqsCalls.push({
            command,
            queue: queueOf.get(input.QueueUrl ?? '') ?? '',
            empty: command === 'ReceiveMessage' && !output.Messages?.length,
            consumer: current()?.group,
          });
          return result;
        };
        return crashes ? crashes.around(current(), command, call) : call();
      },
      { step: 'initialize', name: 'benchSqs' },
    );
  meterSqs(asyncHalf.client, faults);

  // The scheduler: its calls counted and timed, by consumer.
  const schedulerCalls: SchedulerCall[] = [];
  const local = asyncHalf.scheduler;
  const timedCall = async (
    op: SchedulerCall['op'],
    call: () => Promise<void>,
  ) => {
    const consumer = current()?.group ?? 'api';
    const started = performance.now();
    await call();
    schedulerCalls.push({ op, consumer, ms: performance.now() - started });
  };
  const scheduler: Scheduler | undefined = local && {
    schedule: (s) => timedCall('schedule', () => local.schedule(s)),
    cancel: (name) => timedCall('cancel', () => local.cancel(name)),
  };

  // The mailer: SES's events are SES's doing, published by a client of
  // their own (a crash of ours does not stop them); sends are recorded.
  const accepted: Accepted[] = [];
  let throttled = 0;
  /** Errors of the send call that are no refusal: outcome unknown. */
  const sendErrors: string[] = [];
  const eventsQueue = asyncHalf.queues.events;
  if (!eventsQueue) throw new Error('No events queue');
  // A client of its own, outside the crashes (EventBridge's deliveries to
  // the queue are SQS requests we pay for: metered).
  const sesSide = localSqs(sqs.endpoint);
  meterSqs(sesSide, undefined);
  const publisher = sqsEventPublisher(sesSide, eventsQueue.url);
  const recording = (inner: Mailer): Mailer => ({
    send: async (message: OutgoingMessage) => {
      const invocation = current();
      const send = async () => {
        let result: Awaited<ReturnType<Mailer['send']>>;
        const pending = { group: 'SendEmail', started: performance.now() };
        inFlight.add(pending);
        try {
          result = await inner.send(message);
        } catch (error) {
          if (isSendRefused(error, 'throttled')) throttled++;
          else if (!isSendRefused(error)) sendErrors.push(String(error));
          throw error;
        } finally {
          inFlight.delete(pending);
        }
        const record: Accepted = {
          to: message.to,
          subject: message.subject,
          campaignId: message.tags?.campaign,
          sequenceId: message.tags?.sequence,
          at: performance.now(),
          clockAt: clock.now().getTime(),
          by: invocation,
        };
        accepted.push(record);
        const { onAccepted } = options;
        if (onAccepted) {
          await context.run({ group: BENCH, died: false }, () =>
            onAccepted(message, record),
          );
        }
        return result;
      };
      return faults ? faults.around(invocation, 'SendEmail', send) : send();
    },
  });
  const built = await localDeps({
    dynamodb: dynamodb.endpoint,
    dynamo,
    tableName,
    mailbox: mailbox.url,
    dnsServer: dns.address,
    providerStateFile,
    publicApiUrl: 'http://127.0.0.1:3000/api/v1',
    linkSecret: 'bench-link-secret-bench-link-secret-0123',
    addressKeySecret: 'bench-address-key-bench-address-key-0123',
    mailer: (ses) =>
      recording(
        new SimulatedSesEvents(ses, { publish: publisher, clock, sentLogFile }),
      ),
    queues: asyncHalf.senders,
    clock,
    ...(scheduler ? { scheduler } : {}),
    scheduleMinLeadSeconds: options.minLeadSeconds,
    ...(options.queueDelayMaxSeconds === undefined
      ? {}
      : { queueDelayMaxSeconds: options.queueDelayMaxSeconds }),
    apiKeyCacheTtlSeconds: 10,
    providerStatusTtlSeconds: 60,
  });
  const { dispatch, send } = asyncHalf.senders;
  if (!dispatch || !send) throw new Error('No campaign queues');
  const deps: Deps & { queues: { dispatch: QueueSender; send: QueueSender } } =
    { ...built, queues: { ...built.queues, dispatch, send } };
  asyncHalf.start(deps);
  const streams = options.streams
    ? await startLocalStreams({
        endpoint: dynamodb.endpoint,
        tableName,
        deps,
        checkpoints: () => memoryCheckpoints(),
        wrapHandler: wrapStreamHandler,
      })
    : undefined;

  return {
    deps,
    clock,
    asyncHalf,
    faults,
    dynamoCalls,
    sqsCalls,
    schedulerCalls,
    invocations,
    accepted,
    sentLogFile,
    throttled: () => throttled,
    /** Invocations, DynamoDB and SES calls under way, and for how long (ms). */
    inFlight: () =>
      [...inFlight].map(({ group, started }) => ({
        group,
        ms: performance.now() - started,
      })),
    sendErrors,
    /** Runs the bench's own reads: labelled apart, never crashed. */
    observe: <T>(read: () => Promise<T>): Promise<T> =>
      context.run({ group: BENCH, died: false }, read),
    /** Forgets what the meters saw (after seeding). */
    resetMeters: () => {
      dynamoCalls.length = 0;
      sqsCalls.length = 0;
      schedulerCalls.length = 0;
      invocations.length = 0;
      accepted.length = 0;
      throttled = 0;
      sendErrors.length = 0;
    },
    stop: async () => {
      await streams?.stop();
      await asyncHalf.stop();
      await running.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

export type BenchStack = Awaited<ReturnType<typeof startBenchStack>>;

/** Waits until no consumer has run for `quietMs` (queues drained). */
export const drained = async (stack: BenchStack, quietMs: number) => {
  let seen = -1;
  let since = performance.now();
  for (;;) {
    const count = stack.invocations.length;
    if (count !== seen) {
      seen = count;
      since = performance.now();
    } else if (performance.now() - since > quietMs) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
