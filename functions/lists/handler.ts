/**
 * Driving adapter of the `lists` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type ListDeps, listRoutes } from './routes.ts';

/** The runtime-neutral handler of the `lists` group. */
export const createHandler = (deps: ListDeps) =>
  createApiHandler(deps, listRoutes);
