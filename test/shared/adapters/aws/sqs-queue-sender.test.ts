import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { SqsQueueSender } from '../../../../shared/adapters/aws/sqs-queue-sender.ts';

describe('SqsQueueSender', () => {
  it('sends the message as JSON to its queue', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/campaigns';

    // Act
    await new SqsQueueSender(client, url).send({ campaignId: 'c-1' });

    // Assert
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: url,
      MessageBody: '{"campaignId":"c-1"}',
    });
  });

  it('sends a group and a delay in whole seconds, at most the 900 SQS allows', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const sender = new SqsQueueSender(client, 'https://q');

    // Act
    await sender.send({}, { group: 'org-1', delaySeconds: 7.6 });
    await sender.send({}, { delaySeconds: 4_000 });
    await sender.send({}, { delaySeconds: 0 });

    // Assert
    const inputs = sqs
      .commandCalls(SendMessageCommand)
      .map((c) => c.args[0].input);
    expect(inputs[0]).toMatchObject({
      MessageGroupId: 'org-1',
      DelaySeconds: 8,
    });
    expect(inputs[1]?.DelaySeconds).toBe(900);
    expect(inputs[2]).not.toHaveProperty('DelaySeconds');
  });

  it('lets a refusal through, for the caller to retry or answer', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    mockClient(client).on(SendMessageCommand).rejects(new Error('throttled'));

    // Act
    const sent = new SqsQueueSender(client, 'https://q').send({});

    // Assert
    await expect(sent).rejects.toThrow('throttled');
  });
});
