/**
 * Lambda entry of the `facts` stream consumer.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import { factsBindings, factsConsumer } from './consumer.ts';

/** The Lambda handler (DynamoDB Streams trigger, partial batch responses). */
export const handler = createStreamHandler(
  await awsDeps(factsBindings),
  factsConsumer,
);
