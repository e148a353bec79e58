/**
 * The stream consumers of the local stack: one stream poller each over the
 * table's change stream on the embedded engine, with the same handlers as
 * on AWS. `npm start` keeps their checkpoints in the data dir and writes
 * what they give up to a file (the on-failure queue's stand-in); the tests
 * catch the streams up after a call, with checkpoints in memory.
 */
import { appendFile } from 'node:fs/promises';
import {
  type StreamConsumerFunction,
  streamConsumerFunctions,
} from '../../functions/stream-consumers.ts';
import type { Deps } from '../../shared/deps.ts';
import { localDynamo } from '../../shared/runtime/local.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import { localStreams, tableStreamArn } from './dynamodb.ts';
import {
  type CheckpointStore,
  catchUpStream,
  type StreamFailure,
  type StreamPoller,
  type StreamPollerHandler,
  type StreamPollerOptions,
  startStreamPoller,
} from './stream-poller.ts';

/** What the stream consumers of a local table need. */
export interface LocalStreamsOptions {
  /** The embedded DynamoDB engine's endpoint (Streams API included). */
  endpoint: string;
  tableName: string;
  deps: Deps;
  /** Each consumer's checkpoints, by consumer name. */
  checkpoints: (consumer: string) => CheckpointStore;
  /** Where given-up batches are written (JSON lines); else only logged. */
  failuresFile?: string;
  /** The consumers to run; default every one. */
  consumers?: readonly StreamConsumerFunction[];
  /** Pause before a retry, in ms (tests: none). */
  retryPauseMs?: (attempt: number) => number;
  /**
   * Wraps each consumer's handler, as the poller calls it: the benchmarks
   * time invocations and attribute their calls with it.
   */
  wrapHandler?: (
    consumer: string,
    handler: StreamPollerHandler,
  ) => StreamPollerHandler;
}

const pollerOptions = async (
  options: LocalStreamsOptions,
): Promise<StreamPollerOptions[]> => {
  const client = localStreams(options.endpoint);
  const streamArn = await tableStreamArn(
    localDynamo(options.endpoint),
    options.tableName,
  );
  const { failuresFile } = options;
  return (options.consumers ?? streamConsumerFunctions).map(({ group }) => ({
    client,
    streamArn,
    name: group.name,
    settings: group.stream,
    filter: group.filter,
    handler: (options.wrapHandler ?? ((_, handler) => handler))(
      group.name,
      createStreamHandler(options.deps, group),
    ),
    checkpoints: options.checkpoints(group.name),
    ...(failuresFile
      ? {
          onFailure: async (failure: StreamFailure) => {
            await appendFile(
              failuresFile,
              `${JSON.stringify({ ...failure, at: new Date().toISOString() })}\n`,
            );
          },
        }
      : {}),
    ...(options.retryPauseMs ? { retryPauseMs: options.retryPauseMs } : {}),
  }));
};

/** Starts a poller per stream consumer; `stop` waits for their batches. */
export const startLocalStreams = async (
  options: LocalStreamsOptions,
): Promise<{ stop(): Promise<void> }> => {
  const pollers: StreamPoller[] = (await pollerOptions(options)).map(
    startStreamPoller,
  );
  return {
    stop: async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
    },
  };
};

/**
 * Hands every stream consumer what the stream holds beyond its checkpoint,
 * and returns once each has settled it.
 */
export const catchUpLocalStreams = async (
  options: LocalStreamsOptions,
): Promise<void> => {
  for (const poller of await pollerOptions(options)) {
    await catchUpStream(poller);
  }
};
