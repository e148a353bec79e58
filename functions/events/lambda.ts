/**
 * Lambda entry of the `events` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import { eventsBindings, eventsConsumer } from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(eventsBindings, eventsConsumer.name),
  eventsConsumer,
);
