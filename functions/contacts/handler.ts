/**
 * Driving adapter of the `contacts` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type ContactDeps, contactRoutes } from './routes.ts';

/** The runtime-neutral handler of the `contacts` group. */
export const createHandler = (deps: ContactDeps) =>
  createApiHandler(deps, contactRoutes);
