/**
 * Driving adapter of the `tags` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type TagDeps, tagRoutes } from './routes.ts';

/** The runtime-neutral handler of the `tags` group. */
export const createHandler = (deps: TagDeps) =>
  createApiHandler(deps, tagRoutes);
