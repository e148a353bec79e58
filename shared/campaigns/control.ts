/**
 * Control of a campaign after its send was accepted, beyond the spec: a
 * scheduled campaign taken back to draft (its schedule gone, a late fire
 * doing nothing); a sending one paused, resumed where it stopped, or
 * cancelled. The spec's five statuses stay as they are; what the
 * extension adds is said in fields (`paused`, a failure `cancelled`).
 *
 * How a pause stops a send: the senders read the campaign again at most a
 * second apart, and check it right before each call to the provider, so
 * no call starts more than about a second after the pause was written
 * (the answer of the call). A sender that sees it stops claiming, gives
 * back the claims it made and did not send, records what it sent, and
 * leaves its batch in flight; the dispatcher hands out nothing while the
 * campaign is paused. Resume asks the dispatcher to queue the batches in
 * flight again: their recipients' claims say who was sent, so nobody gets
 * the campaign twice and nobody is skipped.
 */
import { ConflictError, SendingBlockedError } from '../errors.ts';
import { guardrailDetails } from '../mail/guards.ts';
import { logger } from '../observability.ts';
import { retryOnConflict } from '../retry.ts';
import {
  type CampaignView,
  campaignView,
  requireCampaign,
} from './campaigns.ts';
import type { Campaign, PauseReason, Progress } from './model.ts';
import type { CampaignsDeps as Deps } from './ports.ts';
import { campaignScheduleName, cancelQuietly, type GuardDeps } from './send.ts';
import { settleCampaign } from './settle.ts';

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

/** What pause, resume and cancel use besides the campaign's view. */
type ControlDeps = Pick<Deps, 'campaigns' | 'sends' | 'clock'> &
  Pick<GuardDeps, 'organizations'> & {
    queues: Pick<Deps['queues'], 'dispatch'>;
  } & Parameters<typeof campaignView>[0];

const notSending = (campaign: Campaign, action: string) =>
  new ConflictError(
    'campaign.notSending',
    `Campaign ${campaign.id} is ${campaign.status}: only a sending campaign can be ${action}`,
  );

/**
 * Changes a sending campaign, conditional on the version read (a sender
 * that settled it meanwhile is read again): `change` returns the campaign
 * after, or undefined when there is nothing to do.
 */
const changeSending = (
  deps: ControlDeps,
  orgId: string,
  campaignId: string,
  action: string,
  change: (campaign: Campaign, now: string) => Campaign | undefined,
): Promise<Campaign> =>
  retryOnConflict(async (retryable) => {
    const campaign = await requireCampaign(deps, orgId, campaignId);
    if (campaign.status !== 'sending') throw notSending(campaign, action);
    const after = change(campaign, deps.clock.now().toISOString());
    if (!after) return campaign;
    await deps.campaigns.update(orgId, campaign, after).catch(retryable);
    return after;
  });

/**
 * Pauses a sending campaign: from the answer on, its senders stop within
 * about a second. Pausing a paused campaign changes nothing.
 */
export const pauseCampaign = async (
  deps: ControlDeps,
  orgId: string,
  campaignId: string,
): Promise<CampaignView> => {
  await changeSending(deps, orgId, campaignId, 'paused', (campaign, now) =>
    campaign.paused
      ? undefined
      : {
          ...campaign,
          paused: { at: now, reason: 'requested' },
          updatedAt: now,
        },
  );
  logger.info('Campaign paused', { orgId, campaignId });
  return campaignView(deps, orgId, campaignId);
};

/**
 * Pauses a sending campaign for a reason of the system (the reputation
 * guardrail), conditional on the version read; true when this call paused
 * it, false when it was paused already or is no longer sending. What a
 * pause through the API does, without its answer.
 */
export const pauseSending = (
  deps: Pick<Deps, 'campaigns' | 'clock'>,
  orgId: string,
  campaignId: string,
  reason: PauseReason,
): Promise<boolean> =>
  retryOnConflict(async (retryable) => {
    const campaign = await deps.campaigns.get(orgId, campaignId);
    if (campaign?.status !== 'sending' || campaign.paused) return false;
    const now = deps.clock.now().toISOString();
    await deps.campaigns
      .update(orgId, campaign, {
        ...campaign,
        paused: { at: now, reason },
        updatedAt: now,
      })
      .catch(retryable);
    logger.info('Campaign paused', { orgId, campaignId, reason });
    return true;
  });

/**
 * Resumes a paused campaign where it stopped: the pause is lifted, then
 * the dispatcher queues the batches in flight again and goes on with the
 * walk. A campaign that is not paused answers 409 `campaign.notPaused`.
 */
export const resumeCampaign = async (
  deps: ControlDeps,
  orgId: string,
  campaignId: string,
): Promise<CampaignView> => {
  const notPaused = () =>
    new ConflictError(
      'campaign.notPaused',
      `Campaign ${campaignId} is not paused`,
    );
  const [campaign, org] = await Promise.all([
    requireCampaign(deps, orgId, campaignId),
    deps.organizations.get(orgId),
  ]);
  if (campaign.status !== 'sending') throw notSending(campaign, 'resumed');
  if (!campaign.paused) throw notPaused();
  // While the reputation guardrail holds, a resume would pause again at
  // its first batch: refused, saying why, until the operator lifts it.
  if (org?.guardrail) {
    throw new SendingBlockedError(['reputation_paused'], guardrailDetails(org));
  }
  // The dispatcher's message first, as for a start: it waits (a minute at
  // most) for the pause to be lifted, so a crash after the write cannot
  // leave the send with nothing to move it on.
  await deps.queues.dispatch.send({
    kind: 'resume',
    orgId,
    campaignId,
    sendId: campaign.sendId as string,
    requestedAt: deps.clock.now().toISOString(),
  });
  await changeSending(deps, orgId, campaignId, 'resumed', (current, now) => {
    if (!current.paused) throw notPaused();
    return { ...current, paused: null, updatedAt: now };
  });
  logger.info('Campaign resumed', { orgId, campaignId });
  return campaignView(deps, orgId, campaignId);
};

/**
 * Cancels a sending (or paused) campaign: it fails with reason
 * `cancelled`, its senders stop within about a second, and its progress
 * says what went out (each sender that stops adds its batch's part).
 */
export const cancelCampaign = async (
  deps: ControlDeps,
  orgId: string,
  campaignId: string,
): Promise<CampaignView> => {
  const cancelled = await changeSending(
    deps,
    orgId,
    campaignId,
    'cancelled',
    (campaign, now) => ({
      ...campaign,
      status: 'failed',
      paused: null,
      failure: {
        reason: 'cancelled',
        message: 'Cancelled through the API: nothing more goes out',
        at: now,
      },
      completedAt: now,
      updatedAt: now,
    }),
  );
  await copyProgress(deps, orgId, cancelled);
  logger.info('Campaign cancelled', { orgId, campaignId });
  return campaignView(deps, orgId, campaignId);
};

/** The number of recipients a progress accounts for. */
const handled = (progress: Progress) =>
  progress.sent + progress.failed + progress.skipped;

/**
 * Copies a stopped send's progress onto its campaign (failed or
 * cancelled: no longer read from the send), never backwards: two senders
 * that stop together may copy in either order.
 */
export const copyProgress = async (
  deps: Pick<Deps, 'campaigns' | 'sends' | 'clock'>,
  orgId: string,
  campaign: Pick<Campaign, 'id' | 'sendId'>,
): Promise<void> => {
  const { id, sendId } = campaign;
  if (!sendId) return;
  const state = await deps.sends.get(orgId, id);
  if (state?.sendId !== sendId) return;
  await settleCampaign(deps, orgId, id, sendId, (current) =>
    current.status === 'failed' &&
    handled(state.progress) > handled(current.progress)
      ? { ...current, progress: state.progress }
      : undefined,
  );
};

/**
 * How often a sender reads its campaign again, at most: a pause is seen
 * by every sender within about this long (plus one read).
 */
export const WATCH_INTERVAL_MS = 1_000;

/**
 * Why a sender stops before its batch's end: its campaign was paused, or
 * is no longer sending this send (cancelled, failed).
 */
export type Halt = 'paused' | 'stopped';

/**
 * A sender's view of its campaign while it sends: the campaign read again
 * (strongly consistent) when the last read is a second old, one read at
 * a time whoever asks. Once a halt is seen it stays.
 */
export const watchCampaign = (
  deps: Pick<Deps, 'campaigns'>,
  orgId: string,
  campaignId: string,
  sendId: string,
): (() => Promise<Halt | undefined>) => {
  let readAt = Date.now();
  let seen: Promise<Halt | undefined> = Promise.resolve(undefined);
  let halted: Halt | undefined;
  return () => {
    if (halted) return Promise.resolve(halted);
    if (Date.now() - readAt >= WATCH_INTERVAL_MS) {
      readAt = Date.now();
      seen = deps.campaigns.get(orgId, campaignId).then((campaign) => {
        const halt: Halt | undefined =
          campaign?.status !== 'sending' || campaign.sendId !== sendId
            ? 'stopped'
            : campaign.paused
              ? 'paused'
              : undefined;
        halted ??= halt;
        return halted;
      });
    }
    return seen;
  };
};
