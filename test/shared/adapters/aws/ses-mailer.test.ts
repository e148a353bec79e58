import {
  AccountSuspendedException,
  BadRequestException,
  InternalServiceErrorException,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  NotFoundException,
  SESv2Client,
  SESv2ServiceException,
  SendEmailCommand,
  SendingPausedException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SesMailer } from '../../../../shared/adapters/aws/ses-mailer.ts';
import {
  isSendRefused,
  type SendRefusalKind,
  SendRefusedError,
} from '../../../../shared/mail/refusal.ts';
import type { OutgoingMessage } from '../../../../shared/ports.ts';

const client = new SESv2Client({ region: 'eu-west-1' });
const ses = mockClient(client);

const message: OutgoingMessage = {
  from: 'Acme <news@acme.example>',
  to: 'ana@example.com',
  subject: 'Café ☕ — the news',
  html: '<p>Grüße</p>',
  text: 'Grüße',
};

/** The input of the one SendEmail call. */
const sent = () => {
  const calls = ses.commandCalls(SendEmailCommand);
  expect(calls).toHaveLength(1);
  return calls[0]?.args[0].input;
};

describe('SesMailer', () => {
  beforeEach(() => ses.reset());

  it('sends simple content, every part in UTF-8, and answers the message id', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-1' });

    // Act
    const result = await new SesMailer(client).send(message);

    // Assert
    expect(result).toEqual({ messageId: 'msg-1' });
    expect(sent()).toEqual({
      FromEmailAddress: 'Acme <news@acme.example>',
      Destination: { ToAddresses: ['ana@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Café ☕ — the news', Charset: 'UTF-8' },
          Body: {
            Html: { Data: '<p>Grüße</p>', Charset: 'UTF-8' },
            Text: { Data: 'Grüße', Charset: 'UTF-8' },
          },
        },
      },
    });
  });

  it('maps extra headers to Content.Simple.Headers', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-1' });

    // Act
    await new SesMailer(client).send({
      ...message,
      headers: {
        'List-Unsubscribe': '<https://x.example/u>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    });

    // Assert
    expect(sent()?.Content?.Simple?.Headers).toEqual([
      { Name: 'List-Unsubscribe', Value: '<https://x.example/u>' },
      { Name: 'List-Unsubscribe-Post', Value: 'List-Unsubscribe=One-Click' },
    ]);
  });

  it('sends through the tenant and its configuration set of the same name', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-1' });

    // Act
    await new SesMailer(client).send({ ...message, tenantName: 'org-1' });

    // Assert
    expect(sent()).toMatchObject({
      TenantName: 'org-1',
      ConfigurationSetName: 'org-1',
    });
  });

  it("A2: the organization's own address goes in Reply-To (ReplyToAddresses)", async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-1' });

    // Act
    await new SesMailer(client).send({
      ...message,
      from: '"Acme" <no-reply@app.example>',
      replyTo: 'news@acme.example',
    });

    // Assert
    expect(sent()).toMatchObject({
      FromEmailAddress: '"Acme" <no-reply@app.example>',
      ReplyToAddresses: ['news@acme.example'],
    });
  });

  it('names no tenant, configuration set, Reply-To or headers when none is given', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-1' });

    // Act
    await new SesMailer(client).send(message);

    // Assert
    const input = sent();
    expect(input).not.toHaveProperty('TenantName');
    expect(input).not.toHaveProperty('ConfigurationSetName');
    expect(input).not.toHaveProperty('ReplyToAddresses');
    expect(input?.Content?.Simple).not.toHaveProperty('Headers');
  });

  it('fails when SES answers no message id', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({});

    // Act
    const result = new SesMailer(client).send(message);

    // Assert
    await expect(result).rejects.toThrow('returned no id');
  });

  it('names the default configuration set on mail sent outside a tenant, so SES publishes its events too', async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-2' });
    const mailer = new SesMailer(client, { configurationSet: 'app-events' });

    // Act
    await mailer.send(message);

    // Assert
    expect(sent()?.ConfigurationSetName).toBe('app-events');
    expect(sent()?.TenantName).toBeUndefined();
  });

  it("uses the tenant's own configuration set when the message has a tenant", async () => {
    // Arrange
    ses.on(SendEmailCommand).resolves({ MessageId: 'msg-3' });
    const mailer = new SesMailer(client, { configurationSet: 'app-events' });

    // Act
    await mailer.send({ ...message, tenantName: 'org-1' });

    // Assert
    expect(sent()).toMatchObject({
      TenantName: 'org-1',
      ConfigurationSetName: 'org-1',
    });
  });
});

/** An SES exception as the SDK deserialises it. */
const sesError = <E>(
  Exception: new (options: {
    message: string;
    $metadata: { httpStatusCode?: number };
  }) => E,
  message: string,
  httpStatusCode: number,
): E => new Exception({ message, $metadata: { httpStatusCode } });

/** A Node network error, as the SDK's HTTP handler passes it on. */
const networkError = (name: string, code?: string): Error =>
  Object.assign(new Error(`socket trouble (${code ?? name})`), {
    name,
    ...(code ? { code } : {}),
    $metadata: { attempts: 1, totalRetryDelay: 0 },
  });

/** What SesMailer.send threw, for a SendEmail that failed with `error`. */
const refusalOf = async (error: Error): Promise<SendRefusedError> => {
  ses.on(SendEmailCommand).rejects(error);
  const thrown = await new SesMailer(client).send(message).catch((e) => e);
  expect(thrown).toBeInstanceOf(SendRefusedError);
  expect((thrown as SendRefusedError).cause).toBe(error);
  return thrown as SendRefusedError;
};

describe('SesMailer: refusals', () => {
  beforeEach(() => ses.reset());

  it('throttled: a send over the maximum rate (TooManyRequestsException)', async () => {
    // Arrange
    const error = sesError(
      TooManyRequestsException,
      'Maximum sending rate exceeded.',
      429,
    );

    // Act
    const refusal = await refusalOf(error);

    // Assert
    expect(refusal.kind).toBe('throttled');
    expect(refusal.name).toBe('SendRefusedError');
    expect(refusal.message).toContain('Maximum sending rate exceeded');
    expect(isSendRefused(refusal, 'throttled')).toBe(true);
    expect(isSendRefused(refusal, 'paused')).toBe(false);
  });

  it('rejected: a message SES refuses (MessageRejected), and an invalid address (BadRequestException)', async () => {
    // Act
    const rejected = await refusalOf(
      sesError(MessageRejected, 'Email address is not verified.', 400),
    );
    ses.reset();
    const badRequest = await refusalOf(
      sesError(BadRequestException, 'Missing final @domain', 400),
    );

    // Assert
    expect(rejected.kind).toBe('rejected');
    expect(badRequest.kind).toBe('rejected');
  });

  it('paused: the spent 24-hour quota, a throttling error that names the daily quota', async () => {
    // Arrange
    const error = sesError(
      TooManyRequestsException,
      'Daily message quota exceeded.',
      429,
    );

    // Act
    const refusal = await refusalOf(error);

    // Assert
    expect(refusal.kind).toBe('paused');
  });

  it.each([
    ['SendingPausedException', sesError(SendingPausedException, 'paused', 400)],
    [
      'AccountSuspendedException',
      sesError(AccountSuspendedException, 'suspended', 400),
    ],
    [
      'MailFromDomainNotVerifiedException',
      sesError(MailFromDomainNotVerifiedException, 'not verified', 400),
    ],
    [
      'NotFoundException (no such tenant)',
      sesError(NotFoundException, 'Tenant org-1 does not exist', 404),
    ],
    [
      'LimitExceededException',
      sesError(LimitExceededException, 'Daily message quota exceeded.', 400),
    ],
    [
      'another 4xx (AccessDeniedException)',
      new SESv2ServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        message: 'not authorized to perform ses:SendEmail',
        $metadata: { httpStatusCode: 403 },
      }),
    ],
  ])('paused: %s', async (_, error) => {
    expect((await refusalOf(error)).kind).toBe('paused');
  });

  it.each<[string, Error, SendRefusalKind]>([
    [
      'a 5xx',
      sesError(InternalServiceErrorException, 'internal error', 500),
      'uncertain',
    ],
    ['a reset connection', networkError('Error', 'ECONNRESET'), 'uncertain'],
    ['a timeout', networkError('TimeoutError'), 'uncertain'],
    [
      'a refused connection (SES never saw the request)',
      networkError('Error', 'ECONNREFUSED'),
      'throttled',
    ],
  ])('uncertain, unless no connection was made: %s', async (_, error, kind) => {
    expect((await refusalOf(error)).kind).toBe(kind);
  });

  it('lets an error that is no answer of SES or the network through as it is', async () => {
    // Arrange
    const bug = new TypeError('Cannot read properties of undefined');
    ses.on(SendEmailCommand).rejects(bug);

    // Act
    const thrown = await new SesMailer(client).send(message).catch((e) => e);

    // Assert
    expect(thrown).toBe(bug);
    expect(isSendRefused(thrown)).toBe(false);
  });
});
