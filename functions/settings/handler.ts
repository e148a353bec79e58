/**
 * Driving adapter of the `settings` group: the shared pipeline over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { settingsRoutes } from './routes.ts';

/** The runtime-neutral handler of the `settings` group. */
export const createHandler = (deps: Deps) =>
  createApiHandler(deps, settingsRoutes);
