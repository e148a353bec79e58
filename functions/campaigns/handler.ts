/**
 * Driving adapter of the `campaigns` group: the shared pipeline over its routes.
 */
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { type CampaignDeps, campaignRoutes } from './routes.ts';

/** The runtime-neutral handler of the `campaigns` group. */
export const createHandler = (deps: CampaignDeps) =>
  createApiHandler(deps, campaignRoutes);
