/**
 * Lambda entry of the `tagIndex` stream consumer.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import { tagIndexBindings, tagIndexConsumer } from './consumer.ts';

/** The Lambda handler (DynamoDB Streams trigger, partial batch responses). */
export const handler = createStreamHandler(
  await awsDeps(tagIndexBindings),
  tagIndexConsumer,
);
