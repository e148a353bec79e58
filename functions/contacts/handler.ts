/**
 * Driving adapter of the `contacts` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import type { Deps } from '../../shared/ports.ts';
import { contactRoutes } from './routes.ts';

/** The runtime-neutral handler of the `contacts` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, contactRoutes);
