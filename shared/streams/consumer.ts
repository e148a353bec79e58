/**
 * Stream consumers: the third kind of function, fed by the table's change
 * stream (DynamoDB Streams) instead of a queue. A stream consumer is
 * declared once — its batching and retries, the records it wants (event
 * names and entity types, the filter Lambda applies before invoking it),
 * how to read one item image, and one service call per record — and its
 * handler is built here, on Powertools batch processing, for Lambda's
 * DynamoDB trigger and the local stream poller alike.
 *
 * What becomes of a record:
 * - it does not pass the filter (the mapping's filter should have kept it
 *   out): ignored;
 * - an image does not parse (not the item the consumer reads, or a
 *   malformed one): it can never succeed, so it is logged and skipped —
 *   never retried, never blocking its shard;
 * - the call succeeds: done;
 * - the call fails: a batch item failure. Lambda retries from the first
 *   failed record (bisecting the batch on errors), and after the declared
 *   retries sends the batch's description to the consumer's on-failure
 *   queue and moves on. Service calls must therefore tolerate a repeat.
 *
 * Records of one batch are handled one after the other, in stream order, so
 * the facts of one item come out in the order it was written.
 */
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
} from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import { type BatchScope, SharedValues } from '../batch-scope.ts';
import { ENTITY_TYPE, type EntityType } from '../db/items.ts';
import { metrics } from '../metrics.ts';
import { logger, traced } from '../observability.ts';

/** What happened to an item, as a stream record names it. */
export type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

/** How the trigger feeds a stream consumer, as CDK and the local poller read it. */
export interface StreamSettings {
  /** Records per invocation (1–10,000). */
  batchSize: number;
  /**
   * Seconds the trigger may wait to fill a batch (0–300; none by default):
   * fewer invocations for a busy table, that much later for a quiet one.
   */
  batchWindowSeconds?: number;
  /**
   * Retries of a failing batch (0–10,000) before its records are given up:
   * described to the on-failure queue, and the shard moves on.
   */
  retryAttempts: number;
  /**
   * Whether a failing batch is split in two and each half retried, so one
   * bad record holds back only itself.
   */
  bisectOnError: boolean;
}

/**
 * The records a consumer wants: these event names, of items whose entity
 * type (`_type` of the new image; of the old one for a REMOVE, which has
 * no new image) is one of these. Lambda drops the others before invoking
 * (filter criteria, free of charge); the local poller applies the same
 * rule ({@link passesFilter}).
 */
export interface StreamFilter {
  eventNames: readonly StreamEventName[];
  entityTypes: readonly EntityType[];
}

/** One record as the service call sees it: the item before and after. */
export interface StreamChange<T> {
  eventName: StreamEventName;
  /** The record's position in its shard. */
  sequenceNumber: string;
  /**
   * When the write was made, as the stream says (to the second; absent if
   * it does not say): the one date of a removal, which leaves no item.
   */
  writtenAt?: string;
  /**
   * The batch it came in, for work its records share (one publish for the
   * events of all): a value that fails to close retries the records that
   * asked for it, from the first of them on.
   */
  batch?: BatchScope;
  /** The image before the write (undefined for an INSERT). */
  before?: T;
  /** The image after the write (undefined for a REMOVE). */
  after?: T;
}

/** One declared stream consumer. */
export interface StreamConsumerGroup<D = unknown, T = unknown> {
  /** Short name, for construct ids, checkpoints and logs. */
  name: string;
  /** The Lambda entry file, relative to the repository root. */
  entry: string;
  stream: StreamSettings;
  filter: StreamFilter;
  /**
   * Reads one image (the item, unmarshalled, keys included); throws when
   * the item is not one this consumer can read.
   */
  image(item: Record<string, unknown>): T;
  /** The service call for one record; must tolerate a repeat. */
  handle(deps: D, change: StreamChange<T>): Promise<void>;
}

/** Declares a stream consumer, typing its call from its image reader. */
export const streamConsumer = <D, T>(
  group: StreamConsumerGroup<D, T>,
): StreamConsumerGroup<D, T> => group;

/**
 * Whether a record passes a consumer's filter: the rule of the filter
 * criteria the CDK stack derives from the same declaration.
 */
export const passesFilter = (
  filter: StreamFilter,
  record: DynamoDBRecord,
): boolean => {
  const image =
    record.eventName === 'REMOVE'
      ? record.dynamodb?.OldImage
      : record.dynamodb?.NewImage;
  const type = image?.[ENTITY_TYPE]?.S;
  return (
    (filter.eventNames as readonly string[]).includes(record.eventName ?? '') &&
    type !== undefined &&
    (filter.entityTypes as readonly string[]).includes(type)
  );
};

/** What a record came to, counted per batch in one log line. */
type Outcome = 'processed' | 'skipped' | 'ignored';

/** A record's images read, or why they cannot be. */
const readImages = <T>(
  group: StreamConsumerGroup<unknown, T>,
  record: DynamoDBRecord,
): { ok: true; before?: T; after?: T } | { ok: false; reason: string } => {
  try {
    const read = (image: StreamImage | undefined) =>
      image ? group.image(unmarshall(image as UnmarshallInput)) : undefined;
    const before = read(record.dynamodb?.OldImage);
    const after = read(record.dynamodb?.NewImage);
    return {
      ok: true,
      ...(before !== undefined ? { before } : {}),
      ...(after !== undefined ? { after } : {}),
    };
  } catch (error) {
    return {
      ok: false,
      reason: error instanceof Error ? error.message : String(error),
    };
  }
};

type StreamImage = NonNullable<
  NonNullable<DynamoDBRecord['dynamodb']>['NewImage']
>;
// Lambda's JSON and the SDK's attribute values differ only in binaries
// (base64 text against bytes); no item a consumer reads holds one.
type UnmarshallInput = Parameters<typeof unmarshall>[0];

/**
 * Seconds since the oldest record of the batch was written: how far behind
 * the stream the consumer runs (Lambda's IteratorAge, per batch).
 */
const oldestAgeSeconds = (records: DynamoDBRecord[], now: number): number =>
  records.reduce((oldest, record) => {
    const written = record.dynamodb?.ApproximateCreationDateTime;
    return written === undefined
      ? oldest
      : Math.max(oldest, Math.max(0, now / 1000 - written));
  }, 0);

/** Publishes a batch's counts as metrics of its consumer, in one EMF line. */
const publishBatchMetrics = (
  name: string,
  counts: Record<Outcome | 'failed', number>,
  iteratorAgeSeconds: number,
): void => {
  metrics.addDimension('consumer', name);
  for (const [metric, value] of Object.entries(counts)) {
    metrics.addMetric(metric, MetricUnit.Count, value);
  }
  metrics.addMetric(
    'iteratorAgeSeconds',
    MetricUnit.Seconds,
    iteratorAgeSeconds,
  );
  metrics.publishStoredMetrics();
};

/**
 * Builds the DynamoDB Streams handler of a stream consumer: partial batch
 * responses (`reportBatchItemFailures`, by sequence number), records in
 * stream order, one log line per batch with its counts, the same counts as
 * metrics, and on Lambda an X-Ray subsegment per invocation.
 */
export const createStreamHandler = <D, T>(
  deps: D,
  group: StreamConsumerGroup<D, T>,
) => {
  const handleBatch = async (
    event: DynamoDBStreamEvent,
    context: Context,
  ): Promise<DynamoDBBatchResponse> => {
    const outcomes: Record<Outcome, number> = {
      processed: 0,
      skipped: 0,
      ignored: 0,
    };
    const processor = new BatchProcessor(EventType.DynamoDBStreams);
    const shared = new SharedValues();
    const record = async (item: DynamoDBRecord) => {
      const sequenceNumber = item.dynamodb?.SequenceNumber ?? '';
      const written = item.dynamodb?.ApproximateCreationDateTime;
      if (!passesFilter(group.filter, item)) {
        outcomes.ignored++;
        return;
      }
      const images = readImages(group, item);
      if (!images.ok) {
        logger.warn('Stream record skipped: its image does not parse', {
          consumer: group.name,
          sequenceNumber,
          eventName: item.eventName,
          reason: images.reason,
        });
        outcomes.skipped++;
        return;
      }
      await group.handle(deps, {
        eventName: item.eventName ?? 'MODIFY',
        sequenceNumber,
        ...(written !== undefined
          ? { writtenAt: new Date(written * 1000).toISOString() }
          : {}),
        batch: shared.scopeOf(sequenceNumber),
        ...(images.before !== undefined ? { before: images.before } : {}),
        ...(images.after !== undefined ? { after: images.after } : {}),
      });
      outcomes.processed++;
    };
    const processed = await processPartialResponse(event, record, processor, {
      context,
      throwOnFullBatchFailure: false,
      processInParallel: false,
    });
    // The records whose shared work failed join the failures: Lambda (and
    // the local poller) go on from the first failed record of the shard.
    const response: DynamoDBBatchResponse = {
      batchItemFailures: [...processed.batchItemFailures],
    };
    const retrying = new Set(
      response.batchItemFailures.map((failure) => failure.itemIdentifier),
    );
    for (const sequenceNumber of await shared.close(group.name)) {
      if (!retrying.has(sequenceNumber)) {
        response.batchItemFailures.push({ itemIdentifier: sequenceNumber });
      }
    }
    const failed = response.batchItemFailures.length;
    logger.info('Stream batch done', {
      consumer: group.name,
      records: event.Records.length,
      ...outcomes,
      failed,
    });
    publishBatchMetrics(
      group.name,
      { ...outcomes, failed },
      oldestAgeSeconds(event.Records, Date.now()),
    );
    processor.failureMessages.forEach((failure, index) => {
      logger.warn('Stream record to retry', {
        consumer: group.name,
        sequenceNumber: (failure as DynamoDBRecord).dynamodb?.SequenceNumber,
        error: processor.errors[index],
      });
    });
    return response;
  };
  return (
    event: DynamoDBStreamEvent,
    context: Context,
  ): Promise<DynamoDBBatchResponse> =>
    traced(`stream ${group.name}`, { consumer: group.name }, () =>
      handleBatch(event, context),
    );
};
