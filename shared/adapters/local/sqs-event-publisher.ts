/**
 * Where the local stack's simulated SES events go: the events queue of the
 * embedded SQS engine, with the body the queue receives on AWS (where an
 * EventBridge rule forwards the event's `detail` to it).
 */
import {
  GetQueueUrlCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SesEventPublisher } from './simulated-ses-events.ts';

/** The name of the events consumer group's queue on the local stack. */
export const LOCAL_EVENTS_QUEUE_NAME = 'events';

/**
 * Publishes each SES event as one SQS message whose body is the event's
 * `detail` JSON, as the events consumer receives it on AWS.
 */
export const sqsEventPublisher =
  (client: SQSClient, queueUrl: string): SesEventPublisher =>
  async (detail) => {
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(detail),
      }),
    );
  };

/**
 * The URL of a queue known by name (GetQueueUrl): the local stack names
 * its queues, and the engine makes their URLs.
 */
export const queueUrlOf = async (
  client: SQSClient,
  queueName: string,
): Promise<string> => {
  const { QueueUrl } = await client.send(
    new GetQueueUrlCommand({ QueueName: queueName }),
  );
  if (!QueueUrl) throw new Error(`SQS gave no URL for queue ${queueName}`);
  return QueueUrl;
};
