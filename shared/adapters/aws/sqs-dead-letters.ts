/**
 * Dead letters on SQS: a record that can never succeed (its body is not
 * its group's message) is sent to the group's dead-letter queue at once,
 * with the reason as a message attribute, instead of being received again
 * and again until the redrive policy moves it. The same queues serve the
 * local stack (the embedded SQS engine).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetters } from '../../queue/consumer.ts';

/** The URL of each consumer group's dead-letter queue, by group name. */
export type DeadLetterQueues = Readonly<Record<string, string>>;

/** Dead letters sent with SQS `SendMessage`. */
export class SqsDeadLetters implements DeadLetters {
  constructor(
    private readonly client: SQSClient,
    private readonly queues: DeadLetterQueues,
  ) {}

  async send(group: string, body: string, reason: string): Promise<void> {
    const QueueUrl = this.queues[group];
    if (!QueueUrl) {
      throw new Error(`No dead-letter queue is bound for consumer ${group}`);
    }
    await this.client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: body,
        MessageAttributes: {
          reason: { DataType: 'String', StringValue: reason.slice(0, 1000) },
        },
      }),
    );
  }
}
