/**
 * Lambda entry of the `journeys` stream consumer.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import { journeysBindings, journeysConsumer } from './consumer.ts';

/** The Lambda handler (DynamoDB Streams trigger, partial batch responses). */
export const handler = createStreamHandler(
  await awsDeps(journeysBindings),
  journeysConsumer,
);
