import {
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import {
  messageBody,
  SqsQueueSender,
} from '../../../../shared/adapters/aws/sqs-queue-sender.ts';

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

  it('sends up to ten messages in one batch, each with its own group and delay', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });

    // Act
    await new SqsQueueSender(client, 'https://q').sendBatch([
      { message: { n: 1 }, options: { group: 'org-1' } },
      { message: { n: 2 }, options: { group: 'org-2', delaySeconds: 5 } },
    ]);

    // Assert
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual(
      {
        QueueUrl: 'https://q',
        Entries: [
          { Id: '0', MessageBody: '{"n":1}', MessageGroupId: 'org-1' },
          {
            Id: '1',
            MessageBody: '{"n":2}',
            MessageGroupId: 'org-2',
            DelaySeconds: 5,
          },
        ],
      },
    );
  });

  it('sends again the entries SQS failed, and rejects when some stay failed', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Failed: [
          {
            Id: '1',
            Code: 'Throttled',
            SenderFault: false,
            Message: 'slow down',
          },
        ],
      })
      .resolves({
        Failed: [
          {
            Id: '1',
            Code: 'Throttled',
            SenderFault: false,
            Message: 'slow down',
          },
        ],
      });
    const sender = new SqsQueueSender(client, 'https://q');

    // Act
    const sent = sender.sendBatch([{ message: 'a' }, { message: 'b' }]);

    // Assert
    await expect(sent).rejects.toThrow(
      'SQS took 0 of 1 messages: Throttled: slow down',
    );
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(3);
    expect(calls[1]?.args[0].input.Entries?.map((e) => e.Id)).toEqual(['1']);
  });

  it('refuses more than ten messages in one batch', async () => {
    // Act
    const sent = new SqsQueueSender(
      new SQSClient({ region: 'eu-west-1' }),
      'https://q',
    ).sendBatch(Array.from({ length: 11 }, (_, n) => ({ message: n })));

    // Assert
    await expect(sent).rejects.toThrow('at most 10');
  });

  it('writes as escapes what SQS or the local engine refuses, and the JSON parses back the same', async () => {
    // Arrange: an emoji and a mathematical letter (past U+FFFF), the two
    // noncharacters SQS refuses, a control and a lone surrogate.
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const message = {
      firstName: 'Zoë 🎉 𝔘 \uFFFE\uFFFF \u0001 \uD800 "q" \\ </script>',
    };

    // Act
    await new SqsQueueSender(client, 'https://q').sendBatch([{ message }]);

    // Assert
    const body =
      sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries?.[0]
        ?.MessageBody ?? '';
    // What SQS takes (its documented set) and what fauxqs takes (no
    // character past U+FFFF).
    // biome-ignore lint/suspicious/noControlCharactersInRegex: SQS's own set
    expect(body).not.toMatch(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/);
    expect(body).toContain('Zoë');
    expect(JSON.parse(body)).toEqual(message);
    expect(messageBody({ a: 'plain' })).toBe('{"a":"plain"}');
  });
});
