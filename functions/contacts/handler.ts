/**
 * Driving adapter of the `contacts` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { contactRoutes } from './routes.ts';

/** The runtime-neutral handler of the `contacts` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, contactRoutes);
