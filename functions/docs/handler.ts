/**
 * Driving adapter of the `docs` group: the public pipeline (no API key)
 * over its routes.
 */

import { createPublicHandler } from '../../shared/http/public-handler.ts';
import type { Route } from '../../shared/http/route.ts';
import type { DocsDeps } from './routes.ts';

/**
 * The runtime-neutral handler of the `docs` group. Its routes are built
 * with the registry of groups they describe (functions/groups.ts), so they
 * are passed in rather than imported.
 */
export const createHandler = (
  deps: DocsDeps,
  routes: readonly Route<DocsDeps>[],
) => createPublicHandler(deps, routes);
