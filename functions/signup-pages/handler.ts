/**
 * Driving adapter of the `signupPages` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type SignupPageDeps, signupPageRoutes } from './routes.ts';

/** The runtime-neutral handler of the `signupPages` group. */
export const createHandler = (deps: SignupPageDeps) =>
  createApiHandler(deps, signupPageRoutes);
