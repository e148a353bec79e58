/**
 * Lambda entry of the `templates` group: the API's pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { templateBindings, templateRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createApiHandler(
  await awsDeps(templateBindings),
  templateRoutes,
);
