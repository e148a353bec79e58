/**
 * Driving adapter of the `me` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type MeDeps, meRoutes } from './routes.ts';

/** The runtime-neutral handler of the `me` group. */
export const createHandler = (deps: MeDeps) => createApiHandler(deps, meRoutes);
