/**
 * Lambda entry of the `settings` group: the API's pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { settingsBindings, settingsRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createApiHandler(
  await awsDeps(settingsBindings),
  settingsRoutes,
);
