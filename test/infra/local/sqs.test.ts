import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
} from '../../../shared/runtime/local.ts';

describe('the embedded SQS engine (fauxqs), through SQSClient', () => {
  const client = new SQSClient({
    endpoint: inject('sqsEndpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  afterAll(() => client.destroy());

  it('listens on a loopback address and port', () => {
    expect(inject('sqsEndpoint')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('creates a queue, sends, receives and deletes a message', async () => {
    // Arrange
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({
        QueueName: `engine-${randomUUID()}`,
        Attributes: { VisibilityTimeout: '30' },
      }),
    );
    // Act
    const sent = await client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: JSON.stringify({ hello: 'queue' }),
      }),
    );
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    const message = received.Messages?.[0];
    await client.send(
      new DeleteMessageCommand({
        QueueUrl,
        ReceiptHandle: message?.ReceiptHandle,
      }),
    );
    // Assert
    expect(received.Messages).toHaveLength(1);
    expect(message?.MessageId).toBe(sent.MessageId);
    expect(JSON.parse(message?.Body ?? '')).toEqual({ hello: 'queue' });
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
        ],
      }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
    await client.send(new DeleteQueueCommand({ QueueUrl }));
  });
});
