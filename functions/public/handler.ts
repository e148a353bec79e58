/**
 * Driving adapter of the `public` group: the public pipeline (no API key,
 * HTML pages) over its routes.
 */
import type { Deps } from '../../shared/deps.ts';
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { publicRoutes } from './routes.ts';

/** The runtime-neutral handler of the `public` group. */
export const createHandler = (deps: Deps) =>
  createPublicHandler(deps, publicRoutes);
