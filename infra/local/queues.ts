/**
 * Infrastructure. The queues of the local stack, created on the embedded SQS
 * engine (fauxqs) from the same consumer-group declarations the CDK
 * construct (`infra/constructs/consumer-queue.ts`) reads: each group's queue
 * with its visibility timeout and a redrive policy to its dead-letter queue
 * after `maxReceiveCount` receipts. The engine keeps queues in memory, so
 * they are created at every start; creating them again with the same
 * attributes is harmless (SQS and fauxqs both answer with the existing URL).
 *
 * fauxqs 1.9.2 honours the redrive policy like SQS: on the receive that
 * would make a message's receive count exceed `maxReceiveCount`, the message
 * moves to the dead-letter queue (same message id and body) instead of being
 * delivered. The local poller therefore does not move messages itself.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetterQueues } from '../../shared/adapters/aws/sqs-dead-letters.ts';
import type { QueueSettings } from '../../shared/queue/consumer.ts';

/** A queue as the local stack knows it. */
export interface LocalQueue {
  /** The queue URL (fauxqs's `http://sqs.<region>.localhost:PORT/…`). */
  url: string;
  /** Its ARN: the redrive target, and the `eventSourceARN` of records. */
  arn: string;
}

/** A consumer group's queue and dead-letter queue on the local engine. */
export interface LocalConsumerQueue extends LocalQueue {
  deadLetterUrl: string;
  deadLetterArn: string;
}

/** What a consumer group must declare for its queues to be created. */
export interface QueueGroup {
  readonly name: string;
  readonly queue: QueueSettings;
}

/** The local queues of each group, by group name. */
export type LocalConsumerQueues<G extends readonly QueueGroup[]> = {
  [K in G[number]['name']]: LocalConsumerQueue;
};

/** Suffix of a group's dead-letter queue name. */
export const DEAD_LETTERS_SUFFIX = '-dead-letters';

// Retention as the CDK construct sets it: 4 days in the queue, 14 days in
// the dead-letter queue (the engine is in memory: it only has to be valid).
const QUEUE_RETENTION_SECONDS = 4 * 24 * 3600;
const DEAD_LETTER_RETENTION_SECONDS = 14 * 24 * 3600;

// SQS: up to 80 alphanumerics, hyphens and underscores.
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * Creates a standard queue by name, or finds it when it exists with the same
 * attributes, and reads back its ARN. Exists for queues outside consumer
 * groups (a scheduler's target, a test's scratch queue).
 */
export const createQueue = async (
  client: SQSClient,
  name: string,
  attributes: Record<string, string> = {},
): Promise<LocalQueue> => {
  if (!QUEUE_NAME.test(name)) {
    throw new Error(
      `The queue name ${JSON.stringify(name)} is not valid on SQS: up to 80 letters, digits, hyphens and underscores`,
    );
  }
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (!QueueUrl) throw new Error(`SQS returned no URL for the queue ${name}`);
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['QueueArn'],
    }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`SQS returned no ARN for the queue ${name}`);
  return { url: QueueUrl, arn };
};

/**
 * The attributes of a group's queue, as the CDK construct sets them: the
 * visibility timeout, the retention and the redrive policy to `deadLetterArn`.
 */
export const consumerQueueAttributes = (
  settings: QueueSettings,
  deadLetterArn: string,
): Record<string, string> => ({
  VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
  MessageRetentionPeriod: String(QUEUE_RETENTION_SECONDS),
  RedrivePolicy: JSON.stringify({
    deadLetterTargetArn: deadLetterArn,
    maxReceiveCount: settings.maxReceiveCount,
  }),
});

/**
 * Creates every group's dead-letter queue `<name>-dead-letters`, then its
 * queue `<name>` redriving to it, the way the CDK construct does on AWS.
 * Idempotent; resolves to the URLs and ARNs by group name.
 */
export const createConsumerQueues = async <
  const G extends readonly QueueGroup[],
>(
  client: SQSClient,
  groups: G,
): Promise<LocalConsumerQueues<G>> => {
  const created: Record<string, LocalConsumerQueue> = {};
  for (const group of groups) {
    if (group.name in created) {
      throw new Error(`Two consumer groups are named ${group.name}`);
    }
    const deadLetters = await createQueue(
      client,
      `${group.name}${DEAD_LETTERS_SUFFIX}`,
      { MessageRetentionPeriod: String(DEAD_LETTER_RETENTION_SECONDS) },
    );
    const queue = await createQueue(
      client,
      group.name,
      consumerQueueAttributes(group.queue, deadLetters.arn),
    );
    created[group.name] = {
      ...queue,
      deadLetterUrl: deadLetters.url,
      deadLetterArn: deadLetters.arn,
    };
  }
  return created as LocalConsumerQueues<G>;
};

/**
 * The dead-letter queue URL of each group, in the form `SqsDeadLetters`
 * takes: a body that can never succeed goes there at once.
 */
export const deadLetterUrls = (
  queues: Readonly<Record<string, LocalConsumerQueue>>,
): DeadLetterQueues =>
  Object.fromEntries(
    Object.entries(queues).map(([name, queue]) => [name, queue.deadLetterUrl]),
  );
