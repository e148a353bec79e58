/**
 * Infrastructure. The local stand-in for Lambda's DynamoDB Streams trigger
 * (event source mapping): it reads the table's change stream on the
 * embedded engine (DynamoDB Local serves the Streams API on its own
 * endpoint) and hands batches to a stream consumer's handler as Lambda
 * would — the same `DynamoDBStreamEvent` records, a Lambda `Context`.
 *
 * As Lambda does:
 * - every shard is read in order, a child only once its parent is read to
 *   its end (DescribeStream again finds the shards a split adds);
 * - records that do not pass the consumer's filter are never handed over
 *   (the same rule as the filter criteria of the CDK mapping);
 * - records of a shard go in batches of up to `batchSize`, gathered over
 *   the batching window;
 * - a batch item failure retries the batch from the first failed record;
 *   a handler that throws has its batch split in two (`bisectOnError`) down
 *   to single records, each half retried on its own; a batch still failing
 *   after `retryAttempts` retries is given up: described to `onFailure`
 *   (the on-failure queue's stand-in) and passed over, so one poisoned
 *   record never blocks its shard.
 *
 * Unlike Lambda, it keeps its position in a checkpoint (the last sequence
 * number handed over and settled, per shard; see {@link fileCheckpoints}):
 * a restart of `npm start` neither loses nor replays records. Records a
 * stopped stack never read may be trimmed by the engine (DynamoDB keeps a
 * stream's records 24 hours); a checkpoint behind the trim horizon is
 * logged as a loss and the shard is read again from its oldest record.
 */
import {
  type _Record,
  type AttributeValue,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  AttributeValue as LambdaAttributeValue,
} from 'aws-lambda';
import * as v from 'valibot';
import {
  readJsonFile,
  updateJsonFile,
} from '../../shared/adapters/local/json-file.ts';
import { ENTITY_TYPE } from '../../shared/db/items.ts';
import { logger } from '../../shared/observability.ts';
import {
  passesFilter,
  type StreamFilter,
  type StreamSettings,
} from '../../shared/streams/consumer.ts';
import { invocationContext, type PollerLog } from './poller.ts';

/**
 * A stream consumer's handler, as Lambda's trigger invokes it: a partial
 * batch response, or nothing when every record succeeded.
 */
export type StreamPollerHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing (aws-lambda's DynamoDBStreamHandler) must fit
) => Promise<DynamoDBBatchResponse | undefined | void>;

/** Where a consumer's shard reading stands. */
export interface ShardCheckpoint {
  /** The last record settled (handed over and done, or given up). */
  sequenceNumber?: string;
  /** The shard is closed and read to its end. */
  done?: boolean;
}

/** A consumer's position in one stream. */
export interface StreamCheckpoint {
  /** The stream read; another stream (a new table) starts over. */
  streamArn: string;
  shards: Record<string, ShardCheckpoint>;
}

/** Where a poller keeps its position. */
export interface CheckpointStore {
  load(): Promise<StreamCheckpoint | undefined>;
  save(checkpoint: StreamCheckpoint): Promise<void>;
}

/** A batch given up after its retries, as Lambda describes it on failure. */
export interface StreamFailure {
  consumer: string;
  streamArn: string;
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  batchSize: number;
  reason: string;
}

/** Options of {@link startStreamPoller} and {@link catchUpStream}. */
export interface StreamPollerOptions {
  client: DynamoDBStreamsClient;
  streamArn: string;
  /** The consumer's name: the function name in the context and logs. */
  name: string;
  settings: StreamSettings;
  filter: StreamFilter;
  handler: StreamPollerHandler;
  checkpoints: CheckpointStore;
  /** The on-failure destination; by default the failure is logged. */
  onFailure?: (failure: StreamFailure) => Promise<void>;
  /**
   * Milliseconds before retry number `attempt` (from 1). Default: 0.5 s
   * doubling up to 30 s, as the trigger backs off.
   */
  retryPauseMs?: (attempt: number) => number;
  log?: PollerLog;
}

/** A running stream poller. */
export interface StreamPoller {
  readonly name: string;
  /**
   * Stops reading and resolves once the batch in flight is settled and its
   * checkpoint written. Never rejects; runs once.
   */
  stop(): Promise<void>;
}

/** How often an idle shard is read again (Lambda: four times a second). */
const IDLE_PAUSE_MS = 250;
/** How often the shards are listed again (new shards after a split). */
const DESCRIBE_EVERY_MS = 10_000;
/** Pause after a failed call to the engine (stopped, not yet there). */
const ERROR_PAUSE_MS = 1_000;
/** Records one GetRecords returns at most (the Streams limit). */
const READ_LIMIT = 1_000;
/** The time budget of one invocation. */
const INVOCATION_BUDGET_MS = 60_000;

const defaultRetryPause = (attempt: number) =>
  Math.min(30_000, 500 * 2 ** (attempt - 1));

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

const errorAttributes = (error: unknown): Record<string, unknown> => ({
  error: error instanceof Error ? error.message : String(error),
  ...(error instanceof Error && { errorName: error.name }),
});

const isError = (error: unknown, name: string): boolean =>
  error instanceof Error && error.name === name;

/** An attribute value as Lambda's JSON carries it (binaries in base64). */
const lambdaValue = (value: AttributeValue): LambdaAttributeValue => {
  if (value.B !== undefined)
    return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined)
    return { BS: value.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(lambdaValue) };
  if (value.M !== undefined) return { M: lambdaImage(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  // The Streams client reads an empty map (`{"M": {}}`) as `{}`: sets are
  // never empty and an empty list keeps its `L`, so `{}` is that map.
  if (Object.keys(value).length === 0) return { M: {} };
  throw new Error(
    `An attribute value of an unknown type: ${JSON.stringify(value)}`,
  );
};

const lambdaImage = (
  image: Record<string, AttributeValue>,
): Record<string, LambdaAttributeValue> =>
  Object.fromEntries(
    Object.entries(image).map(([name, value]) => [name, lambdaValue(value)]),
  );

/**
 * What a consumer's filter reads of a record — its event name and the
 * entity type of its images — without converting whole images, so a record
 * no consumer wants is never read further.
 */
const filterView = (record: _Record): DynamoDBRecord => {
  const typeOf = (
    image: Record<string, AttributeValue> | undefined,
  ): Record<string, LambdaAttributeValue> => {
    const type = image?.[ENTITY_TYPE]?.S;
    return type === undefined ? {} : { [ENTITY_TYPE]: { S: type } };
  };
  return {
    ...(record.eventName !== undefined && { eventName: record.eventName }),
    dynamodb: {
      NewImage: typeOf(record.dynamodb?.NewImage),
      OldImage: typeOf(record.dynamodb?.OldImage),
    },
  };
};

/** One record of a `DynamoDBStreamEvent`, shaped as Lambda's trigger does. */
export const toLambdaRecord = (
  record: _Record,
  streamArn: string,
): DynamoDBRecord => {
  const stream = record.dynamodb ?? {};
  const written = stream.ApproximateCreationDateTime;
  return {
    ...(record.eventID !== undefined && { eventID: record.eventID }),
    ...(record.eventName !== undefined && { eventName: record.eventName }),
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    ...(record.awsRegion !== undefined && { awsRegion: record.awsRegion }),
    eventSourceARN: streamArn,
    dynamodb: {
      // Lambda sends epoch seconds; the SDK reads them into a Date.
      ...(written && {
        ApproximateCreationDateTime: Math.floor(written.getTime() / 1000),
      }),
      ...(stream.Keys && { Keys: lambdaImage(stream.Keys) }),
      ...(stream.NewImage && { NewImage: lambdaImage(stream.NewImage) }),
      ...(stream.OldImage && { OldImage: lambdaImage(stream.OldImage) }),
      ...(stream.SequenceNumber !== undefined && {
        SequenceNumber: stream.SequenceNumber,
      }),
      ...(stream.SizeBytes !== undefined && { SizeBytes: stream.SizeBytes }),
      ...(stream.StreamViewType !== undefined && {
        StreamViewType: stream.StreamViewType,
      }),
    },
  };
};

/**
 * A handler's answer as Lambda reads it with `reportBatchItemFailures`:
 * nothing, or no failures, is a full success; any other shape, or an
 * identifier not in the batch, fails the whole batch.
 */
const BatchResponse = v.nullish(
  v.object({
    batchItemFailures: v.nullish(
      v.array(v.object({ itemIdentifier: v.pipe(v.string(), v.nonEmpty()) })),
    ),
  }),
);

const sequenceOf = (record: DynamoDBRecord): string =>
  record.dynamodb?.SequenceNumber ?? '';

/** What one invocation came to. */
type Invocation =
  | { ok: true }
  | { ok: false; thrown: true; reason: string }
  | { ok: false; thrown: false; firstFailed: number; reason: string };

/** The reading of one stream by one consumer. */
class StreamReading {
  private checkpoint: StreamCheckpoint;
  private readonly log: PollerLog;
  private readonly attributes: Record<string, unknown>;

  constructor(
    private readonly options: StreamPollerOptions,
    checkpoint: StreamCheckpoint | undefined,
    private readonly signal?: AbortSignal,
  ) {
    this.log = options.log ?? logger;
    this.attributes = { consumer: options.name, streamArn: options.streamArn };
    if (checkpoint && checkpoint.streamArn !== options.streamArn) {
      this.log.warn(
        'The table has a new stream: reading it from its oldest record',
        { ...this.attributes, previousStreamArn: checkpoint.streamArn },
      );
    }
    this.checkpoint =
      checkpoint?.streamArn === options.streamArn
        ? checkpoint
        : { streamArn: options.streamArn, shards: {} };
  }

  /** Every shard of the stream, in the order DescribeStream lists them. */
  async shards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let ExclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await this.options.client.send(
        new DescribeStreamCommand({
          StreamArn: this.options.streamArn,
          ...(ExclusiveStartShardId ? { ExclusiveStartShardId } : {}),
        }),
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      ExclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (ExclusiveStartShardId);
    return shards;
  }

  /**
   * The shards to read now: not read to their end, with no parent still
   * being read (a parent gone from the stream was trimmed: nothing waits).
   */
  readable(shards: Shard[], busy: ReadonlySet<string>): Shard[] {
    const listed = new Set(shards.map((shard) => shard.ShardId));
    const done = (id: string) => this.checkpoint.shards[id]?.done === true;
    return shards.filter(
      (shard) =>
        shard.ShardId &&
        !done(shard.ShardId) &&
        !busy.has(shard.ShardId) &&
        !(
          shard.ParentShardId &&
          listed.has(shard.ParentShardId) &&
          !done(shard.ParentShardId)
        ),
    );
  }

  private async saveShard(shardId: string, state: ShardCheckpoint) {
    this.checkpoint = {
      ...this.checkpoint,
      shards: { ...this.checkpoint.shards, [shardId]: state },
    };
    await this.options.checkpoints.save(this.checkpoint);
  }

  /** An iterator after the checkpoint, or at the oldest record. */
  private async iterator(shardId: string): Promise<string | undefined> {
    const { client, streamArn } = this.options;
    const after = this.checkpoint.shards[shardId]?.sequenceNumber;
    if (after) {
      try {
        const { ShardIterator } = await client.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
            SequenceNumber: after,
          }),
        );
        return ShardIterator;
      } catch (error) {
        if (!isError(error, 'TrimmedDataAccessException')) throw error;
        this.log.error(
          'Records after the checkpoint were trimmed before this consumer read them: they are lost to it; reading on from the oldest record left',
          { ...this.attributes, shardId, checkpoint: after },
        );
      }
    }
    const { ShardIterator } = await client.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    return ShardIterator;
  }

  /**
   * Reads one shard, handing its records over in batches. With `caughtUp`
   * it returns once a read finds nothing new; otherwise it reads on until
   * the shard ends or the reading stops.
   */
  async readShard(shardId: string, options: { caughtUp: boolean }) {
    const { settings } = this.options;
    const windowMs = (settings.batchWindowSeconds ?? 0) * 1000;
    let iterator: string | undefined;
    try {
      iterator = await this.iterator(shardId);
    } catch (error) {
      if (!isError(error, 'ResourceNotFoundException')) throw error;
      // The shard left the stream (trimmed away): nothing more to read.
      await this.saveShard(shardId, { done: true });
      return;
    }
    let buffer: _Record[] = [];
    let firstBufferedAt = 0;
    while (!this.signal?.aborted) {
      let found = 0;
      if (iterator) {
        try {
          const page = await this.options.client.send(
            new GetRecordsCommand({
              ShardIterator: iterator,
              Limit: READ_LIMIT,
            }),
          );
          found = page.Records?.length ?? 0;
          if (found > 0 && buffer.length === 0) firstBufferedAt = Date.now();
          buffer.push(...(page.Records ?? []));
          iterator = page.NextShardIterator;
        } catch (error) {
          if (
            !isError(error, 'ExpiredIteratorException') &&
            !isError(error, 'TrimmedDataAccessException')
          ) {
            throw error;
          }
          // Read again after what is settled: the buffer comes back.
          buffer = [];
          iterator = await this.iterator(shardId);
          continue;
        }
      }
      const closed = iterator === undefined;
      // Caught up (tests) delivers at once; otherwise the window holds.
      const windowOver =
        closed ||
        (options.caughtUp && found === 0) ||
        Date.now() - firstBufferedAt >= windowMs;
      while (buffer.length > 0) {
        const passing = buffer.filter((record) =>
          passesFilter(this.options.filter, filterView(record)),
        ).length;
        if (passing < settings.batchSize && !windowOver) break;
        buffer = await this.settleNext(shardId, buffer);
        firstBufferedAt = Date.now();
      }
      if (closed && buffer.length === 0) {
        await this.saveShard(shardId, {
          ...this.checkpoint.shards[shardId],
          done: true,
        });
        return;
      }
      if (found === 0) {
        if (options.caughtUp && buffer.length === 0) return;
        const windowLeft = firstBufferedAt + windowMs - Date.now();
        await pause(
          buffer.length > 0
            ? Math.max(0, Math.min(IDLE_PAUSE_MS, windowLeft))
            : IDLE_PAUSE_MS,
          this.signal,
        );
      }
    }
  }

  /**
   * Hands over the next batch of the buffer (up to `batchSize` records
   * passing the filter, with the others between them), settles it and
   * moves the checkpoint past it. Returns what is left of the buffer.
   */
  private async settleNext(
    shardId: string,
    buffer: _Record[],
  ): Promise<_Record[]> {
    const { filter, settings, streamArn } = this.options;
    const batch: DynamoDBRecord[] = [];
    let taken = 0;
    while (taken < buffer.length && batch.length < settings.batchSize) {
      const record = buffer[taken];
      taken++;
      if (!record) continue;
      if (passesFilter(filter, filterView(record))) {
        batch.push(toLambdaRecord(record, streamArn));
      }
    }
    if (batch.length > 0) await this.deliver(shardId, batch, 0);
    const last = buffer[taken - 1]?.dynamodb?.SequenceNumber;
    if (last) {
      await this.saveShard(shardId, {
        ...this.checkpoint.shards[shardId],
        sequenceNumber: last,
      });
    }
    return buffer.slice(taken);
  }

  /** Invokes the handler once with `batch`. */
  private async invoke(batch: DynamoDBRecord[]): Promise<Invocation> {
    const { handler, name, streamArn } = this.options;
    let response: unknown;
    try {
      response = await handler(
        { Records: batch },
        invocationContext(
          name,
          { arn: streamArn, region: batch[0]?.awsRegion ?? 'local' },
          INVOCATION_BUDGET_MS,
        ),
      );
    } catch (error) {
      return {
        ok: false,
        thrown: true,
        reason: errorAttributes(error).error as string,
      };
    }
    const parsed = v.safeParse(BatchResponse, response);
    const failures = parsed.success
      ? (parsed.output?.batchItemFailures ?? [])
      : undefined;
    const positions = failures?.map((failure) =>
      batch.findIndex(
        (record) => sequenceOf(record) === failure.itemIdentifier,
      ),
    );
    if (!positions || positions.some((at) => at < 0)) {
      return {
        ok: false,
        thrown: true,
        reason: 'the handler answered with an invalid batch response',
      };
    }
    if (positions.length === 0) return { ok: true };
    return {
      ok: false,
      thrown: false,
      firstFailed: Math.min(...positions),
      reason: 'batch item failures',
    };
  }

  /**
   * Settles one batch: invoked, retried after its failures from the first
   * failed record, bisected when the handler throws; given up after
   * `retryAttempts` retries. Splitting is not a retry: each half starts
   * with the attempts of its parent.
   */
  private async deliver(
    shardId: string,
    batch: DynamoDBRecord[],
    attempts: number,
  ): Promise<void> {
    const { settings } = this.options;
    const outcome = await this.invoke(batch);
    if (outcome.ok) return;
    if (outcome.thrown && settings.bisectOnError && batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      await this.deliver(shardId, batch.slice(0, half), attempts);
      await this.deliver(shardId, batch.slice(half), attempts);
      return;
    }
    const rest = outcome.thrown ? batch : batch.slice(outcome.firstFailed);
    // Stopping: leave the batch unsettled, read again on the next start.
    if (this.signal?.aborted) throw new StoppedError();
    if (attempts >= settings.retryAttempts) {
      await this.giveUp(shardId, rest, outcome.reason);
      return;
    }
    this.log.warn('A stream batch failed: retrying it', {
      ...this.attributes,
      shardId,
      records: rest.length,
      attempt: attempts + 1,
      reason: outcome.reason,
    });
    await pause(
      (this.options.retryPauseMs ?? defaultRetryPause)(attempts + 1),
      this.signal,
    );
    if (this.signal?.aborted) throw new StoppedError();
    await this.deliver(shardId, rest, attempts + 1);
  }

  private async giveUp(
    shardId: string,
    batch: DynamoDBRecord[],
    reason: string,
  ): Promise<void> {
    const failure: StreamFailure = {
      consumer: this.options.name,
      streamArn: this.options.streamArn,
      shardId,
      startSequenceNumber: sequenceOf(batch[0] ?? {}),
      endSequenceNumber: sequenceOf(batch.at(-1) ?? {}),
      batchSize: batch.length,
      reason,
    };
    this.log.error(
      'A stream batch failed after its retries: given up',
      failure as unknown as Record<string, unknown>,
    );
    await this.options.onFailure?.(failure);
  }
}

/** The reading stopped with a batch unsettled (it is read again later). */
class StoppedError extends Error {
  constructor() {
    super('The stream poller stopped');
    this.name = 'StoppedError';
  }
}

/**
 * Reads the stream once up to its current end, handing everything new to
 * the handler (retries included), then returns: the tests' way to settle
 * what a call wrote before looking at what it caused.
 */
export const catchUpStream = async (
  options: StreamPollerOptions,
): Promise<void> => {
  const reading = new StreamReading(options, await options.checkpoints.load());
  // Each shard once, parents first: a child is readable once its parent
  // is read to its end, so the next round finds it.
  const read = new Set<string>();
  for (;;) {
    const next = reading.readable(await reading.shards(), read);
    if (next.length === 0) return;
    for (const { ShardId } of next) {
      if (!ShardId) continue;
      await reading.readShard(ShardId, { caughtUp: true });
      read.add(ShardId);
    }
  }
};

/**
 * Starts reading the stream for a stream consumer's handler, as Lambda's
 * DynamoDB trigger does (see the file's header), until stopped. Failures
 * of the engine are logged and retried after a pause, never thrown.
 */
export const startStreamPoller = (
  options: StreamPollerOptions,
): StreamPoller => {
  const log = options.log ?? logger;
  const stopping = new AbortController();
  const attributes = { consumer: options.name, streamArn: options.streamArn };
  const readers = new Map<string, Promise<void>>();

  const run = async () => {
    let reading: StreamReading | undefined;
    while (!stopping.signal.aborted) {
      try {
        reading ??= new StreamReading(
          options,
          await options.checkpoints.load(),
          stopping.signal,
        );
        const current = reading;
        for (const shard of current.readable(
          await current.shards(),
          new Set(readers.keys()),
        )) {
          const shardId = shard.ShardId ?? '';
          const reader = current
            .readShard(shardId, { caughtUp: false })
            .catch(async (error: unknown) => {
              if (error instanceof StoppedError || stopping.signal.aborted)
                return;
              log.warn('A shard could not be read; trying again', {
                ...attributes,
                shardId,
                ...errorAttributes(error),
              });
              await pause(ERROR_PAUSE_MS, stopping.signal);
            })
            .finally(() => readers.delete(shardId));
          readers.set(shardId, reader);
        }
        await pause(DESCRIBE_EVERY_MS, stopping.signal);
      } catch (error) {
        if (stopping.signal.aborted) break;
        log.warn('The stream could not be read; trying again', {
          ...attributes,
          ...errorAttributes(error),
        });
        await pause(ERROR_PAUSE_MS, stopping.signal);
      }
    }
  };

  const running = run();
  let stopped: Promise<void> | undefined;
  return {
    name: options.name,
    stop: () => {
      stopped ??= (async () => {
        stopping.abort();
        await running;
        await Promise.all(readers.values());
      })();
      return stopped;
    },
  };
};

/** The checkpoint file: each consumer's position, by consumer name. */
const CheckpointFile = v.record(
  v.string(),
  v.object({
    streamArn: v.string(),
    shards: v.record(
      v.string(),
      v.object({
        sequenceNumber: v.optional(v.string()),
        done: v.optional(v.boolean()),
      }),
    ),
  }),
);

/**
 * Checkpoints in a JSON file of the data dir, one entry per consumer,
 * written at once (temp file and rename) after every settled batch.
 */
export const fileCheckpoints = (
  file: string,
  consumer: string,
): CheckpointStore => ({
  load: async () => {
    const stored = await readJsonFile(file);
    if (stored === undefined) return undefined;
    return v.parse(CheckpointFile, stored)[consumer];
  },
  save: async (checkpoint) => {
    await updateJsonFile(file, (current) => ({
      ...(current === undefined ? {} : v.parse(CheckpointFile, current)),
      [consumer]: checkpoint,
    }));
  },
});

/** Checkpoints in memory (tests, and readers that need no restart). */
export const memoryCheckpoints = (): CheckpointStore & {
  current(): StreamCheckpoint | undefined;
} => {
  let saved: StreamCheckpoint | undefined;
  return {
    load: async () => saved,
    save: async (checkpoint) => {
      saved = checkpoint;
    },
    current: () => saved,
  };
};
