/**
 * Lambda entry of the `dispatch` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import { dispatchBindings, dispatchConsumer } from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(dispatchBindings, dispatchConsumer.name),
  dispatchConsumer,
);
