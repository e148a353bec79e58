/**
 * The send of a campaign, as POST /campaigns/{id}/send asks for it: every
 * row of the spec's state table and its five rules. What may hold an
 * accepted send (mass sending off, the 24-hour quota), what refuses it
 * (readiness blockers), and the steps shared with the pipeline that a
 * schedule's fire re-checks.
 *
 * Never twice: a send starts by a change of the campaign conditional on
 * the version read (draft or scheduled → sending), so two calls can never
 * both start one; the queue message or schedule goes first and carries the
 * send's id, and does nothing unless the campaign names that id.
 */
import * as v from 'valibot';
import {
  ConflictError,
  RuleViolationError,
  SendingBlockedError,
  ValidationError,
} from '../errors.ts';
import { composeMessage } from '../mail/compose.ts';
import {
  guardrailDetails,
  quotaLeft,
  refusingBlockers,
} from '../mail/guards.ts';
import { logger } from '../observability.ts';
import type { Organization } from '../organizations/model.ts';
import { analyzeTemplate } from '../rendering/engine.ts';
import { SAMPLE_VALUES } from '../rendering/variables.ts';
import { scheduleName } from '../scheduling/ports.ts';
import { type ReadinessDeps, sendingStateOf } from '../sending/readiness.ts';
import type { SendCampaignInput } from './campaign.schema.ts';
import { recipientCountOf, requireCampaign } from './campaigns.ts';
import type { Campaign, HoldReason } from './model.ts';
import { NO_PROGRESS } from './model.ts';
import type { CampaignsDeps as Deps } from './ports.ts';

/** The queue of the dispatcher (starts, fires, continuations). */
export const DISPATCH_QUEUE = 'dispatch';
/** The queue of the senders (one message per batch). */
export const SEND_QUEUE = 'send';

/** The answer of POST /campaigns/{campaignId}/send. */
export const SendAccepted = v.pipe(
  v.object({
    campaignId: v.string(),
    status: v.pipe(
      v.picklist(['send_requested', 'scheduled']),
      v.description(
        '`send_requested`: sending now (or held: read the campaign); `scheduled`: it will start at `scheduledAt`',
      ),
    ),
  }),
  v.title('SendAccepted'),
);
export type SendAccepted = v.InferOutput<typeof SendAccepted>;

/** The per-state refusals of the spec's table. */
const refuseByState = (campaign: Campaign): void => {
  switch (campaign.status) {
    case 'sending':
      throw new ConflictError(
        'campaign.sending',
        `A send of campaign ${campaign.id} is already running`,
      );
    case 'sent':
      throw new ConflictError(
        'campaign.sent',
        `Campaign ${campaign.id} already went out; no second send starts`,
      );
    case 'failed':
      throw new ConflictError(
        'campaign.failed',
        `Campaign ${campaign.id} failed (${campaign.failure?.reason ?? 'unknown'}): it is not in a sendable state`,
      );
    default:
  }
};

/** The schedule of one accepted scheduled send. */
export const campaignScheduleName = (campaignId: string, sendId: string) =>
  scheduleName('campaign', campaignId, sendId);

const scheduleRefused = (message: string) =>
  new ValidationError(
    `Invalid request: scheduledAt: ${message}`,
    [{ field: 'scheduledAt', message }],
    { code: 'campaign.scheduleInvalid' },
  );

/**
 * Rules 1 and 2: an instant with an explicit offset (the schema refuses
 * one without), kept to the minute with its seconds dropped, no nearer
 * than the minimum lead time.
 */
export const scheduleInstant = (
  scheduledAt: string,
  now: Date,
  minLeadSeconds: number,
): Date => {
  const at = new Date(Math.floor(Date.parse(scheduledAt) / 60_000) * 60_000);
  if (at.getTime() <= now.getTime()) {
    throw scheduleRefused(`${scheduledAt} is in the past`);
  }
  if (at.getTime() < now.getTime() + minLeadSeconds * 1000) {
    throw scheduleRefused(
      `${scheduledAt} is too near: schedule at least ${minLeadSeconds} seconds ahead (seconds are dropped: the instant is kept to the minute)`,
    );
  }
  return at;
};

/**
 * Rule 3: the content is rendered first, with the same check as POST
 * /render — no {{unsubscribeUrl}} is a 400, {{topicOptOutUrl}} without a
 * topic is a 400, a subject or content that does not render is a 400.
 */
export const checkSendable = async (
  deps: Pick<Deps, 'links' | 'endpoints' | 'clock' | 'fields'>,
  orgId: string,
  campaign: Campaign,
  html: string,
): Promise<void> => {
  if (!(await analyzeTemplate(html)).variables.includes('unsubscribeUrl')) {
    throw new RuleViolationError(
      'template.unsubscribeMissing',
      'The content has no {{unsubscribeUrl}}: every email must let its reader unsubscribe',
    );
  }
  await composeMessage(deps, {
    orgId,
    contact: {
      id: 'test',
      email: SAMPLE_VALUES.email,
      firstName: SAMPLE_VALUES.firstName,
      lastName: SAMPLE_VALUES.lastName,
    },
    subject: campaign.subject,
    html,
    from: deps.endpoints.appFromAddress,
    ...(campaign.topicId ? { topicId: campaign.topicId } : {}),
    test: true,
  });
};

/**
 * Why a send would not start now, if anything holds it: mass sending off
 * application-wide, or the audience above the 24-hour quota left.
 */
export const holdOf = async (
  deps: Pick<
    Deps,
    | 'appSettings'
    | 'sendWindows'
    | 'provider'
    | 'clock'
    | 'lists'
    | 'contacts'
    | 'topics'
    | 'audience'
    | 'segments'
  >,
  org: Organization,
  campaign: Campaign,
): Promise<{ hold?: HoldReason; recipients: number }> => {
  if (!(await deps.appSettings.get()).sendingEnabled) {
    return { hold: 'sending_disabled', recipients: 0 };
  }
  const recipients = (
    await recipientCountOf(deps, org.id, campaign, { exact: true })
  ).count;
  if (recipients > (await quotaLeft(deps, org))) {
    return { hold: 'quota_exceeded', recipients };
  }
  return { recipients };
};

/** What the guards of a send read: readiness, the audience, the quota. */
export type GuardDeps = ReadinessDeps &
  Pick<
    Deps,
    | 'campaigns'
    | 'lists'
    | 'contacts'
    | 'topics'
    | 'audience'
    | 'segments'
    | 'sendWindows'
  > & { provider: Deps['provider'] };

/**
 * What POST /campaigns/{id}/send needs (the fields: its content is
 * rendered first, as a send would render it).
 */
export type SendDeps = GuardDeps &
  Pick<
    Deps,
    | 'sends'
    | 'links'
    | 'scheduler'
    | 'scheduleMinLeadSeconds'
    | 'ids'
    | 'fields'
  > & { queues: Pick<Deps['queues'], 'dispatch'> };

/**
 * The answer a lost race gets: the state the other request left (a second
 * send of the same campaign answers 409, never starts twice).
 */
const raced = async (
  deps: Pick<Deps, 'campaigns'>,
  orgId: string,
  campaignId: string,
  error: unknown,
): Promise<never> => {
  if (error instanceof ConflictError && error.code === 'campaign.changed') {
    refuseByState(await requireCampaign(deps, orgId, campaignId));
  }
  throw error;
};

/** What became of an accepted send, with what held it, if anything did. */
export interface SendOutcome {
  accepted: SendAccepted;
  /**
   * Why a send now did not start (the campaign unchanged, nothing
   * written); absent when it started or was scheduled.
   */
  hold?: HoldReason;
}

/**
 * POST /campaigns/{campaignId}/send: now, or at `scheduledAt`.
 * - rules 1–2: the instant (400 `campaign.scheduleInvalid`);
 * - the state table: sending, sent, failed 409; scheduled + scheduledAt
 *   400; scheduled + now starts now (the pending schedule then does
 *   nothing, and is deleted);
 * - rule 3: the content as POST /render checks it;
 * - readiness blockers other than the switch: 409 `sending.blocked`;
 * - now: held while mass sending is off or the quota would be exceeded
 *   (202, campaign unchanged, calling again later is safe); otherwise the
 *   dispatcher is told, then the campaign goes to sending;
 * - scheduled: the schedule is made, then the campaign goes to scheduled;
 *   the fire re-checks the switch, the blockers and the quota.
 */
export const requestSend = async (
  deps: SendDeps,
  orgId: string,
  campaignId: string,
  input: SendCampaignInput,
): Promise<SendAccepted> =>
  (await startSend(deps, orgId, campaignId, input)).accepted;

/**
 * The send of {@link requestSend}, saying what held it: for a caller that
 * has no one to answer (a series step's fire records the hold on the
 * campaign).
 */
export const startSend = async (
  deps: SendDeps,
  orgId: string,
  campaignId: string,
  input: SendCampaignInput,
): Promise<SendOutcome> => {
  const sendId = deps.ids.createdId();
  const found = await deps.campaigns.getWithContent(orgId, campaignId);
  if (!found) await requireCampaign(deps, orgId, campaignId);
  const { campaign, content } = found as NonNullable<typeof found>;
  // An earlier run of this request (its Idempotency-Key) started this very
  // send (or scheduled it): what it answered, and no second send.
  if (deps.ids.rerun && campaign.sendId === sendId) {
    return {
      accepted: {
        campaignId,
        status:
          input.scheduledAt === undefined ? 'send_requested' : 'scheduled',
      },
    };
  }
  refuseByState(campaign);
  if (input.scheduledAt !== undefined && campaign.status === 'scheduled') {
    throw new RuleViolationError(
      'campaign.notDraftToSchedule',
      `Campaign ${campaignId} is already scheduled for ${campaign.scheduledAt}: only a draft can be scheduled (send without scheduledAt to start it now)`,
    );
  }
  const now = deps.clock.now();
  const at =
    input.scheduledAt === undefined
      ? undefined
      : scheduleInstant(input.scheduledAt, now, deps.scheduleMinLeadSeconds);
  await checkSendable(deps, orgId, campaign, content.html);

  const org = await deps.organizations.get(orgId);
  if (!org) throw new Error(`organization ${orgId} vanished`);
  // A refused request writes nothing: the tenant status read is not kept.
  const { readiness } = await sendingStateOf(
    deps,
    org,
    campaign.sendingIdentityId,
    { remember: false },
  );
  const blockers = refusingBlockers(readiness.blockers);
  if (blockers.length > 0) {
    throw new SendingBlockedError(blockers, guardrailDetails(org));
  }

  if (at) {
    // The schedule first: without the campaign naming its send, it does nothing.
    const name = campaignScheduleName(campaignId, sendId);
    await deps.scheduler.schedule({
      name,
      at,
      queue: DISPATCH_QUEUE,
      message: {
        kind: 'fire',
        orgId,
        campaignId,
        sendId,
        scheduledAt: at.toISOString(),
      },
    });
    try {
      await deps.campaigns.update(orgId, campaign, {
        ...campaign,
        status: 'scheduled',
        scheduledAt: at.toISOString(),
        sendId,
        lastHold: null,
        updatedAt: now.toISOString(),
      });
    } catch (error) {
      await cancelQuietly(deps, name);
      return raced(deps, orgId, campaignId, error);
    }
    return { accepted: { campaignId, status: 'scheduled' } };
  }

  // Held: 202, the campaign unchanged, nothing written.
  const { hold, recipients } = await holdOf(deps, org, campaign);
  if (hold) {
    logger.info('Campaign send held', { orgId, campaignId, hold });
    return { accepted: { campaignId, status: 'send_requested' }, hold };
  }
  // The dispatcher's message first: it waits for the campaign to name it.
  await deps.queues.dispatch.send({
    kind: 'start',
    orgId,
    campaignId,
    sendId,
    requestedAt: now.toISOString(),
  });
  try {
    await deps.campaigns.update(orgId, campaign, {
      ...campaign,
      status: 'sending',
      scheduledAt: null,
      sendId,
      startedAt: now.toISOString(),
      lastHold: null,
      progress: { ...NO_PROGRESS, total: recipients },
      updatedAt: now.toISOString(),
    });
  } catch (error) {
    return raced(deps, orgId, campaignId, error);
  }
  if (campaign.status === 'scheduled' && campaign.sendId) {
    await cancelQuietly(
      deps,
      campaignScheduleName(campaignId, campaign.sendId),
    );
  }
  return { accepted: { campaignId, status: 'send_requested' } };
};

/** Deletes a schedule; a failure is logged (its fire does nothing anyway). */
export const cancelQuietly = async (
  deps: Pick<Deps, 'scheduler'>,
  name: string,
): Promise<void> => {
  try {
    await deps.scheduler.cancel(name);
  } catch (error) {
    logger.warn('A campaign schedule could not be deleted', { name, error });
  }
};
