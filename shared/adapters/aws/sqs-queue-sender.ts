/**
 * Driven adapter: sends messages to a consumer group's queue with SQS
 * `SendMessage`, or ten at a time with `SendMessageBatch` (AWS, or the
 * embedded engine of the local stack).
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchResult,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { messageBody } from '../../message-body.ts';
import {
  MessagesRefusedError,
  type QueueMessage,
  type QueueSender,
  type RefusedMessage,
  type SendOptions,
} from '../../ports.ts';

/** The most entries one SendMessageBatch takes. */
const BATCH_LIMIT = 10;

/** A failed batch is sent again this many times, its failed entries only. */
const BATCH_ROUNDS = 3;

/**
 * The codes of a request SQS refused for the message it carries: a body
 * too large or holding a character it refuses, an option out of range.
 * Sending it again would be refused again. (A missing queue, a denied key
 * or throttling is no refusal of the message: it is thrown as it is.)
 */
const MESSAGE_REFUSALS = new Set([
  'InvalidParameterValue',
  'InvalidMessageContents',
  'MissingParameter',
  'MessageTooLong',
]);

/** A batch request refused as a whole for its size. */
const BATCH_TOO_LONG = 'BatchRequestTooLong';

/** The SQS code of an error the client threw for a request it sent. */
const codeOf = (error: unknown): string | undefined =>
  error instanceof Error && (error as { $fault?: string }).$fault === 'client'
    ? error.name
    : undefined;

/** The per-message options of a request, as SQS names them. */
const optionsOf = (options: SendOptions | undefined) => ({
  // On a standard queue, a message group makes it a fair queue.
  ...(options?.group ? { MessageGroupId: options.group } : {}),
  ...(options?.delaySeconds
    ? {
        DelaySeconds: Math.min(
          900,
          Math.max(0, Math.round(options.delaySeconds)),
        ),
      }
    : {}),
});

/** The QueueSender port over one queue URL. */
export class SqsQueueSender implements QueueSender {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: unknown, options?: SendOptions): Promise<void> {
    try {
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: messageBody(message),
          ...optionsOf(options),
        }),
      );
    } catch (error) {
      const code = codeOf(error);
      if (!code || !MESSAGE_REFUSALS.has(code)) throw error;
      throw new MessagesRefusedError(
        [{ message, code, reason: (error as Error).message }],
        { cause: error },
      );
    }
  }

  /**
   * Sends up to ten messages in one request. SQS answers entry by entry:
   * the entries it failed (throttled, say) are sent again, twice at most,
   * and any left failed reject the call; the entries it refused for what
   * they are (its sender's fault: too large, say) are not, and reject it
   * with `MessagesRefusedError` once every other entry was taken. A
   * request refused as a whole (too long together, say) is sent again
   * message by message, so a refusal falls on the message that caused it.
   */
  async sendBatch(messages: readonly QueueMessage[]): Promise<void> {
    if (messages.length > BATCH_LIMIT) {
      throw new Error(
        `A batch holds at most ${BATCH_LIMIT} messages; got ${messages.length}`,
      );
    }
    const refused: RefusedMessage[] = [];
    let entries = messages.map(({ message, options }, index) => ({
      Id: String(index),
      MessageBody: messageBody(message),
      ...optionsOf(options),
    }));
    const messageOf = (id: string | undefined) => messages[Number(id)]?.message;
    for (let round = 1; entries.length > 0; round++) {
      let Failed: NonNullable<SendMessageBatchResult['Failed']>;
      try {
        ({ Failed = [] } = await this.client.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: entries,
          }),
        ));
      } catch (error) {
        const code = codeOf(error);
        if (code !== BATCH_TOO_LONG && !MESSAGE_REFUSALS.has(code ?? '')) {
          throw error;
        }
        await this.sendOneByOne(
          entries.map(({ Id }) => messages[Number(Id)] as QueueMessage),
          refused,
        );
        break;
      }
      for (const entry of Failed) {
        if (entry.SenderFault) {
          refused.push({
            message: messageOf(entry.Id),
            code: entry.Code ?? 'SenderFault',
            reason: entry.Message ?? '',
          });
        }
      }
      const failed = new Set(
        Failed.filter((entry) => !entry.SenderFault).map((entry) => entry.Id),
      );
      if (failed.size > 0 && round === BATCH_ROUNDS) {
        throw new Error(
          `SQS took ${entries.length - Failed.length} of ${entries.length} messages: ${Failed.map((entry) => `${entry.Code}: ${entry.Message}`).join('; ')}`,
        );
      }
      entries = entries.filter((entry) => failed.has(entry.Id));
    }
    if (refused.length > 0) throw new MessagesRefusedError(refused);
  }

  /** Sends messages one at a time, keeping the refusals. */
  private async sendOneByOne(
    messages: readonly QueueMessage[],
    refused: RefusedMessage[],
  ): Promise<void> {
    for (const { message, options } of messages) {
      try {
        await this.send(message, options);
      } catch (error) {
        if (!(error instanceof MessagesRefusedError)) throw error;
        refused.push(...error.refused);
      }
    }
  }
}
