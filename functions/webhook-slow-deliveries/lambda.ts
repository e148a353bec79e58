/**
 * Lambda entry of the `webhookSlowDeliveries` consumer (the slow lane).
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import {
  webhookSlowDeliveriesBindings,
  webhookSlowDeliveriesConsumer,
} from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(
    webhookSlowDeliveriesBindings,
    webhookSlowDeliveriesConsumer.name,
  ),
  webhookSlowDeliveriesConsumer,
);
