/**
 * Driving adapter of the `sequences` group: the shared pipeline over its
 * routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type SequenceDeps, sequenceRoutes } from './routes.ts';

/** The runtime-neutral handler of the `sequences` group. */
export const createHandler = (deps: SequenceDeps) =>
  createApiHandler(deps, sequenceRoutes);
