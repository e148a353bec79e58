/**
 * Lambda entry of the `steps` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import { stepsBindings, stepsConsumer } from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(stepsBindings, stepsConsumer.name),
  stepsConsumer,
);
