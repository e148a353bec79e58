/**
 * Driving adapter of the `lists` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { listRoutes } from './routes.ts';

/** The runtime-neutral handler of the `lists` group. */
export const createHandler = (deps: Deps) => createApiHandler(deps, listRoutes);
