/**
 * Lambda entry of the `webhookDeliveries` consumer.
 */
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { awsConsumerDeps } from '../../shared/runtime/aws.ts';
import {
  webhookDeliveriesBindings,
  webhookDeliveriesConsumer,
} from './consumer.ts';

/** The Lambda handler (SQS trigger, partial batch responses). */
export const handler = createConsumerHandler(
  await awsConsumerDeps(
    webhookDeliveriesBindings,
    webhookDeliveriesConsumer.name,
  ),
  webhookDeliveriesConsumer,
);
