/**
 * Lambda entry of the `keys` group: the API's pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { keyBindings, keyRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createApiHandler(await awsDeps(keyBindings), keyRoutes);
