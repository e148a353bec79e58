/**
 * Lambda entry of the `webhookFanout` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import { webhookFanoutBindings, webhookFanoutConsumer } from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(webhookFanoutBindings, webhookFanoutConsumer.name),
  webhookFanoutConsumer,
);
