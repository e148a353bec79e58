/**
 * Driving adapter of the `templates` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type TemplateDeps, templateRoutes } from './routes.ts';

/** The runtime-neutral handler of the `templates` group. */
export const createHandler = (deps: TemplateDeps) =>
  createApiHandler(deps, templateRoutes);
