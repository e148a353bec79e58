/**
 * Driven adapter: sends a message to a consumer group's queue with SQS
 * `SendMessage` (AWS, or the embedded engine of the local stack).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueSender } from '../../ports.ts';

/** The QueueSender port over one queue URL. */
export class SqsQueueSender implements QueueSender {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: unknown, options?: { group?: string }): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        // On a standard queue, a message group makes it a fair queue.
        ...(options?.group ? { MessageGroupId: options.group } : {}),
      }),
    );
  }
}
