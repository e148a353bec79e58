/**
 * Driving adapter of the `pages` group: the public pipeline (no key, HTML
 * answers) over the hosted sign-up pages.
 */
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { type PageDeps, pageRoutes } from './routes.ts';

/** The runtime-neutral handler of the `pages` group. */
export const createHandler = (deps: PageDeps) =>
  createPublicHandler(deps, pageRoutes);
