/**
 * Driving adapter of the `topics` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type TopicDeps, topicRoutes } from './routes.ts';

/** The runtime-neutral handler of the `topics` group. */
export const createHandler = (deps: TopicDeps) =>
  createApiHandler(deps, topicRoutes);
