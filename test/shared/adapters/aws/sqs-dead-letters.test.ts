import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsDeadLetters } from '../../../../shared/adapters/aws/sqs-dead-letters.ts';

const client = new SQSClient({ region: 'eu-west-1' });
const sqs = mockClient(client);

describe('dead letters on SQS', () => {
  beforeEach(() => sqs.reset());

  it("sends the body as is to the group's dead-letter queue, with the reason", async () => {
    // Arrange
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const letters = new SqsDeadLetters(client, {
      events: 'https://sqs.eu-west-1.amazonaws.com/0/events-dlq',
    });
    // Act
    await letters.send('events', 'not json', 'the body is not JSON');
    // Assert
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/0/events-dlq',
      MessageBody: 'not json',
      MessageAttributes: {
        reason: { DataType: 'String', StringValue: 'the body is not JSON' },
      },
    });
  });

  it('refuses a group whose dead-letter queue is not bound, sending nothing', async () => {
    // Arrange
    const letters = new SqsDeadLetters(client, {});
    // Act
    const failure = letters.send('events', '{}', 'bad');
    // Assert
    await expect(failure).rejects.toThrow(
      /No dead-letter queue is bound for consumer events/,
    );
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });
});
