/**
 * Driving adapter of the `me` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { meRoutes } from './routes.ts';

/** The runtime-neutral handler of the `me` group. */
export const createHandler = (deps: Deps) => createApiHandler(deps, meRoutes);
