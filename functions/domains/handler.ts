/**
 * Driving adapter of the `domains` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { domainRoutes } from './routes.ts';

/** The runtime-neutral handler of the `domains` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, domainRoutes);
