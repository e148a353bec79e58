/**
 * Infrastructure. The local stand-in for Lambda's SQS trigger (event source
 * mapping): it long-polls a queue of the embedded SQS engine, hands each
 * batch to a consumer's handler as Lambda would (the same `SQSEvent` records,
 * a Lambda `Context`), deletes what succeeded and leaves the rest to the
 * queue — a batch item failure, or the whole batch when the handler throws,
 * is received again after the visibility timeout, and the queue's redrive
 * policy moves a message to its dead-letter queue after `maxReceiveCount`
 * receipts (fauxqs applies it on receive, like SQS). So a consumer's handler
 * meets the same retries on the laptop as on AWS.
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
} from 'aws-lambda';
import * as v from 'valibot';
import { logger } from '../../shared/observability.ts';
import type { QueueSettings } from '../../shared/queue/consumer.ts';

/**
 * A consumer's SQS handler, as Lambda's trigger invokes it: it answers with
 * a partial batch response, or with nothing when every record succeeded.
 */
export type PollerHandler = (
  event: SQSEvent,
  context: Context,
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing (aws-lambda's SQSHandler) must fit
) => Promise<SQSBatchResponse | undefined | void>;

/** Where the poller reports what went wrong (the shared logger by default). */
export interface PollerLog {
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

/** Options of {@link startPoller}. */
export interface PollerOptions {
  client: SQSClient;
  queueUrl: string;
  /** The consumer group's name: the function name in the context and logs. */
  name: string;
  /** The group's queue settings: batch size, concurrency, visibility. */
  settings: QueueSettings;
  handler: PollerHandler;
  /**
   * Batches in flight at once; defaults to the group's `localConcurrency`,
   * else {@link LOCAL_MAX_CONCURRENCY}. Never above `maxConcurrency`.
   */
  concurrency?: number;
  log?: PollerLog;
}

/** A running poller. */
export interface Poller {
  readonly name: string;
  /**
   * Stops receiving and resolves once the batches in flight are handled
   * and their successes deleted. Never rejects; runs once (a second call
   * returns the first one's promise).
   */
  stop(): Promise<void>;
}

/**
 * Most batches a local poller runs at once. On AWS, `maxConcurrency` caps
 * concurrent invocations across containers, and Lambda starts with five
 * concurrent batches before scaling up. Locally every handler shares one
 * Node process and one engine: more parallel batches buy nothing but idle
 * long polls, and five still exercise the concurrency a consumer must
 * tolerate (two batches touching the same item at once).
 */
export const LOCAL_MAX_CONCURRENCY = 5;

/**
 * Seconds a receive waits for messages: 20, as Lambda's trigger long-polls.
 * The engine answers at once when a message arrives or a delay or
 * visibility timeout ends, so a long wait costs no latency and spares idle
 * receives; `stop()` abandons a long poll under way rather than wait for it.
 */
const POLL_WAIT_SECONDS = 20;

/** Pause after a failed receive (the engine stopped, or not yet there). */
const RETRY_PAUSE_MS = 1_000;

/** Messages one ReceiveMessage returns at most (the SQS limit). */
const RECEIVE_LIMIT = 10;

/** How often a poller looks for more messages during a batching window. */
const WINDOW_LOOK_MS = 250;

/** Entries of one DeleteMessageBatch request (the SQS limit). */
const DELETE_BATCH_LIMIT = 10;

/** A message as ReceiveMessage returns it: what a record needs, checked. */
const ReceivedMessage = v.object({
  MessageId: v.pipe(v.string(), v.nonEmpty()),
  ReceiptHandle: v.pipe(v.string(), v.nonEmpty()),
  Body: v.string(),
  MD5OfBody: v.string(),
  MD5OfMessageAttributes: v.optional(v.string()),
  Attributes: v.looseObject({
    ApproximateReceiveCount: v.string(),
    SentTimestamp: v.string(),
    SenderId: v.string(),
    ApproximateFirstReceiveTimestamp: v.string(),
    AWSTraceHeader: v.optional(v.string()),
    SequenceNumber: v.optional(v.string()),
    MessageGroupId: v.optional(v.string()),
    MessageDeduplicationId: v.optional(v.string()),
    DeadLetterQueueSourceArn: v.optional(v.string()),
  }),
  MessageAttributes: v.optional(
    v.record(
      v.string(),
      v.object({
        DataType: v.string(),
        StringValue: v.optional(v.string()),
        BinaryValue: v.optional(v.instance(Uint8Array)),
        StringListValues: v.optional(v.array(v.string())),
        BinaryListValues: v.optional(v.array(v.instance(Uint8Array))),
      }),
    ),
  ),
});
type ReceivedMessage = v.InferOutput<typeof ReceivedMessage>;

/**
 * A handler's answer as Lambda reads it with `reportBatchItemFailures`:
 * nothing, or no failures, is a full success; a failure whose identifier is
 * empty or missing fails the whole batch (so does any other shape).
 */
const BatchResponse = v.nullish(
  v.object({
    batchItemFailures: v.nullish(
      v.array(v.object({ itemIdentifier: v.pipe(v.string(), v.nonEmpty()) })),
    ),
  }),
);

/** The queue a record comes from, as Lambda names it in each record. */
interface EventSource {
  arn: string;
  region: string;
}

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes).toString('base64');

/** Message attributes in Lambda's form: camelCase, binaries in base64. */
const lambdaAttributes = (
  attributes: ReceivedMessage['MessageAttributes'],
): SQSMessageAttributes =>
  Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, value]) => [
      name,
      {
        ...(value.StringValue !== undefined && {
          stringValue: value.StringValue,
        }),
        ...(value.BinaryValue !== undefined && {
          binaryValue: base64(value.BinaryValue),
        }),
        stringListValues: value.StringListValues ?? [],
        binaryListValues: (value.BinaryListValues ?? []).map(base64),
        dataType: value.DataType,
      },
    ]),
  );

/** One record of an `SQSEvent`, shaped as Lambda's trigger shapes it. */
const toRecord = (message: ReceivedMessage, source: EventSource): SQSRecord => {
  const {
    ApproximateReceiveCount,
    SentTimestamp,
    SenderId,
    ApproximateFirstReceiveTimestamp,
    AWSTraceHeader,
    SequenceNumber,
    MessageGroupId,
    MessageDeduplicationId,
    DeadLetterQueueSourceArn,
  } = message.Attributes;
  return {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body,
    attributes: {
      ApproximateReceiveCount,
      SentTimestamp,
      SenderId,
      ApproximateFirstReceiveTimestamp,
      ...(AWSTraceHeader !== undefined && { AWSTraceHeader }),
      ...(SequenceNumber !== undefined && { SequenceNumber }),
      ...(MessageGroupId !== undefined && { MessageGroupId }),
      ...(MessageDeduplicationId !== undefined && { MessageDeduplicationId }),
      ...(DeadLetterQueueSourceArn !== undefined && {
        DeadLetterQueueSourceArn,
      }),
    },
    messageAttributes: lambdaAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody,
    ...(message.MD5OfMessageAttributes !== undefined && {
      md5OfMessageAttributes: message.MD5OfMessageAttributes,
    }),
    eventSource: 'aws:sqs',
    eventSourceARN: source.arn,
    awsRegion: source.region,
  };
};

/**
 * A Lambda context for one invocation. For a queue consumer its time
 * budget is the visibility timeout: on AWS the function's timeout must stay
 * below it.
 */
export const invocationContext = (
  functionName: string,
  source: EventSource,
  budgetMs: number,
): Context => {
  const deadline = Date.now() + budgetMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${source.region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/local/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
};

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

const errorAttributes = (error: unknown): Record<string, unknown> => ({
  error: error instanceof Error ? error.message : String(error),
  ...(error instanceof Error && { errorName: error.name }),
});

/**
 * Starts polling a queue for a consumer's handler, as Lambda's SQS trigger
 * does with `reportBatchItemFailures` on: up to `batchSize` messages a
 * batch (gathered over the batching window, if the group has one), each
 * received with the group's visibility timeout; the successes
 * deleted; batch item failures, or every message of a batch whose handler
 * threw, left to reappear. Failures of the engine (stopped, unreachable) are
 * logged and retried after a pause, never thrown.
 */
export const startPoller = (options: PollerOptions): Poller => {
  const { client, queueUrl, name, settings, handler } = options;
  const log = options.log ?? logger;
  const concurrency = Math.max(
    1,
    Math.min(
      settings.maxConcurrency,
      options.concurrency ?? settings.localConcurrency ?? LOCAL_MAX_CONCURRENCY,
    ),
  );
  const stopping = new AbortController();
  const attributes = { consumer: name, queueUrl };

  // Read once, shared by the loops; forgotten on failure to be read again.
  let source: Promise<EventSource> | undefined;
  const eventSource = (): Promise<EventSource> => {
    if (source) return source;
    const reading = (async () => {
      const { Attributes } = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['QueueArn'],
        }),
      );
      const arn = Attributes?.QueueArn;
      if (!arn) throw new Error('The queue has no ARN');
      return { arn, region: await client.config.region() };
    })();
    source = reading;
    reading.catch(() => {
      if (source === reading) source = undefined;
    });
    return reading;
  };

  /**
   * One receive. A long poll is abandoned when the poller stops (a stopped
   * test or `npm start` waits for no empty poll); should the engine have
   * answered with messages at that instant, they reappear after their
   * visibility timeout, as after a Lambda that timed out.
   */
  const receiveUpTo = async (
    max: number,
    waitSeconds: number,
  ): Promise<Message[]> => {
    const { Messages } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(RECEIVE_LIMIT, max),
        VisibilityTimeout: settings.visibilityTimeoutSeconds,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      waitSeconds > 0 ? { abortSignal: stopping.signal } : {},
    );
    return Messages ?? [];
  };

  /**
   * One batch, as the trigger gathers it: the first receive long-polls;
   * with a batching window, the poller then looks again every
   * {@link WINDOW_LOOK_MS} (taking all there is, ten a receive) until the
   * batch is full or the window, counted from the first message, is over.
   */
  const receive = async (): Promise<Message[]> => {
    const batch = await receiveUpTo(settings.batchSize, POLL_WAIT_SECONDS);
    const windowMs = (settings.batchWindowSeconds ?? 0) * 1000;
    if (batch.length === 0 || windowMs === 0) return batch;
    const until = Date.now() + windowMs;
    while (batch.length < settings.batchSize && !stopping.signal.aborted) {
      const left = until - Date.now();
      if (left <= 0) break;
      await pause(Math.min(left, WINDOW_LOOK_MS), stopping.signal);
      for (;;) {
        const more = await receiveUpTo(settings.batchSize - batch.length, 0);
        batch.push(...more);
        if (more.length < RECEIVE_LIMIT || batch.length >= settings.batchSize)
          break;
      }
    }
    return batch;
  };

  /** The message ids to keep in the queue, after Lambda's rules. */
  const failedIds = async (
    records: SQSRecord[],
    from: EventSource,
  ): Promise<Set<string>> => {
    const all = new Set(records.map((record) => record.messageId));
    let response: unknown;
    try {
      response = await handler(
        { Records: records },
        invocationContext(name, from, settings.visibilityTimeoutSeconds * 1000),
      );
    } catch (error) {
      log.error('The consumer failed: its whole batch will be received again', {
        ...attributes,
        records: records.length,
        ...errorAttributes(error),
      });
      return all;
    }
    const parsed = v.safeParse(BatchResponse, response);
    const failures = parsed.success
      ? (parsed.output?.batchItemFailures ?? [])
      : undefined;
    if (
      !failures ||
      failures.some((failure) => !all.has(failure.itemIdentifier))
    ) {
      // Lambda too fails the whole batch on an answer it cannot read.
      log.error(
        'The consumer answered with an invalid batch response: its whole batch will be received again',
        { ...attributes, records: records.length },
      );
      return all;
    }
    return new Set(failures.map((failure) => failure.itemIdentifier));
  };

  const deleteMessages = async (records: SQSRecord[]): Promise<void> => {
    for (let at = 0; at < records.length; at += DELETE_BATCH_LIMIT) {
      const chunk = records.slice(at, at + DELETE_BATCH_LIMIT);
      try {
        const { Failed } = await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((record, index) => ({
              Id: String(index),
              ReceiptHandle: record.receiptHandle,
            })),
          }),
        );
        if (Failed?.length) {
          log.warn('Handled messages were not deleted: they will be again', {
            ...attributes,
            failed: Failed.map((entry) => entry.Message ?? entry.Code),
          });
        }
      } catch (error) {
        log.warn('Handled messages were not deleted: they will be again', {
          ...attributes,
          records: chunk.length,
          ...errorAttributes(error),
        });
      }
    }
  };

  /** Hands one batch to the handler, then deletes its successes. */
  const invoke = async (messages: Message[], from: EventSource) => {
    const records: SQSRecord[] = [];
    for (const message of messages) {
      const parsed = v.safeParse(ReceivedMessage, message);
      if (parsed.success) {
        records.push(toRecord(parsed.output, from));
      } else {
        // Left in flight: it reappears, and redrive ends its retries.
        log.error('A received message lacks what a record needs', {
          ...attributes,
          messageId: message.MessageId,
          issues: v.flatten(parsed.issues),
        });
      }
    }
    if (records.length === 0) return;
    const failed = await failedIds(records, from);
    await deleteMessages(
      records.filter((record) => !failed.has(record.messageId)),
    );
  };

  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        const from = await eventSource();
        const messages = await receive();
        // A batch received while stopping is still handled: left alone, it
        // would only come back later with one more receipt counted.
        if (messages.length > 0) await invoke(messages, from);
      } catch (error) {
        if (stopping.signal.aborted) break;
        log.warn('The queue could not be polled; trying again', {
          ...attributes,
          ...errorAttributes(error),
        });
        await pause(RETRY_PAUSE_MS, stopping.signal);
      }
    }
  };

  const loops = Array.from({ length: concurrency }, loop);
  let stopped: Promise<void> | undefined;
  return {
    name,
    stop: () => {
      stopped ??= (async () => {
        stopping.abort();
        await Promise.all(loops);
      })();
      return stopped;
    },
  };
};
