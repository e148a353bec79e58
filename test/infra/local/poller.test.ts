/**
 * The local poller (infra/local/poller.ts) against the embedded SQS engine:
 * it must deliver, delete, retry and dead-letter as Lambda's SQS trigger
 * and the queue do on AWS, so consumers meet the same retries locally.
 * Visibility timeouts of one second keep the retries quick.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as v from 'valibot';
import {
  afterAll,
  describe,
  expect,
  inject,
  it,
  onTestFinished,
  vi,
} from 'vitest';
import {
  type PollerHandler,
  type PollerLog,
  startPoller,
} from '../../../infra/local/poller.ts';
import {
  createConsumerQueues,
  deadLetterUrls,
  type LocalConsumerQueue,
} from '../../../infra/local/queues.ts';
import { startSqs } from '../../../infra/local/sqs.ts';
import { SqsDeadLetters } from '../../../shared/adapters/aws/sqs-dead-letters.ts';
import {
  consumer,
  createConsumerHandler,
  type QueueSettings,
} from '../../../shared/queue/consumer.ts';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
} from '../../../shared/runtime/local.ts';

const sqsClient = (endpoint: string) =>
  new SQSClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });

const quick: QueueSettings = {
  visibilityTimeoutSeconds: 1,
  batchSize: 10,
  maxConcurrency: 2,
  maxReceiveCount: 3,
};

/** Long enough for the retries these tests wait for, short of the test's. */
const WAIT = { timeout: 15_000, interval: 50 };

/** A log that keeps what it is told. */
const memoryLog = () => {
  const lines: { level: string; message: string }[] = [];
  const log: PollerLog = {
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
  };
  return { lines, log };
};

describe('the local poller, acting as Lambda’s SQS trigger', () => {
  const client = sqsClient(inject('sqsEndpoint'));
  afterAll(() => client.destroy());

  /** A fresh group's queues; the poller is stopped after the test. */
  const setup = async (settings: QueueSettings = quick) => {
    const name = `poller-${randomUUID().slice(0, 8)}`;
    const queues = await createConsumerQueues(client, [
      { name, queue: settings },
    ]);
    const queue = queues[name] as LocalConsumerQueue;
    const start = (
      handler: PollerHandler,
      options: { concurrency?: number; log?: PollerLog } = {},
    ) => {
      const poller = startPoller({
        client,
        queueUrl: queue.url,
        name,
        settings,
        handler,
        ...options,
      });
      onTestFinished(() => poller.stop());
      return poller;
    };
    return { name, queue, queues, settings, start };
  };

  const send = async (
    QueueUrl: string,
    bodies: string[],
    attributes?: Record<string, MessageAttributeValue>,
  ): Promise<string[]> => {
    const { Successful = [] } = await client.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: bodies.map((MessageBody, index) => ({
          Id: String(index),
          MessageBody,
          MessageAttributes: attributes,
        })),
      }),
    );
    return bodies.map(
      (_, index) =>
        Successful.find((entry) => entry.Id === String(index))?.MessageId ?? '',
    );
  };

  const counts = async (QueueUrl: string) => {
    const { Attributes = {} } = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
        ],
      }),
    );
    return {
      visible: Number(Attributes.ApproximateNumberOfMessages),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
    };
  };

  /** Takes every message of a queue (a dead-letter queue, here). */
  const drain = async (QueueUrl: string) =>
    (
      await client.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ['All'],
        }),
      )
    ).Messages ?? [];

  /** Every record the handler was given, with its receive count. */
  const recorder = () => {
    const batches: SQSEvent[] = [];
    const contexts: Context[] = [];
    const receipts = (body: string) =>
      batches
        .flatMap((event) => event.Records)
        .filter((record) => record.body === body)
        .map((record) => record.attributes.ApproximateReceiveCount);
    const record = (event: SQSEvent, context: Context) => {
      batches.push(event);
      contexts.push(context);
    };
    return { batches, contexts, receipts, record };
  };

  /**
   * An idempotent consumer group: its effect, counting a thing once, is
   * guarded by the thing's id (like a conditional write), so a redelivery
   * or a duplicate changes nothing.
   */
  const things = (
    name: string,
    settings: QueueSettings,
    failWith?: () => Error,
  ) => {
    const calls = new Map<string, number>();
    const effects = new Map<string, number>();
    const group = consumer({
      name,
      entry: 'functions/things/lambda.ts',
      queue: settings,
      message: v.object({ thingId: v.string() }),
      handle: async (_deps: object, message) => {
        calls.set(message.thingId, (calls.get(message.thingId) ?? 0) + 1);
        if (failWith) throw failWith();
        if (effects.has(message.thingId)) return;
        effects.set(message.thingId, 1);
      },
    });
    return { calls, effects, group };
  };
  const thing = (thingId: string) => JSON.stringify({ thingId });

  it('hands a batch to the handler as Lambda records, then deletes the successes', async () => {
    // Arrange
    const { name, queue, start } = await setup({
      ...quick,
      maxReceiveCount: 1,
    });
    const bodies = ['{"n":1}', '{"n":2}', '{"n":3}'];
    const ids = await send(queue.url, bodies, {
      kind: { DataType: 'String', StringValue: 'test' },
      blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
    });
    const seen = recorder();
    // Act: a handler that answers nothing, which Lambda reads as success.
    const poller = start(
      async (event, context) => seen.record(event, context),
      {
        concurrency: 1,
      },
    );
    await vi.waitFor(() => expect(seen.batches).toHaveLength(1), WAIT);
    await poller.stop();
    // Assert
    expect(seen.batches).toHaveLength(1);
    const [event] = seen.batches;
    expect(event?.Records.map((record) => record.messageId)).toEqual(ids);
    const [record] = event?.Records ?? [];
    expect(record).toEqual({
      messageId: ids[0],
      receiptHandle: expect.any(String),
      body: '{"n":1}',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d{13}$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
      },
      messageAttributes: {
        kind: {
          stringValue: 'test',
          stringListValues: [],
          binaryListValues: [],
          dataType: 'String',
        },
        blob: {
          binaryValue: Buffer.from([1, 2, 3]).toString('base64'),
          stringListValues: [],
          binaryListValues: [],
          dataType: 'Binary',
        },
      },
      md5OfBody: createHash('md5').update('{"n":1}').digest('hex'),
      md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/),
      eventSource: 'aws:sqs',
      eventSourceARN: queue.arn,
      awsRegion: LOCAL_REGION,
    });
    const [context] = seen.contexts;
    expect(context?.functionName).toBe(name);
    expect(context?.getRemainingTimeInMillis()).toBeGreaterThanOrEqual(0);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
    expect(await counts(queue.deadLetterUrl)).toEqual({
      visible: 0,
      inFlight: 0,
    });
  });

  it('gathers a batch over its batching window: messages arriving within it, up to batchSize (above the 10 one receive gives), are one invocation', async () => {
    // Arrange: a batch of up to 25 gathered over 2 s.
    const { queue, start } = await setup({
      ...quick,
      visibilityTimeoutSeconds: 10,
      batchSize: 25,
      batchWindowSeconds: 2,
    });
    const seen = recorder();
    start(async (event, context) => seen.record(event, context), {
      concurrency: 1,
    });

    // Act: 12 messages, then 18 more half a second later.
    const bodies = Array.from({ length: 30 }, (_, n) => `{"n":${n}}`);
    await send(queue.url, bodies.slice(0, 10));
    await send(queue.url, bodies.slice(10, 12));
    await new Promise((r) => setTimeout(r, 500));
    for (let at = 12; at < 30; at += 10) {
      await send(queue.url, bodies.slice(at, Math.min(30, at + 10)));
    }
    await vi.waitFor(
      () =>
        expect(
          seen.batches.flatMap((b) => b.Records.map((r) => r.body)),
        ).toHaveLength(30),
      WAIT,
    );

    // Assert: a full batch of 25 first, the rest once its window is over.
    expect(seen.batches.map((b) => b.Records.length)).toEqual([25, 5]);
    expect(
      new Set(seen.batches.flatMap((b) => b.Records.map((r) => r.body))),
    ).toEqual(new Set(bodies));
  });

  it('receives a batch item failure again after the visibility timeout, with receive count 2, and deletes it once it succeeds', async () => {
    // Arrange
    const { queue, start } = await setup();
    await send(queue.url, ['ok', 'flaky']);
    const seen = recorder();
    // Act
    start(
      async (event, context): Promise<SQSBatchResponse> => {
        seen.record(event, context);
        return {
          batchItemFailures: event.Records.filter(
            (record) =>
              record.body === 'flaky' &&
              record.attributes.ApproximateReceiveCount === '1',
          ).map((record) => ({ itemIdentifier: record.messageId })),
        };
      },
      { concurrency: 1 },
    );
    await vi.waitFor(async () => {
      expect(seen.receipts('flaky')).toEqual(['1', '2']);
      expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
    }, WAIT);
    // Assert
    expect(seen.receipts('ok')).toEqual(['1']);
    expect(await counts(queue.deadLetterUrl)).toMatchObject({ visible: 0 });
  });

  it('moves a message that fails every time to its dead-letter queue after maxReceiveCount receipts', async () => {
    // Arrange
    const { name, queue, queues, settings, start } = await setup({
      ...quick,
      maxReceiveCount: 2,
    });
    const consumer = things(name, settings, () => new Error('dependency down'));
    const handler = createConsumerHandler(
      { deadLetters: new SqsDeadLetters(client, deadLetterUrls(queues)) },
      consumer.group,
    );
    const [id] = await send(queue.url, [thing('doomed')]);
    const seen = recorder();
    // Act
    start(async (event, context) => {
      seen.record(event, context);
      return handler(event, context);
    });
    await vi.waitFor(
      async () =>
        expect(await counts(queue.deadLetterUrl)).toMatchObject({ visible: 1 }),
      WAIT,
    );
    // Assert
    expect(seen.receipts(thing('doomed'))).toEqual(['1', '2']);
    expect(consumer.calls.get('doomed')).toBe(2);
    expect(consumer.effects.size).toBe(0);
    const [dead] = await drain(queue.deadLetterUrl);
    expect(dead?.MessageId).toBe(id);
    expect(dead?.Body).toBe(thing('doomed'));
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('sends a body that is not the group’s message to the dead-letter queue at once, never retried', async () => {
    // Arrange
    const { name, queue, queues, settings, start } = await setup();
    const consumer = things(name, settings);
    const handler = createConsumerHandler(
      { deadLetters: new SqsDeadLetters(client, deadLetterUrls(queues)) },
      consumer.group,
    );
    await send(queue.url, ['not json', '{"thingId":42}', thing('good')]);
    const seen = recorder();
    // Act
    const poller = start(async (event, context) => {
      seen.record(event, context);
      return handler(event, context);
    });
    await vi.waitFor(
      async () =>
        expect(await counts(queue.deadLetterUrl)).toMatchObject({ visible: 2 }),
      WAIT,
    );
    // Assert
    const dead = await drain(queue.deadLetterUrl);
    expect(dead.map((message) => message.Body).sort()).toEqual([
      'not json',
      '{"thingId":42}',
    ]);
    expect(
      dead.map((message) => message.MessageAttributes?.reason?.StringValue),
    ).toEqual([expect.any(String), expect.any(String)]);
    // Deleted from the queue: nothing is left to come back.
    await vi.waitFor(
      async () =>
        expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 }),
      WAIT,
    );
    await poller.stop();
    expect(seen.receipts('not json')).toEqual(['1']);
    expect(seen.receipts('{"thingId":42}')).toEqual(['1']);
    expect([...consumer.effects.keys()]).toEqual(['good']);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('receives a whole batch again when the handler crashes mid-batch, and an idempotent consumer has each effect once', async () => {
    // Arrange
    const { name, queue, queues, settings, start } = await setup();
    const consumer = things(name, settings);
    const handler = createConsumerHandler(
      { deadLetters: new SqsDeadLetters(client, deadLetterUrls(queues)) },
      consumer.group,
    );
    const names = ['a', 'b', 'c', 'd'];
    await send(queue.url, names.map(thing));
    const seen = recorder();
    let crashed = false;
    // Act: the first invocation dies after handling two of its records.
    start(
      async (event, context) => {
        seen.record(event, context);
        if (crashed) return handler(event, context);
        crashed = true;
        await handler({ Records: event.Records.slice(0, 2) }, context);
        throw new Error('the container died');
      },
      { concurrency: 1 },
    );
    await vi.waitFor(async () => {
      expect(names.map((n) => seen.receipts(thing(n)))).toEqual(
        names.map(() => ['1', '2']),
      );
      expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
    }, WAIT);
    // Assert
    expect(seen.batches[0]?.Records).toHaveLength(4);
    expect(Object.fromEntries(consumer.calls)).toEqual({
      a: 2,
      b: 2,
      c: 1,
      d: 1,
    });
    expect(Object.fromEntries(consumer.effects)).toEqual({
      a: 1,
      b: 1,
      c: 1,
      d: 1,
    });
  });

  it('gives a message sent twice one effect with an idempotent consumer', async () => {
    // Arrange
    const { name, queue, queues, settings, start } = await setup();
    const consumer = things(name, settings);
    const handler = createConsumerHandler(
      { deadLetters: new SqsDeadLetters(client, deadLetterUrls(queues)) },
      consumer.group,
    );
    await send(queue.url, [thing('twin'), thing('single')]);
    await send(queue.url, [thing('twin')]);
    // Act
    start((event, context) => handler(event, context));
    await vi.waitFor(async () => {
      expect(consumer.calls.get('twin')).toBe(2);
      expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
    }, WAIT);
    // Assert
    expect(Object.fromEntries(consumer.effects)).toEqual({
      twin: 1,
      single: 1,
    });
  });

  it('fails the whole batch on a response naming no message of it, as Lambda does', async () => {
    // Arrange
    const { queue, start } = await setup();
    await send(queue.url, ['one', 'two']);
    const seen = recorder();
    const { lines, log } = memoryLog();
    // Act
    start(
      async (event, context) => {
        seen.record(event, context);
        const first = seen.batches.length === 1;
        return {
          batchItemFailures: first ? [{ itemIdentifier: 'not-a-message' }] : [],
        };
      },
      { concurrency: 1, log },
    );
    await vi.waitFor(async () => {
      expect(seen.receipts('one')).toEqual(['1', '2']);
      expect(seen.receipts('two')).toEqual(['1', '2']);
      expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
    }, WAIT);
    // Assert
    expect(lines).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('invalid batch response'),
      },
    ]);
  });

  it('runs up to maxConcurrency batches at once', async () => {
    // Arrange: one message a batch, and a handler that holds each batch
    // until two are in flight together.
    const { queue, start } = await setup({
      ...quick,
      visibilityTimeoutSeconds: 30,
      batchSize: 1,
      maxConcurrency: 2,
    });
    await send(queue.url, ['left', 'right']);
    let inFlight = 0;
    let most = 0;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Act
    const poller = start(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await released;
      inFlight--;
    });
    await vi.waitFor(() => expect(most).toBe(2), WAIT);
    release();
    await poller.stop();
    // Assert
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('stops only once the batch in flight is handled and its successes deleted', async () => {
    // Arrange
    const { queue, start } = await setup({
      ...quick,
      visibilityTimeoutSeconds: 30,
    });
    await send(queue.url, ['slow']);
    const order: string[] = [];
    let entered = false;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const poller = start(async () => {
      entered = true;
      await released;
      order.push('handled');
    });
    await vi.waitFor(() => expect(entered).toBe(true), WAIT);
    // Act
    const stopped = poller.stop().then(() => order.push('stopped'));
    setTimeout(release, 200);
    await stopped;
    // Assert
    expect(order).toEqual(['handled', 'stopped']);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('stops an idle poller at once: its long poll is abandoned', async () => {
    // Arrange
    const { start } = await setup();
    const handler = vi.fn<PollerHandler>(async () => {});
    const poller = start(handler);
    // Let the loops reach their long polls.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Act
    const began = Date.now();
    await poller.stop();
    // Assert: long before the poll's 20-second wait would end (the bound
    // leaves room for a loaded machine).
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(handler).not.toHaveBeenCalled();
  });

  it('logs, never throws, when the engine stops first, and still stops', async () => {
    // Arrange: an engine of its own, to stop under the poller.
    const engine = await startSqs();
    onTestFinished(() => engine.stop());
    const own = sqsClient(engine.endpoint);
    onTestFinished(() => own.destroy());
    const name = `orphan-${randomUUID().slice(0, 8)}`;
    const queues = await createConsumerQueues(own, [{ name, queue: quick }]);
    const { lines, log } = memoryLog();
    const poller = startPoller({
      client: own,
      queueUrl: (queues[name] as LocalConsumerQueue).url,
      name,
      settings: quick,
      handler: async () => {},
      log,
    });
    // Act
    await engine.stop();
    await vi.waitFor(
      () =>
        expect(lines).toContainEqual({
          level: 'warn',
          message: expect.stringContaining('could not be polled'),
        }),
      WAIT,
    );
    // Assert
    await expect(poller.stop()).resolves.toBeUndefined();
    expect(lines.every((line) => line.level === 'warn')).toBe(true);
  });
});
