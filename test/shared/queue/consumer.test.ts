/**
 * The consumer pipeline (shared/queue/consumer.ts): what becomes of each
 * record of a batch — processed, dead-lettered at once, dropped for good,
 * or reported as a batch item failure to be retried — and what a batch
 * tells about itself: one log line, one EMF line of metrics, a traced
 * subsegment.
 */
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ConflictError, NotFoundError } from '../../../shared/errors.ts';
import { metrics } from '../../../shared/metrics.ts';
import {
  currentTracer,
  logger,
  startTracing,
  stopTracing,
} from '../../../shared/observability.ts';
import {
  consumer,
  createConsumerHandler,
  type DeadLetters,
} from '../../../shared/queue/consumer.ts';
import { lambdaContext } from '../../support/events.ts';

const record = (
  id: string,
  body: string,
  receiveCount = 1,
  sentAt = 1700000000000,
): SQSRecord => ({
  messageId: id,
  receiptHandle: `handle-${id}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
    SentTimestamp: String(sentAt),
    SenderId: 'sender',
    ApproximateFirstReceiveTimestamp: '1700000000000',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:things',
  awsRegion: 'eu-west-1',
});

const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** A consumer that marks things done: idempotent on its own state. */
const setup = (failWith?: (id: string) => Error | undefined) => {
  const done = new Map<string, number>();
  const calls: { id: string; receiveCount: number }[] = [];
  const deadLetters = { send: vi.fn<DeadLetters['send']>(async () => {}) };
  const group = consumer({
    name: 'things',
    entry: 'functions/things/lambda.ts',
    queue: {
      visibilityTimeoutSeconds: 60,
      batchSize: 10,
      maxConcurrency: 2,
      maxReceiveCount: 5,
    },
    message: v.object({ thingId: v.string(), amount: v.number() }),
    handle: async (deps: { done: Map<string, number> }, message, delivery) => {
      calls.push({ id: message.thingId, receiveCount: delivery.receiveCount });
      const failure = failWith?.(message.thingId);
      if (failure) throw failure;
      // Setting, not adding: a second delivery changes nothing.
      deps.done.set(message.thingId, message.amount);
    },
  });
  const handler = createConsumerHandler({ done, deadLetters }, group);
  return { done, calls, deadLetters, handler };
};

const body = (thingId: string, amount = 1) =>
  JSON.stringify({ thingId, amount });

describe('values the messages of a batch share', () => {
  /** A consumer that sums amounts per key, written once per batch. */
  const sharing = (failClose?: (key: string) => boolean) => {
    const written: [string, number][] = [];
    const group = consumer({
      name: 'sums',
      entry: 'functions/sums/lambda.ts',
      queue: {
        visibilityTimeoutSeconds: 60,
        batchSize: 10,
        maxConcurrency: 2,
        maxReceiveCount: 5,
      },
      message: v.object({ thingId: v.string(), amount: v.number() }),
      handle: async (_deps: object, message, delivery) => {
        const sum = delivery.batch?.share(
          message.thingId,
          () => ({ total: 0 }),
          async (value) => {
            if (failClose?.(message.thingId)) throw new Error('store down');
            written.push([message.thingId, value.total]);
          },
        );
        if (sum) sum.total += message.amount;
      },
    });
    const deadLetters = { send: vi.fn<DeadLetters['send']>(async () => {}) };
    return { written, handler: createConsumerHandler({ deadLetters }, group) };
  };

  it('closes each shared value once, after every message of the batch', async () => {
    // Arrange
    const { written, handler } = sharing();
    // Act
    const response = await handler(
      batch(
        record('1', body('a', 2)),
        record('2', body('b', 5)),
        record('3', body('a', 3)),
      ),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(written).toEqual([
      ['a', 5],
      ['b', 5],
    ]);
  });

  it('retries the messages that shared a value whose close failed, and only them, in a new response each batch', async () => {
    // Arrange
    const { written, handler } = sharing((key) => key === 'a');
    // Act
    const failing = await handler(
      batch(
        record('1', body('a', 2)),
        record('2', body('b', 5)),
        record('3', body('a', 3)),
      ),
      lambdaContext(),
    );
    const clean = await handler(batch(record('4', body('b'))), lambdaContext());
    // Assert
    expect(failing.batchItemFailures).toEqual([
      { itemIdentifier: '1' },
      { itemIdentifier: '3' },
    ]);
    expect(clean.batchItemFailures).toEqual([]);
    expect(written).toEqual([
      ['b', 5],
      ['b', 1],
    ]);
  });
});

describe('a consumer group handles a batch record by record', () => {
  it('processes valid messages, parsed with the schema, with their receive count', async () => {
    // Arrange
    const { done, calls, handler } = setup();
    // Act
    const response = await handler(
      batch(record('1', body('a', 2)), record('2', body('b'), 3)),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect([...done]).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(calls).toEqual([
      { id: 'a', receiveCount: 1 },
      { id: 'b', receiveCount: 3 },
    ]);
  });

  it('dead-letters a body that is not JSON or not the message at once, naming the field, and never retries it', async () => {
    // Arrange
    const { calls, deadLetters, handler } = setup();
    // Act
    const response = await handler(
      batch(
        record('1', 'not json'),
        record('2', JSON.stringify({ thingId: 'a', amount: 'x' })),
        record('3', body('c')),
      ),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(calls.map((c) => c.id)).toEqual(['c']);
    expect(deadLetters.send.mock.calls).toEqual([
      ['things', 'not json', 'the body is not JSON'],
      [
        'things',
        JSON.stringify({ thingId: 'a', amount: 'x' }),
        expect.stringMatching(/^the message is invalid: amount: /),
      ],
    ]);
  });

  it('reports a transient failure (a conflict, anything unexpected) as a batch item failure, and only that record', async () => {
    // Arrange
    const { done, handler } = setup((id) =>
      id === 'a'
        ? new ConflictError('contact.changed', 'raced')
        : id === 'b'
          ? new Error('throttled')
          : undefined,
    );
    // Act
    const response = await handler(
      batch(
        record('1', body('a')),
        record('2', body('b')),
        record('3', body('c')),
      ),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: '1' },
      { itemIdentifier: '2' },
    ]);
    expect([...done.keys()]).toEqual(['c']);
  });

  it('reports every record when the whole batch fails, instead of throwing', async () => {
    // Arrange
    const { handler } = setup(() => new Error('down'));
    // Act
    const response = await handler(
      batch(record('1', body('a')), record('2', body('b'))),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toHaveLength(2);
  });

  it('drops a message whose call refuses for good (a 4xx other than 409): retrying cannot help', async () => {
    // Arrange
    const { deadLetters, handler } = setup((id) =>
      id === 'gone'
        ? new NotFoundError('contact.notFound', 'No contact')
        : undefined,
    );
    // Act
    const response = await handler(
      batch(record('1', body('gone'))),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetters.send).not.toHaveBeenCalled();
  });

  it('has the effect of one when a batch is delivered again after a crash mid-batch', async () => {
    // Arrange: the first delivery fails on its second record.
    let crash = true;
    const { done, handler } = setup((id) =>
      id === 'b' && crash ? new Error('crash') : undefined,
    );
    const delivered = batch(
      record('1', body('a', 5)),
      record('2', body('b', 7)),
    );
    // Act: the whole batch again (as after a crashed invocation), and a duplicate.
    const first = await handler(delivered, lambdaContext());
    crash = false;
    await handler(delivered, lambdaContext());
    await handler(batch(record('3', body('a', 5))), lambdaContext());
    // Assert: only the crashed record was to retry; the end state is one delivery's.
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    expect([...done]).toEqual([
      ['a', 5],
      ['b', 7],
    ]);
  });
});

/**
 * Stands in for the EMF flush: keeps each document `publishStoredMetrics`
 * would print (metrics are off in tests), and empties the buffer as it does.
 */
const captureEmf = () => {
  const published: EmfOutput[] = [];
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
    published.push(metrics.serializeMetrics());
    metrics.clearMetrics();
    metrics.clearDimensions();
    metrics.clearMetadata();
    return metrics;
  });
  return published;
};

describe('a consumer batch reports on itself', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('publishes its counts and the age of its oldest message as one EMF line, dimension consumer, beside its log line', async () => {
    // Arrange: one processed, one retried, one dead-lettered, sent 30 to 90 s ago.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1700000090000);
    const published = captureEmf();
    const logged = vi.spyOn(logger, 'info');
    const { handler } = setup((id) =>
      id === 'b' ? new Error('throttled') : undefined,
    );
    // Act
    const response = await handler(
      batch(
        record('1', body('a'), 1, 1700000060000),
        record('2', body('b'), 2, 1700000000000),
        record('3', 'not json', 1, 1700000030000),
      ),
      lambdaContext(),
    );
    // Assert
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    expect(published).toHaveLength(1);
    const [emf] = published;
    expect(emf).toMatchObject({
      consumer: 'things',
      service: 'email-marketing',
      processed: 1,
      failed: 1,
      deadLettered: 1,
      dropped: 0,
      oldestMessageAgeSeconds: 90,
    });
    expect(emf?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'EmailMarketing',
        Dimensions: [['service', 'consumer']],
        Metrics: expect.arrayContaining([
          { Name: 'processed', Unit: 'Count' },
          { Name: 'failed', Unit: 'Count' },
          { Name: 'deadLettered', Unit: 'Count' },
          { Name: 'dropped', Unit: 'Count' },
          { Name: 'oldestMessageAgeSeconds', Unit: 'Seconds' },
        ]),
      },
    ]);
    expect(logged).toHaveBeenCalledWith('Batch done', {
      consumer: 'things',
      records: 3,
      processed: 1,
      deadLettered: 1,
      dropped: 0,
      retried: 1,
    });
  });

  it('publishes once per batch and carries nothing over to the next', async () => {
    // Arrange
    const published = captureEmf();
    const { handler } = setup();
    // Act
    await handler(batch(record('1', body('a'))), lambdaContext());
    await handler(
      batch(record('2', body('b')), record('3', body('c'))),
      lambdaContext(),
    );
    // Assert
    expect(published.map((emf) => emf.processed)).toEqual([1, 2]);
  });

  it('runs each invocation in a subsegment annotated with its consumer group when tracing is on', async () => {
    // Arrange: a stand-in for Lambda's segment, as X-Ray would give it.
    const subsegment = { close: vi.fn() };
    const segment = { addNewSubsegment: vi.fn(() => subsegment) };
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
    await startTracing();
    const tracer = currentTracer();
    if (!tracer) throw new Error('startTracing loaded no tracer');
    onTestFinished(() => {
      stopTracing();
      vi.unstubAllEnvs();
    });
    vi.spyOn(tracer, 'isTracingEnabled').mockReturnValue(true);
    vi.spyOn(tracer, 'getSegment').mockReturnValue(
      segment as unknown as ReturnType<typeof tracer.getSegment>,
    );
    vi.spyOn(tracer, 'setSegment').mockImplementation(() => {});
    vi.spyOn(tracer, 'annotateColdStart').mockImplementation(() => {});
    vi.spyOn(tracer, 'addServiceNameAnnotation').mockImplementation(() => {});
    const annotate = vi
      .spyOn(tracer, 'putAnnotation')
      .mockImplementation(() => {});
    captureEmf();
    const { handler } = setup();
    // Act
    await handler(batch(record('1', body('a'))), lambdaContext());
    // Assert
    expect(segment.addNewSubsegment).toHaveBeenCalledWith('## consumer things');
    expect(annotate).toHaveBeenCalledWith('consumer', 'things');
    expect(subsegment.close).toHaveBeenCalledOnce();
  });
});
