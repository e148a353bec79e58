/**
 * Driving adapter of the `tags` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { tagRoutes } from './routes.ts';

/** The runtime-neutral handler of the `tags` group. */
export const createHandler = (deps: Deps) => createApiHandler(deps, tagRoutes);
