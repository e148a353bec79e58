/**
 * Lambda entry of the `pages` group: the public pipeline (no key, HTML
 * answers) over its routes.
 */
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { pageBindings, pageRoutes } from './routes.ts';

/** The Lambda handler. */
export const handler = createPublicHandler(
  await awsDeps(pageBindings),
  pageRoutes,
);
