/**
 * Lambda entry of the `contacts` stream consumer (tag index, audience
 * facts and the contacts' activity).
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import { contactChangesBindings, contactChangesConsumer } from './consumer.ts';

/** The Lambda handler (DynamoDB Streams trigger, partial batch responses). */
export const handler = createStreamHandler(
  await awsDeps(contactChangesBindings),
  contactChangesConsumer,
);
