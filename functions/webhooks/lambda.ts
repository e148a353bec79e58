/**
 * Lambda entry of the `webhooks` group: the API's pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { webhookBindings, webhookRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createApiHandler(
  await awsDeps(webhookBindings),
  webhookRoutes,
);
