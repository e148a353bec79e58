import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SesMailer } from '../../../../shared/adapters/aws/ses-mailer.ts';
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
