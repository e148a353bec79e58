/**
 * The local queues (infra/local/queues.ts) on the embedded SQS engine: each
 * consumer group's queue and dead-letter queue, created as the CDK construct
 * creates them, and the engine's redrive after `maxReceiveCount` receipts.
 */
import { randomUUID } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  createConsumerQueues,
  createQueue,
  deadLetterUrls,
  type LocalConsumerQueue,
} from '../../../infra/local/queues.ts';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
} from '../../../shared/runtime/local.ts';

const settings = {
  visibilityTimeoutSeconds: 7,
  batchSize: 10,
  maxConcurrency: 2,
  maxReceiveCount: 2,
};

const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The queues of one group, which the test knows were created. */
const queuesOf = (
  queues: Readonly<Record<string, LocalConsumerQueue>>,
  name: string,
): LocalConsumerQueue => {
  const queue = queues[name];
  if (!queue) throw new Error(`No queues for ${name}`);
  return queue;
};

describe('the local queues of consumer groups', () => {
  const client = new SQSClient({
    endpoint: inject('sqsEndpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  afterAll(() => client.destroy());

  const attributesOf = async (QueueUrl: string) =>
    (
      await client.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
      )
    ).Attributes ?? {};

  it('creates each group a queue redriving to its dead-letter queue', async () => {
    // Arrange
    const name = uniqueName('queues');
    // Act
    const queues = await createConsumerQueues(client, [
      { name, queue: settings },
    ]);
    // Assert
    const created = queuesOf(queues, name);
    expect(created.url).toMatch(new RegExp(`/${name}$`));
    expect(created.deadLetterUrl).toMatch(new RegExp(`/${name}-dead-letters$`));
    const queue = await attributesOf(created.url);
    const deadLetters = await attributesOf(created.deadLetterUrl);
    expect(queue.QueueArn).toBe(created.arn);
    expect(deadLetters.QueueArn).toBe(created.deadLetterArn);
    expect(created.arn).toBe(
      `arn:aws:sqs:${LOCAL_REGION}:000000000000:${name}`,
    );
    expect(queue.VisibilityTimeout).toBe('7');
    expect(JSON.parse(queue.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: created.deadLetterArn,
      maxReceiveCount: 2,
    });
    expect(deadLetters.RedrivePolicy).toBeUndefined();
  });

  it('creates them again at no cost: same URLs, queues kept', async () => {
    // Arrange
    const name = uniqueName('again');
    const groups = [{ name, queue: settings }] as const;
    const first = await createConsumerQueues(client, groups);
    await client.send(
      new SendMessageCommand({
        QueueUrl: queuesOf(first, name).url,
        MessageBody: 'kept',
      }),
    );
    // Act
    const second = await createConsumerQueues(client, groups);
    // Assert
    expect(second).toEqual(first);
    expect(
      (await attributesOf(queuesOf(second, name).url))
        .ApproximateNumberOfMessages,
    ).toBe('1');
  });

  it('gives SqsDeadLetters the dead-letter URL of each group', async () => {
    // Arrange
    const [one, two] = [uniqueName('one'), uniqueName('two')];
    // Act
    const queues = await createConsumerQueues(client, [
      { name: one, queue: settings },
      { name: two, queue: settings },
    ]);
    // Assert
    expect(deadLetterUrls(queues)).toEqual({
      [one]: queuesOf(queues, one).deadLetterUrl,
      [two]: queuesOf(queues, two).deadLetterUrl,
    });
  });

  it('refuses two groups of one name, and a name SQS refuses', async () => {
    // Arrange
    const name = uniqueName('twice');
    // Act, Assert
    await expect(
      createConsumerQueues(client, [
        { name, queue: settings },
        { name, queue: settings },
      ]),
    ).rejects.toThrow(`Two consumer groups are named ${name}`);
    await expect(
      createConsumerQueues(client, [{ name: 'no spaces', queue: settings }]),
    ).rejects.toThrow('is not valid on SQS');
    await expect(
      createConsumerQueues(client, [{ name: 'x'.repeat(70), queue: settings }]),
    ).rejects.toThrow('is not valid on SQS');
  });

  it('creates a plain queue by name, with its attributes', async () => {
    // Arrange
    const name = uniqueName('plain');
    // Act
    const queue = await createQueue(client, name, { VisibilityTimeout: '3' });
    // Assert
    expect(queue.arn).toBe(`arn:aws:sqs:${LOCAL_REGION}:000000000000:${name}`);
    expect((await attributesOf(queue.url)).VisibilityTimeout).toBe('3');
  });

  it('moves a message to the dead-letter queue on the receipt after maxReceiveCount, as SQS does', async () => {
    // Arrange
    const name = uniqueName('redrive');
    const queues = await createConsumerQueues(client, [
      { name, queue: settings },
    ]);
    const { url, deadLetterUrl } = queuesOf(queues, name);
    const sent = await client.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }),
    );
    // Received and never deleted; visible again at once (timeout 0).
    const receive = async (QueueUrl: string) =>
      (
        await client.send(
          new ReceiveMessageCommand({
            QueueUrl,
            VisibilityTimeout: 0,
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
        )
      ).Messages ?? [];
    // Act
    const receipts = [await receive(url), await receive(url)];
    const third = await receive(url);
    // Assert
    expect(
      receipts.map(
        (messages) => messages[0]?.Attributes?.ApproximateReceiveCount,
      ),
    ).toEqual(['1', '2']);
    expect(third).toEqual([]);
    const [dead] = await receive(deadLetterUrl);
    expect(dead?.MessageId).toBe(sent.MessageId);
    expect(dead?.Body).toBe('poison');
    expect((await attributesOf(url)).ApproximateNumberOfMessages).toBe('0');
  });
});
