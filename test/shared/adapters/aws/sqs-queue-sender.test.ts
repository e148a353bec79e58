import {
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { SqsQueueSender } from '../../../../shared/adapters/aws/sqs-queue-sender.ts';
import { messageBody } from '../../../../shared/message-body.ts';
import { MessagesRefusedError } from '../../../../shared/ports.ts';

/** An error as the SDK throws it for a request SQS refused. */
const sqsError = (name: string, message: string, fault = 'client') =>
  new SQSServiceException({
    name,
    message,
    $fault: fault as 'client' | 'server',
    $metadata: {},
  });

/** What a call rejected with. */
const rejectionOf = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

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

  it('refuses a message SQS refuses for what it is, naming its code', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const tooLong = sqsError(
      'InvalidParameterValue',
      'Message must be shorter than 262144 bytes.',
    );
    mockClient(client).on(SendMessageCommand).rejects(tooLong);
    const message = { n: 1 };

    // Act
    const error = await rejectionOf(
      new SqsQueueSender(client, 'https://q').send(message),
    );

    // Assert
    expect(error).toBeInstanceOf(MessagesRefusedError);
    expect((error as MessagesRefusedError).refused).toEqual([
      {
        message,
        code: 'InvalidParameterValue',
        reason: 'Message must be shorter than 262144 bytes.',
      },
    ]);
    expect((error as Error).cause).toBe(tooLong);
  });

  it('lets through as they are the errors a retry may cure or that are not the message’s', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const errors = [
      sqsError('RequestThrottled', 'slow down'),
      sqsError('QueueDoesNotExist', 'no queue'),
      sqsError('InvalidParameterValue', 'internal', 'server'),
    ];
    const sqs = mockClient(client);
    const sender = new SqsQueueSender(client, 'https://q');

    // Act
    const rejections = [];
    for (const error of errors) {
      sqs.on(SendMessageCommand).rejects(error);
      rejections.push(await rejectionOf(sender.send({})));
    }

    // Assert
    expect(rejections).toEqual(errors);
  });

  it('sends every other entry of a batch, retries the failed ones, and refuses those SQS refused', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '' }],
        Failed: [
          {
            Id: '1',
            Code: 'InvalidParameterValue',
            SenderFault: true,
            Message: 'Message must be shorter than 262144 bytes.',
          },
          { Id: '2', Code: 'Throttled', SenderFault: false, Message: 'slow' },
        ],
      })
      .resolves({ Failed: [] });
    const messages = [{ message: 'a' }, { message: 'b' }, { message: 'c' }];

    // Act
    const error = await rejectionOf(
      new SqsQueueSender(client, 'https://q').sendBatch(messages),
    );

    // Assert
    expect(error).toBeInstanceOf(MessagesRefusedError);
    expect((error as MessagesRefusedError).refused).toEqual([
      {
        message: 'b',
        code: 'InvalidParameterValue',
        reason: 'Message must be shorter than 262144 bytes.',
      },
    ]);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((c) => c.args[0].input.Entries?.map((e) => e.Id))).toEqual(
      [['0', '1', '2'], ['2']],
    );
  });

  it('rejects with the retryable failure when one stays failed beside a refusal', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs.on(SendMessageBatchCommand).resolves({
      Failed: [
        { Id: '0', Code: 'InvalidMessageContents', SenderFault: true },
        { Id: '1', Code: 'Throttled', SenderFault: false, Message: 'slow' },
      ],
    });

    // Act
    const error = await rejectionOf(
      new SqsQueueSender(client, 'https://q').sendBatch([
        { message: 'a' },
        { message: 'b' },
      ]),
    );

    // Assert: some message may not have been sent; the whole may be again.
    expect(error).not.toBeInstanceOf(MessagesRefusedError);
    expect((error as Error).message).toContain('Throttled: slow');
  });

  it('sends message by message a batch refused as too long, refusing the one too large', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const sqs = mockClient(client);
    sqs
      .on(SendMessageBatchCommand)
      .rejects(sqsError('BatchRequestTooLong', 'too long together'));
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    sqs
      .on(SendMessageCommand, { MessageBody: '"big"' })
      .rejects(sqsError('InvalidParameterValue', 'too long'));

    // Act
    const error = await rejectionOf(
      new SqsQueueSender(client, 'https://q').sendBatch([
        { message: 'small', options: { group: 'org-1' } },
        { message: 'big' },
      ]),
    );

    // Assert
    expect((error as MessagesRefusedError).refused).toEqual([
      { message: 'big', code: 'InvalidParameterValue', reason: 'too long' },
    ]);
    expect(
      sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input),
    ).toEqual([
      {
        QueueUrl: 'https://q',
        MessageBody: '"small"',
        MessageGroupId: 'org-1',
      },
      { QueueUrl: 'https://q', MessageBody: '"big"' },
    ]);
  });

  it('lets through as it is a batch request’s error that is not a refusal', async () => {
    // Arrange
    const client = new SQSClient({ region: 'eu-west-1' });
    const denied = sqsError('KmsAccessDenied', 'denied');
    mockClient(client).on(SendMessageBatchCommand).rejects(denied);

    // Act
    const error = await rejectionOf(
      new SqsQueueSender(client, 'https://q').sendBatch([{ message: 'a' }]),
    );

    // Assert
    expect(error).toBe(denied);
  });
});
