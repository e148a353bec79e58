/**
 * Driving adapter of the `segments` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type SegmentDeps, segmentRoutes } from './routes.ts';

/** The runtime-neutral handler of the `segments` group. */
export const createHandler = (deps: SegmentDeps) =>
  createApiHandler(deps, segmentRoutes);
