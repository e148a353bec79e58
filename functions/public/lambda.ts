/**
 * Lambda entry of the `public` group: the public pipeline (no key, HTML
 * answers) over its routes.
 */
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { publicBindings, publicRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createPublicHandler(
  await awsDeps(publicBindings),
  publicRoutes,
);
