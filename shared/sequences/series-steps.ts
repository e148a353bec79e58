import type { Campaign, CampaignOrigin } from '../campaigns/model.ts';
import { NEW_DRAFT } from '../campaigns/model.ts';
import { type SendDeps, startSend } from '../campaigns/send.ts';
import { AppError, ConflictError, SendingBlockedError } from '../errors.ts';
import { logger } from '../observability.ts';
import type { SendEmailNode } from './model.ts';
import type { SequencesDeps } from './ports.ts';
import { STEPS_QUEUE } from './queue.ts';
import {
  type SeriesStepMessage,
  seriesStepScheduleName,
} from './series-schedule.ts';

/** A held step is tried again this much later (as a sequence step is). */
export const SERIES_HOLD_RETRY_MS = 60 * 60_000;

/**
 * How long after its campaign was made a held step is still tried: a
 * series is dated, so a step is not sent days late. Past it, the campaign
 * stays a draft saying why (`lastHold`), to be sent by hand or deleted.
 */
export const SERIES_HOLD_WINDOW_MS = 24 * 60 * 60_000;

/**
 * What a step's fire needs: the series (head, version, nodes), its list,
 * segment and tag, and everything the send of a campaign needs (its
 * guards, the campaign store, the dispatcher's queue).
 */
export type SeriesFireDeps = SendDeps &
  Pick<SequencesDeps, 'sequences' | 'segments' | 'lists' | 'tags'>;

/** The campaign of a step is named after its series. */
export const seriesStepCampaignName = (seriesName: string, step: number) =>
  `${seriesName} — step ${step}`;

/**
 * Why a draft step campaign did not start: written on the campaign
 * (`lastHold`, as a campaign schedule's fire does), so that GET
 * /campaigns/{id} says it and a duplicate fire leaves it be.
 */
const recordHold = async (
  deps: SeriesFireDeps,
  orgId: string,
  campaignId: string,
  hold: NonNullable<Campaign['lastHold']>,
): Promise<void> => {
  const campaign = await deps.campaigns.get(orgId, campaignId);
  if (campaign?.status !== 'draft') return;
  try {
    await deps.campaigns.update(orgId, campaign, {
      ...campaign,
      lastHold: hold,
      updatedAt: hold.at,
    });
  } catch (error) {
    // Changed meanwhile (sent by hand, another fire): its state stands.
    if (!(error instanceof ConflictError)) throw error;
  }
};

/** Refusals of a send that mean another request started it already. */
const STARTED_ELSEWHERE = new Set([
  'campaign.sending',
  'campaign.sent',
  'campaign.failed',
]);

/**
 * Starts the send of a step's campaign as POST /campaigns/{id}/send does
 * now; a hold or a readiness blocker is recorded on the campaign, which
 * stays a draft (it can be sent by hand later). A content refusal is
 * logged and leaves the draft: a retry would not change it.
 */
const sendStepCampaign = async (
  deps: SeriesFireDeps,
  orgId: string,
  campaignId: string,
  context: Record<string, unknown>,
): Promise<'started' | 'held' | 'refused'> => {
  const at = () => deps.clock.now().toISOString();
  try {
    const { hold } = await startSend(deps, orgId, campaignId, {});
    if (hold) {
      logger.info('Series step held', { ...context, campaignId, hold });
      await recordHold(deps, orgId, campaignId, { reason: hold, at: at() });
      return 'held';
    }
    return 'started';
  } catch (error) {
    if (error instanceof SendingBlockedError) {
      logger.warn('Series step blocked: the organization cannot send', {
        ...context,
        campaignId,
        blockers: error.blockers,
      });
      await recordHold(deps, orgId, campaignId, {
        reason: 'blocked',
        at: at(),
        blockers: [...error.blockers],
      });
      return 'held';
    }
    if (error instanceof AppError && STARTED_ELSEWHERE.has(error.code)) {
      logger.info('Series step already sent', { ...context, campaignId });
      return 'started';
    }
    if (error instanceof AppError && !(error instanceof ConflictError)) {
      logger.error('Series step refused: its campaign stays a draft', {
        ...context,
        campaignId,
        error,
      });
      return 'refused';
    }
    throw error;
  }
};

/**
 * Starts a step's campaign; held, the step's schedule is made again an
 * hour later (its own name, so a pause, a delete or a new publish cancels
 * it like the step's first), while the campaign is younger than
 * {@link SERIES_HOLD_WINDOW_MS}.
 */
const sendOrRetry = async (
  deps: SeriesFireDeps,
  message: SeriesStepMessage,
  campaign: Pick<Campaign, 'id' | 'createdAt'>,
  context: Record<string, unknown>,
): Promise<void> => {
  const outcome = await sendStepCampaign(
    deps,
    message.orgId,
    campaign.id,
    context,
  );
  if (outcome !== 'held') return;
  const retryAt = deps.clock.now().getTime() + SERIES_HOLD_RETRY_MS;
  if (retryAt > Date.parse(campaign.createdAt) + SERIES_HOLD_WINDOW_MS) {
    logger.warn(
      'Series step held past its window: its campaign stays a draft',
      {
        ...context,
        campaignId: campaign.id,
      },
    );
    return;
  }
  await deps.scheduler.schedule({
    name: seriesStepScheduleName(
      message.orgId,
      message.seriesId,
      message.versionId,
      message.step,
    ),
    at: new Date(retryAt),
    queue: STEPS_QUEUE,
    message,
  });
};

/**
 * The campaign a step already made (an earlier fire, or the retry of a
 * held step): started if it is still a draft — that fire stopped before
 * its send, or its send was held —, else left as it is (sending, sent, or
 * deleted by hand).
 */
const resumeStep = async (
  deps: SeriesFireDeps,
  message: SeriesStepMessage,
  campaignId: string,
  context: Record<string, unknown>,
): Promise<string | undefined> => {
  const campaign = await deps.campaigns.get(message.orgId, campaignId);
  if (!campaign) {
    logger.info('Series step fired again: its campaign was deleted', context);
    return undefined;
  }
  if (campaign.status !== 'draft') {
    logger.info('Series step fired again: nothing more to do', {
      ...context,
      campaignId,
      status: campaign.status,
    });
    return campaignId;
  }
  await sendOrRetry(deps, message, campaign, context);
  return campaignId;
};

/**
 * A step's schedule fired: the step goes to the series' audience now.
 *
 * 1. Re-read the series: deleted, paused, or published anew since the
 *    schedule was made (another version) — nothing, logged.
 * 2. A campaign the step already made (a duplicate or redelivered fire)
 *    is not made again; it is started only if its fire stopped before.
 * 3. Read the version's step and its audience: a list, segment or tag
 *    deleted meanwhile — nothing, logged.
 * 4. Make the step's campaign (a draft recorded with its step, so that a
 *    concurrent fire makes none), then start its send as POST
 *    /campaigns/{id}/send does now: held (switch, quota) or blocked
 *    (readiness), it stays a draft saying why (`lastHold`) and the step
 *    is tried again in an hour, for a day.
 *
 * @returns the id of the step's campaign (made now or by an earlier fire),
 * undefined when the fire did nothing.
 */
export const fireSeriesStep = async (
  deps: SeriesFireDeps,
  message: SeriesStepMessage,
): Promise<string | undefined> => {
  const { orgId, seriesId, versionId, step } = message;
  const context = { orgId, seriesId, versionId, step };
  // 1. The series as it is now.
  const series = await deps.sequences.get(orgId, seriesId);
  if (series?.kind !== 'series') {
    logger.info('Series step fired for a deleted series: nothing', context);
    return undefined;
  }
  if (series.status !== 'active') {
    logger.info('Series step fired while paused: nothing', context);
    return undefined;
  }
  if (series.publishedVersionId !== versionId) {
    logger.info('Series step fired for a superseded version: nothing', {
      ...context,
      publishedVersionId: series.publishedVersionId,
    });
    return undefined;
  }

  // 2. Made already?
  const origin: CampaignOrigin = { seriesId, versionId, step };
  const made = await deps.campaigns.ofSeriesStep(orgId, origin);
  if (made) return resumeStep(deps, message, made, context);

  // 3. The step and its audience.
  const found = await deps.sequences.getVersionWithNodes(
    orgId,
    seriesId,
    versionId,
  );
  const node = found?.nodes.filter(
    (n): n is SendEmailNode => n.type === 'send_email',
  )[step - 1];
  if (!found || !node?.subject) {
    logger.warn('Series step fired for a step that is not there', context);
    return undefined;
  }
  const { listId, audienceSegmentId, audienceTagId } = found.version;
  const [list, segment, tag] = await Promise.all([
    listId ? deps.lists.get(orgId, listId) : undefined,
    audienceSegmentId ? deps.segments.get(orgId, audienceSegmentId) : null,
    audienceTagId ? deps.tags.get(orgId, audienceTagId) : null,
  ]);
  if (
    !listId ||
    !list ||
    segment === undefined ||
    (segment && segment.listId !== listId) ||
    tag === undefined
  ) {
    logger.warn('Series step fired but its audience is gone: nothing', {
      ...context,
      listId,
      audienceSegmentId,
      audienceTagId,
    });
    return undefined;
  }

  // 4. The step's one campaign, then its send.
  const now = deps.clock.now().toISOString();
  const campaign: Campaign = {
    id: deps.ids.id(),
    name: seriesStepCampaignName(series.name, step),
    subject: node.subject,
    templateId: node.templateId,
    listId,
    segmentId: audienceSegmentId,
    tagId: audienceTagId,
    sendingIdentityId: null,
    topicId: series.topicId,
    origin,
    ...NEW_DRAFT,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await deps.campaigns.create(orgId, campaign, { html: node.content });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    // Another fire of the step made it first.
    const other = await deps.campaigns.ofSeriesStep(orgId, origin);
    if (!other) throw error;
    return resumeStep(deps, message, other, context);
  }
  logger.info('Series step made its campaign', {
    ...context,
    campaignId: campaign.id,
  });
  await sendOrRetry(deps, message, campaign, context);
  return campaign.id;
};
