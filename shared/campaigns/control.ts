/**
 * Control of a campaign after its send was accepted, beyond the spec: a
 * scheduled campaign taken back to draft (its schedule gone, a late fire
 * doing nothing). The spec's five statuses stay as they are; what the
 * extension adds is said in fields.
 */
import { ConflictError } from '../errors.ts';
import { retryOnConflict } from '../retry.ts';
import {
  type CampaignView,
  campaignView,
  requireCampaign,
} from './campaigns.ts';
import type { CampaignsDeps as Deps } from './ports.ts';
import { campaignScheduleName, cancelQuietly } from './send.ts';

/**
 * Takes a scheduled campaign back to draft: `scheduledAt` and its send
 * cleared, its schedule deleted. Conditional on the version read, so a
 * fire that started the send meanwhile wins (409 `campaign.sending`), and
 * a fire that comes late finds no send of its id and does nothing.
 */
export const unscheduleCampaign = async (
  deps: Pick<Deps, 'campaigns' | 'scheduler' | 'clock'> &
    Parameters<typeof campaignView>[0],
  orgId: string,
  campaignId: string,
): Promise<CampaignView> => {
  const sendId = await retryOnConflict(async (retryable) => {
    const campaign = await requireCampaign(deps, orgId, campaignId);
    if (campaign.status === 'sending') {
      throw new ConflictError(
        'campaign.sending',
        `Campaign ${campaignId} started sending: it can no longer be unscheduled`,
      );
    }
    if (campaign.status !== 'scheduled') {
      throw new ConflictError(
        'campaign.notScheduled',
        `Campaign ${campaignId} is ${campaign.status}: only a scheduled campaign can be unscheduled`,
      );
    }
    const now = deps.clock.now().toISOString();
    await deps.campaigns
      .update(orgId, campaign, {
        ...campaign,
        status: 'draft',
        scheduledAt: null,
        sendId: null,
        updatedAt: now,
      })
      .catch(retryable);
    return campaign.sendId;
  });
  if (sendId) {
    await cancelQuietly(deps, campaignScheduleName(campaignId, sendId));
  }
  return campaignView(deps, orgId, campaignId);
};
