/**
 * Driven adapter: sends a message to a consumer group's queue with SQS
 * `SendMessage` (AWS, or the embedded engine of the local stack).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueSender, SendOptions } from '../../ports.ts';

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
        MessageBody: JSON.stringify(message),
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
      }),
    );
  }
}
