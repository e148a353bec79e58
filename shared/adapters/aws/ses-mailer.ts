/**
 * Driven adapter: sends mail with SES v2 `SendEmail` (simple content, so SES
 * builds the MIME message and signs it with DKIM). SES's refusals become
 * SendRefusedErrors of the kind a sender acts on.
 */
import {
  type SESv2Client,
  SendEmailCommand,
  type SendEmailCommandOutput,
} from '@aws-sdk/client-sesv2';
import { type SendRefusalKind, SendRefusedError } from '../../mail/refusal.ts';
import type { Mailer, OutgoingMessage } from '../../ports.ts';

/** Refusals of the account or of the organization's tenant as a whole. */
const PAUSED_NAMES = new Set([
  'SendingPausedException',
  'AccountSuspendedException',
  'MailFromDomainNotVerifiedException',
  // The tenant or configuration set named by the message does not exist.
  'NotFoundException',
  // "There are too many instances of the specified resource type": a limit
  // of the account, never of one recipient (some report it for the spent
  // 24-hour quota too).
  'LimitExceededException',
  // Our credentials or permissions: nothing sends until an operator acts.
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
]);

/** Refusals of this message or recipient alone. */
const REJECTED_NAMES = new Set(['MessageRejected', 'BadRequestException']);

/** Throttling, as SES v2 names it (and as SES's guide still calls it). */
const THROTTLING_NAMES = new Set([
  'TooManyRequestsException',
  'ThrottlingException',
  'Throttling',
]);

/**
 * SES answers a spent 24-hour quota with the throttling error of a too-fast
 * send and tells the two apart only by the message ("Daily message quota
 * exceeded" against "Maximum sending rate exceeded").
 */
const DAILY_QUOTA_MESSAGE = /daily message quota exceeded/i;

/** No connection was made: SES never saw the request, a retry is safe. */
const NOT_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/** The connection broke or timed out: SES may have taken the request. */
const CUT_OFF_CODES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
]);
const CUT_OFF_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'AbortError']);

/** The parts of an SDK (or Node network) error the mapping looks at. */
interface SdkErrorShape {
  code?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

/**
 * The kind of a SendEmail failure; undefined for an error that is no answer
 * of SES nor of the network (a bug of ours), which is rethrown as it is.
 */
const refusalKindOf = (error: unknown): SendRefusalKind | undefined => {
  if (!(error instanceof Error)) return undefined;
  const { code, $fault, $metadata, $retryable } = error as SdkErrorShape;
  const status = $metadata?.httpStatusCode;
  if (
    THROTTLING_NAMES.has(error.name) ||
    $retryable?.throttling ||
    status === 429
  ) {
    return DAILY_QUOTA_MESSAGE.test(error.message) ? 'paused' : 'throttled';
  }
  if (PAUSED_NAMES.has(error.name)) return 'paused';
  if (REJECTED_NAMES.has(error.name)) return 'rejected';
  if (code !== undefined && NOT_CONNECTED_CODES.has(code)) return 'throttled';
  if (status !== undefined) return status >= 500 ? 'uncertain' : 'paused';
  // No answer: the request may have reached SES (a reset, a timeout).
  if (
    $metadata !== undefined ||
    $fault === 'server' ||
    (code !== undefined && CUT_OFF_CODES.has(code)) ||
    CUT_OFF_NAMES.has(error.name)
  ) {
    return 'uncertain';
  }
  return undefined;
};

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
    const { MessageId } = await this.sendEmail(
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

  /** Sends, turning SES's refusals into SendRefusedErrors. */
  private async sendEmail(
    command: SendEmailCommand,
  ): Promise<SendEmailCommandOutput> {
    try {
      return await this.client.send(command);
    } catch (error) {
      const kind = refusalKindOf(error);
      if (!kind) throw error;
      const { name, message } = error as Error;
      throw new SendRefusedError(
        kind,
        `SES refused the email (${kind}): ${name}: ${message}`,
        {
          cause: error,
        },
      );
    }
  }
}
