/**
 * Driving adapter of the `domains` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type DomainDeps, domainRoutes } from './routes.ts';

/** The runtime-neutral handler of the `domains` group. */
export const createHandler = (deps: DomainDeps) =>
  createApiHandler(deps, domainRoutes);
