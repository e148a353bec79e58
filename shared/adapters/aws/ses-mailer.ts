/**
 * Driven adapter: sends mail with SES v2 `SendEmail` (simple content, so SES
 * builds the MIME message and signs it with DKIM).
 */
import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { Mailer, OutgoingMessage } from '../../ports.ts';

/** The Mailer port over an SESv2Client (AWS, or the local emulator). */
export class SesMailer implements Mailer {
  /**
   * @param options.configurationSet the configuration set of mail sent
   * outside a tenant (the application's address, test sends): without one,
   * SES publishes no event about that mail, and its bounces go unseen.
   */
  constructor(
    private readonly client: SESv2Client,
    private readonly options: { configurationSet?: string } = {},
  ) {}

  async send(message: OutgoingMessage): Promise<{ messageId: string }> {
    const headers = Object.entries(message.headers ?? {}).map(
      ([Name, Value]) => ({ Name, Value }),
    );
    const tags = Object.entries(message.tags ?? {}).map(([Name, Value]) => ({
      Name,
      Value,
    }));
    const { MessageId } = await this.client.send(
      new SendEmailCommand({
        FromEmailAddress: message.from,
        Destination: { ToAddresses: [message.to] },
        ...(message.replyTo ? { ReplyToAddresses: [message.replyTo] } : {}),
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: 'UTF-8' },
            Body: {
              Html: { Data: message.html, Charset: 'UTF-8' },
              Text: { Data: message.text, Charset: 'UTF-8' },
            },
            ...(headers.length ? { Headers: headers } : {}),
          },
        },
        ...(tags.length ? { EmailTags: tags } : {}),
        // The tenant's configuration set has the tenant's name; SES sends
        // only if every resource used is associated with the tenant.
        ...(message.tenantName
          ? {
              TenantName: message.tenantName,
              ConfigurationSetName: message.tenantName,
            }
          : this.options.configurationSet
            ? { ConfigurationSetName: this.options.configurationSet }
            : {}),
      }),
    );
    if (!MessageId)
      throw new Error('SES accepted the email but returned no id');
    return { messageId: MessageId };
  }
}
