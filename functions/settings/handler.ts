/**
 * Driving adapter of the `settings` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type SettingsDeps, settingsRoutes } from './routes.ts';

/** The runtime-neutral handler of the `settings` group. */
export const createHandler = (deps: SettingsDeps) =>
  createApiHandler(deps, settingsRoutes);
