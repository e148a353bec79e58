/**
 * Driving adapter of the `templates` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { templateRoutes } from './routes.ts';

/** The runtime-neutral handler of the `templates` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, templateRoutes);
