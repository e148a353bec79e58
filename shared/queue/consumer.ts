/**
 * Queue consumers: the second kind of function. A consumer group is
 * declared once — its queue's settings, the schema of its message, one
 * service call per message — and its handler is built here, on Powertools
 * batch processing, for Lambda's SQS trigger and the local poller alike.
 *
 * What becomes of a record:
 * - its body is not JSON, or not the group's message: it can never succeed,
 *   so it goes to the group's dead-letter queue at once, with the reason,
 *   and leaves the queue (never retried);
 * - the call succeeds, or refuses for good (a 4xx other than a conflict:
 *   what the message names is gone or not allowed): it leaves the queue;
 * - the call fails for now (a conflict, a throttled or unreachable
 *   dependency, anything unexpected): it is a batch item failure, seen
 *   again after the visibility timeout, and dead-lettered by the queue's
 *   redrive policy after `maxReceiveCount` receipts.
 * Every service call is idempotent on its own state: a message delivered
 * twice, or again after a crash mid-batch, has the effect of one.
 *
 * Each batch leaves one log line with its counts, the same counts as
 * metrics (dimension `consumer`), and the age of its oldest message: a
 * queue falling behind shows there before its DLQ fills.
 */
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
} from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import * as v from 'valibot';
import { type BatchScope, SharedValues } from '../batch-scope.ts';
import { AppError, statusOf } from '../errors.ts';
import { metrics } from '../metrics.ts';
import { logger, traced } from '../observability.ts';

/** The queue of a consumer group, as CDK and the local poller build it. */
export interface QueueSettings {
  /** Seconds a received message stays hidden; above the function's timeout. */
  visibilityTimeoutSeconds: number;
  /**
   * Messages per invocation: 1–10, or up to 10,000 with a batching window.
   */
  batchSize: number;
  /**
   * Seconds the trigger may wait to fill a batch (0–300; none by default).
   * Fewer, fuller invocations and receives for a busy queue, that much
   * later for a quiet one.
   */
  batchWindowSeconds?: number;
  /** Most concurrent invocations the trigger starts (2–1000). */
  maxConcurrency: number;
  /** Receipts of a message before the queue moves it to the DLQ. */
  maxReceiveCount: number;
  /**
   * Batches the local stack's poller runs at once (default 5, and never
   * above `maxConcurrency`): more for a consumer that mostly waits on the
   * network rather than on the local engine.
   */
  localConcurrency?: number;
}

/** Where a record comes from, for the service call and the logs. */
export interface Delivery {
  messageId: string;
  /** 1 on the first receipt. */
  receiveCount: number;
  /** The batch it came in (absent when a message is handled alone). */
  batch?: BatchScope;
}

/** Sends a record that can never succeed to its group's dead-letter queue. */
export interface DeadLetters {
  send(group: string, body: string, reason: string): Promise<void>;
}

/** One declared consumer group. */
export interface ConsumerGroup<
  D = unknown,
  S extends v.GenericSchema = v.GenericSchema,
> {
  /** Short name, for construct ids, queue names and logs. */
  name: string;
  /** The Lambda entry file, relative to the repository root. */
  entry: string;
  queue: QueueSettings;
  /** The schema of a message body (JSON). */
  message: S;
  /** The service call for one message; idempotent. */
  handle(deps: D, message: v.InferOutput<S>, delivery: Delivery): Promise<void>;
}

/** Declares a consumer group, typing its handler from its message schema. */
export const consumer = <D, S extends v.GenericSchema>(
  group: ConsumerGroup<D, S>,
): ConsumerGroup<D, S> => group;

/** What a record came to, counted per batch in one log line. */
type Outcome = 'processed' | 'deadLettered' | 'dropped';

/**
 * Whether an error refuses for good: a domain error whose status is a 4xx
 * other than 409 (a conflict is a lost race: the same call may pass).
 */
const isFinal = (error: unknown): error is AppError =>
  error instanceof AppError &&
  statusOf(error.code) < 500 &&
  statusOf(error.code) !== 409 &&
  statusOf(error.code) !== 429;

const readBody = (
  schema: v.GenericSchema,
  body: string,
): { ok: true; message: unknown } | { ok: false; reason: string } => {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the body is not JSON' };
  }
  const parsed = v.safeParse(schema, json);
  if (parsed.success) return { ok: true, message: parsed.output };
  const issues = parsed.issues.map(
    (issue) => `${v.getDotPath(issue) ?? 'body'}: ${issue.message}`,
  );
  return { ok: false, reason: `the message is invalid: ${issues.join('; ')}` };
};

/**
 * Seconds since SQS accepted the oldest message of the batch, from its
 * `SentTimestamp`. Wall time, not the clock port: SQS stamps real time,
 * and this measures how far behind the queue is, not domain time.
 */
const oldestAgeSeconds = (records: SQSRecord[], now: number): number =>
  records.reduce((oldest, item) => {
    const sent = Number(item.attributes.SentTimestamp);
    return Number.isFinite(sent)
      ? Math.max(oldest, Math.max(0, now - sent) / 1000)
      : oldest;
  }, 0);

/**
 * Publishes a batch's counts as metrics of its group, in one EMF line.
 * Synchronous from the first dimension to the publish: the buffer is the
 * container's, and another consumer of the same process (the local poller)
 * must not slip its metrics in between.
 */
const publishBatchMetrics = (
  group: string,
  counts: Record<Outcome | 'failed', number>,
  oldestMessageAgeSeconds: number,
): void => {
  metrics.addDimension('consumer', group);
  for (const [name, value] of Object.entries(counts)) {
    metrics.addMetric(name, MetricUnit.Count, value);
  }
  metrics.addMetric(
    'oldestMessageAgeSeconds',
    MetricUnit.Seconds,
    oldestMessageAgeSeconds,
  );
  metrics.publishStoredMetrics();
};

/**
 * Builds the SQS handler of a consumer group: partial batch responses
 * (`reportBatchItemFailures`), one log line per batch with its counts, the
 * same counts as metrics, and on Lambda an X-Ray subsegment per invocation
 * annotated with the group (`consumer`).
 */
export const createConsumerHandler = <D>(
  deps: D & { deadLetters: DeadLetters },
  group: ConsumerGroup<D>,
) => {
  const handleBatch = async (
    event: SQSEvent,
    context: Context,
  ): Promise<SQSBatchResponse> => {
    const outcomes: Record<Outcome, number> = {
      processed: 0,
      deadLettered: 0,
      dropped: 0,
    };
    const processor = new BatchProcessor(EventType.SQS);
    const shared = new SharedValues();
    const record = async (item: SQSRecord) => {
      const delivery: Delivery = {
        messageId: item.messageId,
        receiveCount: Number(item.attributes.ApproximateReceiveCount) || 1,
        batch: shared.scopeOf(item.messageId),
      };
      const read = readBody(group.message, item.body);
      if (!read.ok) {
        logger.warn('Message dead-lettered', {
          consumer: group.name,
          ...delivery,
          reason: read.reason,
        });
        await deps.deadLetters.send(group.name, item.body, read.reason);
        outcomes.deadLettered++;
        return;
      }
      try {
        await group.handle(deps, read.message, delivery);
        outcomes.processed++;
      } catch (error) {
        if (!isFinal(error)) throw error;
        logger.info('Message dropped: its call refused for good', {
          consumer: group.name,
          ...delivery,
          code: error.code,
          error: error.message,
        });
        outcomes.dropped++;
      }
    };
    const processed = await processPartialResponse(event, record, processor, {
      context,
      throwOnFullBatchFailure: false,
    });
    // A new response: Powertools answers every batch without failures with
    // one shared object.
    const response: SQSBatchResponse = {
      batchItemFailures: [...processed.batchItemFailures],
    };
    const retrying = new Set(
      response.batchItemFailures.map((failure) => failure.itemIdentifier),
    );
    for (const messageId of await shared.close(group.name)) {
      if (!retrying.has(messageId)) {
        response.batchItemFailures.push({ itemIdentifier: messageId });
      }
    }
    const retried = response.batchItemFailures.length;
    logger.info('Batch done', {
      consumer: group.name,
      records: event.Records.length,
      ...outcomes,
      retried,
    });
    publishBatchMetrics(
      group.name,
      { ...outcomes, failed: retried },
      oldestAgeSeconds(event.Records, Date.now()),
    );
    processor.failureMessages.forEach((failed, index) => {
      logger.warn('Message to retry', {
        consumer: group.name,
        messageId: (failed as SQSRecord).messageId,
        error: processor.errors[index],
      });
    });
    return response;
  };
  return (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    traced(`consumer ${group.name}`, { consumer: group.name }, () =>
      handleBatch(event, context),
    );
};
