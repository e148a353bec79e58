/**
 * Lambda entry of the `send` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import { sendBindings, sendConsumer } from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(sendBindings, sendConsumer.name),
  sendConsumer,
);
