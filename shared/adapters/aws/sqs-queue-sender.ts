/**
 * Driven adapter: sends messages to a consumer group's queue with SQS
 * `SendMessage`, or ten at a time with `SendMessageBatch` (AWS, or the
 * embedded engine of the local stack).
 */
import {
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueMessage, QueueSender, SendOptions } from '../../ports.ts';

/** The most entries one SendMessageBatch takes. */
const BATCH_LIMIT = 10;

/** A failed batch is sent again this many times, its failed entries only. */
const BATCH_ROUNDS = 3;

/**
 * The characters a message body may not hold as they are: U+FFFE and
 * U+FFFF, which SQS refuses (InvalidMessageContents), and the surrogates
 * of a character past U+FFFF (an emoji), which SQS takes but the local
 * stack's engine (fauxqs) refuses. JSON.stringify already escapes the
 * controls and lone surrogates.
 */
const REFUSED_BY_SQS = /[\uD800-\uDFFF\uFFFE\uFFFF]/g;

/**
 * A message as its body: JSON, with those characters written as `\uXXXX`
 * escapes — the same JSON to the consumer that parses it, and never a
 * refusal that no retry can cure (a contact named with an emoji once held
 * a stream shard on the local stack, each retry refused again).
 */
export const messageBody = (message: unknown): string =>
  JSON.stringify(message).replace(
    REFUSED_BY_SQS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

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
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: messageBody(message),
        ...optionsOf(options),
      }),
    );
  }

  /**
   * Sends up to ten messages in one request. SQS answers entry by entry:
   * the entries it failed (throttled, say) are sent again, twice at most;
   * any left failed reject the call.
   */
  async sendBatch(messages: readonly QueueMessage[]): Promise<void> {
    if (messages.length > BATCH_LIMIT) {
      throw new Error(
        `A batch holds at most ${BATCH_LIMIT} messages; got ${messages.length}`,
      );
    }
    let entries = messages.map(({ message, options }, index) => ({
      Id: String(index),
      MessageBody: messageBody(message),
      ...optionsOf(options),
    }));
    for (let round = 1; entries.length > 0; round++) {
      const { Failed = [] } = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: entries,
        }),
      );
      if (Failed.length === 0) return;
      const failed = new Set(Failed.map((entry) => entry.Id));
      if (round === BATCH_ROUNDS || Failed.some((entry) => entry.SenderFault)) {
        throw new Error(
          `SQS took ${entries.length - Failed.length} of ${entries.length} messages: ${Failed.map((entry) => `${entry.Code}: ${entry.Message}`).join('; ')}`,
        );
      }
      entries = entries.filter((entry) => failed.has(entry.Id));
    }
  }
}
