/**
 * The local stream poller (infra/local/stream-poller.ts) against the
 * embedded engine's change stream: it must hand records over, filter,
 * retry, bisect and give up as Lambda's DynamoDB trigger does, and keep a
 * checkpoint so that a restart neither loses nor replays records.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type {
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import { describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import {
  ensureTable,
  localStreams,
  tableStreamArn,
} from '../../../infra/local/dynamodb.ts';
import {
  catchUpStream,
  fileCheckpoints,
  memoryCheckpoints,
  type StreamFailure,
  type StreamPollerOptions,
  startStreamPoller,
} from '../../../infra/local/stream-poller.ts';
import { tableDefinition } from '../../../shared/db/table.ts';
import { localDynamo } from '../../../shared/runtime/local.ts';
import type { StreamSettings } from '../../../shared/streams/consumer.ts';
import { testDynamoEndpoint } from '../../support/dynamo.ts';

const settings: StreamSettings = {
  batchSize: 10,
  retryAttempts: 2,
  bisectOnError: true,
};

/** A fresh table, a writer of items, and poller options over its stream. */
const setup = async () => {
  const endpoint = testDynamoEndpoint();
  const dynamo = localDynamo(endpoint);
  const tableName = `stream-${randomUUID()}`;
  await ensureTable(dynamo, tableName, tableDefinition);
  const streamArn = await tableStreamArn(dynamo, tableName);
  // Each put changes the item: a write that changes nothing makes no record.
  let writes = 0;
  const put = async (id: string, type = 'Contact') => {
    writes++;
    await dynamo.send(
      new PutCommand({
        TableName: tableName,
        Item: { PK: `ITEM#${id}`, SK: 'ITEM', _type: type, id, writes },
      }),
    );
  };
  /** Every batch handed over, by item id; `answer` decides the response. */
  const batches: string[][] = [];
  const failures: StreamFailure[] = [];
  const idOf = (record: DynamoDBRecord) =>
    record.dynamodb?.NewImage?.id?.S ?? '';
  const options = (
    answer: (
      records: DynamoDBRecord[],
    ) => DynamoDBBatchResponse | undefined = () => undefined,
    overrides: Partial<StreamPollerOptions> = {},
  ): StreamPollerOptions => ({
    client: localStreams(endpoint),
    streamArn,
    name: 'test-stream',
    settings,
    filter: { eventNames: ['INSERT', 'MODIFY'], entityTypes: ['Contact'] },
    handler: async (event: DynamoDBStreamEvent) => {
      batches.push(event.Records.map(idOf));
      return answer(event.Records);
    },
    checkpoints: memoryCheckpoints(),
    onFailure: async (failure) => {
      failures.push(failure);
    },
    retryPauseMs: () => 0,
    log: { warn: () => {}, error: () => {} },
    ...overrides,
  });
  const handed = () => batches.flat();
  return { put, options, batches, failures, handed, streamArn, idOf };
};

describe('the local stream poller', () => {
  it('hands the records over as Lambda does, in write order, and only those passing the filter', async () => {
    // Arrange
    const { put, options, handed } = await setup();
    const events: DynamoDBStreamEvent[] = [];
    await put('a');
    await put('list', 'List');
    await put('b');
    await put('a');
    // Act
    await catchUpStream(
      options(undefined, {
        handler: async (event) => {
          events.push(event);
        },
      }),
    );
    // Assert
    const records = events.flatMap((event) => event.Records);
    expect(records.map((r) => r.dynamodb?.NewImage?.id?.S)).toEqual([
      'a',
      'b',
      'a',
    ]);
    expect(records.map((r) => r.eventName)).toEqual([
      'INSERT',
      'INSERT',
      'MODIFY',
    ]);
    const [first] = records;
    expect(first).toMatchObject({
      eventSource: 'aws:dynamodb',
      eventSourceARN: expect.stringContaining('/stream/'),
      dynamodb: {
        Keys: { PK: { S: 'ITEM#a' }, SK: { S: 'ITEM' } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
        SequenceNumber: expect.any(String),
        ApproximateCreationDateTime: expect.any(Number),
      },
    });
    expect(records[2]?.dynamodb?.OldImage?.id?.S).toBe('a');
    expect(handed()).toEqual([]);
  });

  it('hands an empty map over as Lambda does ({"M": {}}), also inside a list, and reads past other items holding one', async () => {
    // Arrange: the Streams client reads an empty map back as `{}`.
    const endpoint = testDynamoEndpoint();
    const { options } = await setup();
    const { streamArn } = options();
    const tableName = streamArn.split('/')[1] ?? '';
    const dynamo = localDynamo(endpoint);
    const item = (id: string, type: string) => ({
      PK: `ITEM#${id}`,
      SK: 'ITEM',
      _type: type,
      id,
      usedBy: {},
      nested: [{}],
      empty: [],
    });
    await dynamo.send(
      new PutCommand({ TableName: tableName, Item: item('s', 'Segment') }),
    );
    await dynamo.send(
      new PutCommand({ TableName: tableName, Item: item('c', 'Contact') }),
    );
    const records: DynamoDBRecord[] = [];
    // Act
    await catchUpStream(
      options(undefined, {
        handler: async (event) => {
          records.push(...event.Records);
        },
      }),
    );
    // Assert
    expect(records).toHaveLength(1);
    expect(records[0]?.dynamodb?.NewImage).toMatchObject({
      id: { S: 'c' },
      usedBy: { M: {} },
      nested: { L: [{ M: {} }] },
      empty: { L: [] },
    });
  });

  it('cuts batches at batchSize', async () => {
    // Arrange
    const { put, options, batches } = await setup();
    for (const id of ['a', 'b', 'c', 'd', 'e']) await put(id);
    // Act
    await catchUpStream(
      options(undefined, { settings: { ...settings, batchSize: 2 } }),
    );
    // Assert
    expect(batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('neither loses nor replays records across a restart (checkpoints in a file)', async () => {
    // Arrange
    const { put, options, handed } = await setup();
    const file = join(inject('scratchDir'), `checkpoints-${randomUUID()}.json`);
    await put('a');
    await catchUpStream(
      options(undefined, { checkpoints: fileCheckpoints(file, 'test-stream') }),
    );
    await put('b');
    // Act: a new poller over the same file, as after a restart.
    await catchUpStream(
      options(undefined, { checkpoints: fileCheckpoints(file, 'test-stream') }),
    );
    // Assert
    expect(handed()).toEqual(['a', 'b']);
  });

  it('reads a new stream from its oldest record', async () => {
    // Arrange: a checkpoint of another stream (the table was recreated).
    const { put, options, handed } = await setup();
    await put('a');
    const checkpoints = memoryCheckpoints();
    await checkpoints.save({
      streamArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/gone/stream/x',
      shards: {},
    });
    // Act
    await catchUpStream(options(undefined, { checkpoints }));
    // Assert
    expect(handed()).toEqual(['a']);
  });

  it('retries a batch from its first failed record', async () => {
    // Arrange: b fails once.
    const { put, options, batches, idOf } = await setup();
    for (const id of ['a', 'b', 'c']) await put(id);
    let failed = false;
    // Act
    await catchUpStream(
      options((records) => {
        const b = records.find((r) => idOf(r) === 'b');
        if (!b || failed) return undefined;
        failed = true;
        return {
          batchItemFailures: [
            { itemIdentifier: b.dynamodb?.SequenceNumber ?? '' },
          ],
        };
      }),
    );
    // Assert
    expect(batches).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c'],
    ]);
  });

  it('bisects a batch whose handler throws, and gives up the poisoned record after its retries', async () => {
    // Arrange: any batch holding c throws.
    const { put, options, batches, failures, idOf } = await setup();
    for (const id of ['a', 'b', 'c', 'd']) await put(id);
    // Act
    await catchUpStream(
      options((records) => {
        if (records.some((r) => idOf(r) === 'c')) throw new Error('poisoned');
        return undefined;
      }),
    );
    // Assert: halves, then c alone: once and two retries, then given up.
    expect(batches).toEqual([
      ['a', 'b', 'c', 'd'],
      ['a', 'b'],
      ['c', 'd'],
      ['c'],
      ['c'],
      ['c'],
      ['d'],
    ]);
    expect(failures).toEqual([
      expect.objectContaining({
        consumer: 'test-stream',
        batchSize: 1,
        reason: 'poisoned',
      }),
    ]);
  });

  it('gives up a partially failing batch after its retries, then moves on', async () => {
    // Arrange: b always fails.
    const { put, options, batches, failures, idOf } = await setup();
    for (const id of ['a', 'b', 'c']) await put(id);
    // Act
    await catchUpStream(
      options((records) => {
        const b = records.find((r) => idOf(r) === 'b');
        return b
          ? {
              batchItemFailures: [
                { itemIdentifier: b.dynamodb?.SequenceNumber ?? '' },
              ],
            }
          : undefined;
      }),
    );
    // Assert
    expect(batches).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c'],
      ['b', 'c'],
    ]);
    expect(failures).toEqual([
      expect.objectContaining({ batchSize: 2, reason: 'batch item failures' }),
    ]);
  });

  it('runs until stopped, handing over what is written meanwhile', async () => {
    // Arrange
    const { put, options, handed } = await setup();
    const poller = startStreamPoller(options());
    onTestFinished(() => poller.stop());
    // Act
    await put('a');
    await vi.waitFor(() => expect(handed()).toEqual(['a']), {
      timeout: 15_000,
    });
    await poller.stop();
    await put('b');
    // Assert: stopped is stopped; the next start resumes after a.
    expect(handed()).toEqual(['a']);
  });
});
