/**
 * The asynchronous half of the local stack: every consumer group's queue
 * and DLQ on the embedded SQS engine, a poller per group acting as Lambda's
 * SQS trigger, the senders of the queues, and the mailer that publishes
 * what SES's event publishing would to the events queue. `npm start` and
 * the tests build it the same way.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  type ConsumerFunction,
  consumerFunctions,
} from '../../functions/consumers.ts';
import { SqsDeadLetters } from '../../shared/adapters/aws/sqs-dead-letters.ts';
import { SqsQueueSender } from '../../shared/adapters/aws/sqs-queue-sender.ts';
import { readProviderState } from '../../shared/adapters/local/local-email-provider.ts';
import {
  type LocalScheduleRunner,
  LocalScheduler,
  startLocalScheduleRunner,
} from '../../shared/adapters/local/local-scheduler.ts';
import { SimulatedSesEvents } from '../../shared/adapters/local/simulated-ses-events.ts';
import { sqsEventPublisher } from '../../shared/adapters/local/sqs-event-publisher.ts';
import type { Deps } from '../../shared/deps.ts';
import type { Clock, Mailer, QueueSenders } from '../../shared/ports.ts';
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';
import type { Scheduler } from '../../shared/scheduling/ports.ts';
import { type Poller, type PollerHandler, startPoller } from './poller.ts';
import { createConsumerQueues, type LocalConsumerQueue } from './queues.ts';

/** The consumer group SES's events go to (the events rule's target). */
export const EVENTS_GROUP = 'events';

/** What the asynchronous half needs of the local stack. */
export interface LocalAsyncOptions {
  /** The embedded SQS engine's endpoint. */
  sqsEndpoint: string;
  /** Where the simulated SES events log the accepted messages. */
  sentLogFile: string;
  /**
   * The local provider's state file, whose simulation rates (`admin local
   * provider simulate`) the simulated SES events follow; none: none.
   */
  providerStateFile?: string;
  clock: Clock;
  /**
   * Prefixes every queue name: test files sharing one engine each get
   * their own queues. None for `npm start`.
   */
  queuePrefix?: string;
  /** The consumer groups to run; default every one. */
  consumers?: readonly ConsumerFunction[];
  /**
   * The local scheduler's file (schedules survive a restart); without it
   * this half has no scheduler (some tests).
   */
  schedulesFile?: string;
  /**
   * Wraps each group's handler, as the poller calls it: the benchmarks
   * time invocations and attribute their calls with it.
   */
  wrapHandler?: (group: string, handler: PollerHandler) => PollerHandler;
  /**
   * Batches a group's poller runs at once, instead of the local cap (never
   * above the group's `maxConcurrency`): the webhooks benchmark runs the
   * deliveries consumer as wide as on AWS, where a slow endpoint holds a
   * batch for seconds.
   */
  concurrency?: Partial<Record<string, number>>;
}

/** The queues, ready for the deps; `start` runs the pollers over the deps. */
export interface LocalAsync {
  client: SQSClient;
  /** Each group's queue and DLQ, by group name. */
  queues: Readonly<Record<string, LocalConsumerQueue>>;
  /** The senders of every consumer queue, by group name. */
  senders: QueueSenders<string>;
  /** The mailer that publishes SES's events of what it sends. */
  mailerWith(ses: Mailer): Mailer;
  /** Schedules one-shot deliveries to the consumer queues. */
  scheduler?: Scheduler;
  /**
   * Starts one poller per consumer group, over these deps, and the runner
   * that fires due schedules (by the deps' clock) to their queues.
   */
  start(deps: Deps): void;
  /** Stops the pollers, waiting for batches in flight. */
  stop(): Promise<void>;
}

/** A client of the embedded SQS engine (its queue URLs may not resolve). */
export const localSqs = (endpoint: string): SQSClient =>
  new SQSClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    // Every poller's long poll holds a socket for up to 20 s: past the
    // SDK's 50, sends would wait for polls to end (a poller run as wide as
    // on AWS, as the webhooks benchmark does, takes 50 alone).
    requestHandler: { httpAgent: { maxSockets: 256 } },
  });

/** Creates the queues of every consumer group; pollers start with `start`. */
export const prepareLocalAsync = async (
  options: LocalAsyncOptions,
): Promise<LocalAsync> => {
  const client = localSqs(options.sqsEndpoint);
  const consumers = options.consumers ?? consumerFunctions;
  const prefix = options.queuePrefix ?? '';
  const created = await createConsumerQueues(
    client,
    consumers.map(({ group }) => ({
      name: `${prefix}${group.name}`,
      queue: group.queue,
    })),
  );
  const queues: Record<string, LocalConsumerQueue> = {};
  for (const { group } of consumers) {
    const queue = (created as Record<string, LocalConsumerQueue>)[
      `${prefix}${group.name}`
    ];
    if (queue) queues[group.name] = queue;
  }
  const senders = Object.fromEntries(
    Object.entries(queues).map(([name, queue]) => [
      name,
      new SqsQueueSender(client, queue.url),
    ]),
  );
  const deadLetters = new SqsDeadLetters(
    client,
    Object.fromEntries(
      Object.entries(queues).map(([name, queue]) => [
        name,
        queue.deadLetterUrl,
      ]),
    ),
  );
  const events = queues[EVENTS_GROUP];
  const pollers: Poller[] = [];
  let runner: LocalScheduleRunner | undefined;
  const { schedulesFile, providerStateFile } = options;

  return {
    client,
    queues,
    senders,
    mailerWith: (ses) =>
      events
        ? new SimulatedSesEvents(ses, {
            publish: sqsEventPublisher(client, events.url),
            clock: options.clock,
            sentLogFile: options.sentLogFile,
            ...(providerStateFile
              ? {
                  simulation: async () =>
                    (await readProviderState(providerStateFile)).simulation,
                }
              : {}),
          })
        : ses,
    ...(schedulesFile
      ? {
          scheduler: new LocalScheduler(schedulesFile, {
            queues: Object.keys(queues),
          }),
        }
      : {}),
    start: (deps) => {
      if (schedulesFile) {
        runner = startLocalScheduleRunner({
          file: schedulesFile,
          clock: deps.clock,
          deliver: async (queue, body) => {
            const target = queues[queue];
            if (!target) throw new Error(`No consumer queue ${queue}`);
            await client.send(
              new SendMessageCommand({
                QueueUrl: target.url,
                MessageBody: body,
              }),
            );
          },
        });
      }
      for (const { group } of consumers) {
        const queue = queues[group.name];
        if (!queue) continue;
        pollers.push(
          startPoller({
            client,
            queueUrl: queue.url,
            name: group.name,
            settings: group.queue,
            ...(options.concurrency?.[group.name] === undefined
              ? {}
              : { concurrency: options.concurrency[group.name] }),
            handler: (options.wrapHandler ?? ((_, handler) => handler))(
              group.name,
              createConsumerHandler({ ...deps, deadLetters }, group),
            ),
          }),
        );
      }
    },
    stop: async () => {
      await runner?.stop();
      await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
    },
  };
};
