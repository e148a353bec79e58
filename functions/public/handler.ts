/**
 * Driving adapter of the `public` group: the public pipeline (no API key,
 * HTML pages) over its routes.
 */
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { type PublicDeps, publicRoutes } from './routes.ts';

/** The runtime-neutral handler of the `public` group. */
export const createHandler = (deps: PublicDeps) =>
  createPublicHandler(deps, publicRoutes);
