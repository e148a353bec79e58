/**
 * Driving adapter of the `topics` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { topicRoutes } from './routes.ts';

/** The runtime-neutral handler of the `topics` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, topicRoutes);
