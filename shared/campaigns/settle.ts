/**
 * Changes of a campaign made by the pipeline (a send that ends, fails or
 * is held), each conditional on the version read and tried again when a
 * sender or the dispatcher changed it meanwhile.
 */
import { ConflictError } from '../errors.ts';
import type { Clock } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import type { Campaign } from './model.ts';
import type { CampaignsDeps as Deps } from './ports.ts';

/**
 * Moves a campaign of this send to a final or held state, conditional on
 * the version read; re-reads and tries again when a sender moved it.
 */
export const settleCampaign = (
  deps: Pick<Deps, 'campaigns'> & { clock: Clock },
  orgId: string,
  campaignId: string,
  sendId: string,
  change: (campaign: Campaign, now: string) => Campaign | undefined,
): Promise<Campaign | undefined> =>
  retryOnConflict(async (retryable) => {
    const campaign = await deps.campaigns.get(orgId, campaignId);
    if (!campaign || campaign.sendId !== sendId) return undefined;
    const after = change(campaign, deps.clock.now().toISOString());
    if (!after) return campaign;
    try {
      await deps.campaigns.update(orgId, campaign, after);
      return after;
    } catch (error) {
      if (error instanceof ConflictError) retryable(error);
      throw error;
    }
  });
