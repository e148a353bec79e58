/**
 * The senders of campaign sends: the one service call of the `send`
 * consumer, one batch per message.
 *
 * Never twice. SES has no idempotency token and our send client makes no
 * SDK retries, so:
 * 1. a sender leases the batch (one holder at a time, for longer than a
 *    sender may run);
 * 2. each recipient is claimed by a conditional write before any SES call
 *    (with a lease of {@link RECIPIENT_LEASE_MS});
 * 3. SES's message id reaches the recipient's item: written by the events
 *    consumer from SES's first event of the message, and by the sender
 *    itself when a batch stops before its end;
 * 4. an expired claim is sent again only when nothing shows the first
 *    attempt reached SES (no message id) or was refused.
 * The window that stays open: SES accepted the message, then the sender
 * died before its batch ended, and no event of that message reached us
 * within the recipient's lease.
 *
 * Paced: every send takes an instant from the application-wide pacer, so
 * all senders together stay under the account's `MaxSendRate`; a throttled
 * send slows down and is retried, never failed.
 */
import * as v from 'valibot';
import { emailTags } from '../email-tags.ts';
import { AppError, ConflictError } from '../errors.ts';
import { composeMessage } from '../messaging/composer.ts';
import {
  isSendRefused,
  type SendRefusalKind,
} from '../messaging/send-refusal.ts';
import { logger } from '../observability.ts';
import type { CoreDeps, OutgoingMessage } from '../ports.ts';
import { sendingStateOf } from '../sending/readiness.ts';
import { Id } from '../validation.ts';
import { accountRate } from './account.ts';
import { segmentFilterOf } from './campaigns.ts';
import type { Campaign, FailureReason, Progress } from './model.ts';
import type { CampaignsDeps as Deps, RecipientOutcome } from './ports.ts';
import { type GuardDeps, refusingBlockers } from './send.ts';
import { settleCampaign } from './settle.ts';

/** Most recipients of one batch. */
export const MAX_BATCH = 250;

/** A message of the senders' queue: one batch of a send. */
export const BatchMessage = v.object({
  orgId: Id,
  campaignId: Id,
  sendId: Id,
  batch: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /**
   * The batch's range of the list (emails in `(after, last]`): the sender
   * reads its recipients again with one query over it. Absent from
   * messages queued before ranges were sent: then contact by contact.
   */
  range: v.optional(
    v.object({
      after: v.nullable(v.string()),
      last: v.pipe(v.string(), v.minLength(1)),
    }),
  ),
  recipients: v.pipe(
    v.array(
      v.object({
        contactId: v.pipe(v.string(), v.minLength(1)),
        email: v.pipe(v.string(), v.minLength(3)),
      }),
    ),
    v.maxLength(MAX_BATCH),
  ),
});
export type BatchMessage = v.InferOutput<typeof BatchMessage>;

/** How long a sender may run on a batch before stopping (its time budget). */
export const SENDER_BUDGET_MS = 40_000;

/** A batch's lease: longer than a sender may run (its function's timeout). */
export const BATCH_LEASE_MS = 60_000;

/**
 * A recipient's claim: long enough for SES's first event of the message to
 * reach us after a sender died, so that it is never sent twice.
 */
export const RECIPIENT_LEASE_MS = 15 * 60_000;

/** The longest pause after a throttled send. */
const MAX_THROTTLE_PAUSE_MS = 5_000;

/** What a sender needs. */
export type DeliverDeps = GuardDeps &
  Pick<
    Deps,
    'sends' | 'topics' | 'delivery' | 'mailer' | 'pacer' | 'ids' | 'audience'
  > &
  Pick<CoreDeps, 'links'> & { queues: Pick<Deps['queues'], 'dispatch'> };

const sleep = (ms: number) =>
  ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

/**
 * The share of the account's rate the pacer hands out: sends leave on time
 * give or take a few milliseconds, and SES counts its rate over any second,
 * so a little headroom keeps a late send and an on-time one from meeting
 * in the same second.
 */
export const RATE_HEADROOM = 0.98;

/** Most sends of one sender in flight at once. */
export const MAX_PARALLEL_SENDS = 10;

/**
 * Sends in flight at once for a rate: a send takes tens of milliseconds,
 * so one at a time cannot keep up with a rate above a dozen or so.
 */
export const parallelSendsFor = (rate: number): number =>
  Math.min(MAX_PARALLEL_SENDS, Math.max(1, Math.ceil(rate / 10)));

/**
 * Instants of the shared rate, reserved one second's worth at a time and
 * handed out in order to the sender's parallel sends. An instant already
 * past by more than one interval is dropped rather than used late: sends
 * never bunch up to catch up.
 */
export class Slots {
  private readonly reserved: number[] = [];
  private turn: Promise<unknown> = Promise.resolve();
  private readonly rate: number;

  /** @param wanted how many sends this sender may make at most. */
  constructor(
    private readonly deps: Pick<DeliverDeps, 'pacer' | 'clock'>,
    accountRate: number,
    private wanted: number,
  ) {
    this.rate = accountRate * RATE_HEADROOM;
  }

  /** Waits for the next instant this sender may send at. */
  async take(): Promise<void> {
    const remaining = Math.max(1, this.wanted--);
    const next = this.turn.then(() => this.next(remaining));
    this.turn = next.catch(() => undefined);
    const at = await next;
    await sleep(at - this.deps.clock.now().getTime());
  }

  private async next(remaining: number): Promise<number> {
    const interval = 1000 / this.rate;
    for (;;) {
      const now = this.deps.clock.now().getTime();
      while (
        this.reserved.length > 0 &&
        (this.reserved[0] as number) < now - interval
      ) {
        this.reserved.shift();
      }
      const at = this.reserved.shift();
      if (at !== undefined) return at;
      const count = Math.max(1, Math.min(remaining, Math.floor(this.rate)));
      const start = await this.deps.pacer.reserve(
        count,
        this.rate,
        new Date(now),
      );
      for (let i = 0; i < count; i++) {
        this.reserved.push(start + Math.floor(i * interval));
      }
    }
  }
}

/** Fails the campaign of this send, with why. */
const failCampaign = (
  deps: DeliverDeps,
  message: BatchMessage,
  reason: FailureReason,
  text: string,
) =>
  settleCampaign(
    deps,
    message.orgId,
    message.campaignId,
    message.sendId,
    (campaign, now) =>
      campaign.status === 'sending'
        ? {
            ...campaign,
            status: 'failed',
            failure: { reason, message: text, at: now },
            completedAt: now,
            updatedAt: now,
          }
        : undefined,
  ).then(async (campaign) => {
    logger.warn('Campaign failed', {
      orgId: message.orgId,
      campaignId: message.campaignId,
      reason,
      text,
    });
    // Its progress as it stood.
    const state = await deps.sends.get(message.orgId, message.campaignId);
    if (campaign && state?.sendId === message.sendId) {
      await settleCampaign(
        deps,
        message.orgId,
        message.campaignId,
        message.sendId,
        (current) =>
          current.status === 'failed'
            ? { ...current, progress: state.progress }
            : undefined,
      );
    }
  });

/** Why the organization cannot send now, if it cannot. */
export const stopReason = (
  blockers: readonly string[],
): { reason: FailureReason; text: string } | undefined => {
  if (blockers.includes('sending_paused')) {
    return {
      reason: 'sending_paused',
      text: 'The email provider paused the organization’s sending',
    };
  }
  const refusing = refusingBlockers(
    blockers as Parameters<typeof refusingBlockers>[0],
  );
  if (refusing.length > 0) {
    return {
      reason: 'blocked',
      text: `The organization cannot send now: ${refusing.join(', ')}`,
    };
  }
  return undefined;
};

/**
 * The recipients still in the audience when their turn comes, read
 * strongly consistent so that an unsubscribe, an untag, a change that
 * takes a contact out of the campaign's segment or a topic opt-out that
 * landed before is honoured: the batch's own recipients by key (one
 * BatchGetItem per 100, in parallel), never what lies between them in the
 * list (a rare tag's batch may span most of it). Suppressions are read
 * eventually consistent: a suppressed address's contacts are bounced or
 * complained already (the status read here), and the suppression item
 * only covers the seconds before the events consumer changes them.
 */
const stillIn = async (
  deps: DeliverDeps,
  campaign: Campaign,
  message: BatchMessage,
) => {
  const { orgId, recipients } = message;
  const emails = recipients.map((r) => r.email);
  const [contacts, declined, suppressed, inSegment] = await Promise.all([
    // Exactly the batch's recipients, strongly consistent (100 keys a call,
    // in parallel): never the rest of the batch's range of the list.
    deps.contacts.getMany(orgId, campaign.listId, emails),
    campaign.topicId
      ? deps.topics.optedOut(orgId, campaign.topicId, emails)
      : new Set<string>(),
    deps.delivery.suppressions(orgId, emails, { consistent: false }),
    segmentFilterOf(deps, orgId, campaign),
  ]);
  return recipients.flatMap((r) => {
    const contact = contacts.get(r.email);
    const ok =
      contact &&
      contact.id === r.contactId &&
      contact.status === 'subscribed' &&
      (!campaign.tagId || contact.tagIds.includes(campaign.tagId)) &&
      inSegment(contact) &&
      !declined.has(r.email) &&
      !suppressed.has(r.email);
    return ok ? [contact] : [];
  });
};

/** Thrown to stop a batch and try it again later: the message is retried. */
const tryLater = (text: string) => new ConflictError('campaign.changed', text);

/** The sender's service call for one batch. Idempotent. */
export const deliverBatch = async (
  deps: DeliverDeps,
  message: BatchMessage,
): Promise<void> => {
  const { orgId, campaignId, sendId, batch } = message;
  const found = await deps.campaigns.getWithContent(orgId, campaignId);
  if (
    found?.campaign.status !== 'sending' ||
    found.campaign.sendId !== sendId
  ) {
    return;
  }
  const { campaign, content } = found;
  const owner = deps.ids.id();
  const started = Date.now();
  const leaseStart = deps.clock.now();
  const lease = await deps.sends.leaseBatch(
    orgId,
    campaignId,
    batch,
    owner,
    new Date(leaseStart.getTime() + BATCH_LEASE_MS),
    leaseStart,
  );
  if (lease === 'done') return;
  if (lease === 'held') {
    throw tryLater(`Batch ${batch} of campaign ${campaignId} is being sent`);
  }

  // 1. The guards of every send, again: the switch, readiness.
  if (!(await deps.appSettings.get()).sendingEnabled) {
    await failCampaign(
      deps,
      message,
      'sending_disabled',
      'Sending was switched off application-wide during the send',
    );
    return;
  }
  const org = await deps.organizations.get(orgId);
  if (!org) return;
  const { readiness, sender } = await sendingStateOf(
    deps,
    org,
    campaign.sendingIdentityId,
  );
  const stop = stopReason(readiness.blockers);
  if (stop) {
    await failCampaign(deps, message, stop.reason, stop.text);
    return;
  }

  // 2. Who is still in: status, tag, topic, suppression, read now.
  const recipients = await stillIn(deps, campaign, message);
  const outcome: Omit<Progress, 'total'> = {
    sent: 0,
    failed: 0,
    skipped: message.recipients.length - recipients.length,
  };
  const recorded: RecipientOutcome[] = [];
  let unresolved = 0;
  let stoppedBy: { reason: FailureReason; text: string } | undefined;

  // 3. Claim, compose, pace and send, a few recipients at a time.
  const rate = await accountRate(deps);
  const slots = new Slots(deps, rate, recipients.length);
  let nextIndex = 0;
  const sendOne = async (contact: (typeof recipients)[number]) => {
    const now = deps.clock.now();
    const claim = await deps.sends.claim(
      orgId,
      campaignId,
      { contactId: contact.id, email: contact.email, batch },
      owner,
      new Date(now.getTime() + RECIPIENT_LEASE_MS),
      now,
    );
    if (claim.kind === 'sent') {
      outcome.sent++;
      return;
    }
    if (claim.kind === 'failed') {
      outcome.failed++;
      return;
    }
    if (claim.kind === 'held') {
      unresolved++;
      return;
    }
    let mail: OutgoingMessage;
    try {
      mail = await composeMessage(deps, {
        orgId,
        contact,
        subject: campaign.subject,
        html: content.html,
        ...sender,
        ...(org.postalAddress ? { postalAddress: org.postalAddress } : {}),
        ...(campaign.topicId ? { topicId: campaign.topicId } : {}),
        campaignId,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Claimed, never sent: the claim may be taken again.
      stoppedBy ??= { reason: 'content_invalid', text: error.message };
      return;
    }
    const result = await sendPaced(
      deps,
      slots,
      {
        ...mail,
        tags: emailTags({
          organization: orgId,
          kind: 'campaign',
          contact: contact.id,
          campaign: campaignId,
        }),
      },
      started,
    );
    switch (result.kind) {
      case 'sent':
        outcome.sent++;
        recorded.push({ contactId: contact.id, messageId: result.messageId });
        break;
      case 'rejected':
        outcome.failed++;
        recorded.push({ contactId: contact.id, refused: true });
        break;
      case 'paused':
        // Nothing was sent to this one: its claim may be taken again.
        stoppedBy ??= {
          reason: 'sending_paused',
          text: 'The email provider refused to send for the account or the organization',
        };
        break;
      default:
        // Throttled past the budget, or unknown: the claim stays.
        unresolved++;
    }
  };
  // Each worker takes the next recipient until none is left, the campaign
  // must stop, or the time budget is spent (the rest is left for later).
  // An error stops every worker after its send in flight: nothing goes on
  // in the background once the invocation has failed.
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!stoppedBy && !failure && nextIndex < recipients.length) {
      if (Date.now() - started > SENDER_BUDGET_MS) {
        unresolved += recipients.length - nextIndex;
        nextIndex = recipients.length;
        return;
      }
      const contact = recipients[nextIndex++];
      if (!contact) continue;
      try {
        await sendOne(contact);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(
    Array.from(
      { length: Math.min(parallelSendsFor(rate), recipients.length) },
      worker,
    ),
  );
  if (failure) {
    // What SES took is recorded; the retried message claims the rest.
    await deps.sends.recordOutcomes(orgId, campaignId, recorded);
    throw failure.error;
  }

  if (unresolved > 0 && !stoppedBy) {
    // Stop here; the next attempt counts what this one did.
    await deps.sends.recordOutcomes(orgId, campaignId, recorded);
    throw tryLater(
      `Batch ${batch} of campaign ${campaignId}: ${unresolved} recipients to try again`,
    );
  }
  await deps.sends.completeBatch(orgId, campaignId, batch, owner, outcome);
  if (stoppedBy) {
    await failCampaign(deps, message, stoppedBy.reason, stoppedBy.text);
    return;
  }
  await deps.queues.dispatch.send({
    kind: 'continue',
    orgId,
    campaignId,
    sendId,
  });
};

/** What became of one paced send. */
export type SendResult =
  | { kind: 'sent'; messageId: string }
  | { kind: Exclude<SendRefusalKind, 'throttled'> | 'throttled' }
  /** `stillWanted` said no at the last instant: nothing was sent. */
  | { kind: 'withdrawn' };

/**
 * Sends one message at the next instant of the shared rate. Throttled: a
 * pause growing each time, a new instant, again — until the time budget
 * ends (never a failure of the recipient). `stillWanted`, when given, is
 * asked at each instant, just before the provider is called: false
 * withdraws the send.
 */
export const sendPaced = async (
  deps: Pick<DeliverDeps, 'mailer' | 'pacer' | 'clock'>,
  slots: Slots,
  mail: OutgoingMessage,
  started: number,
  stillWanted?: () => Promise<boolean>,
): Promise<SendResult> => {
  for (let attempt = 0; ; attempt++) {
    await slots.take();
    if (stillWanted && !(await stillWanted())) return { kind: 'withdrawn' };
    try {
      const { messageId } = await deps.mailer.send(mail);
      return { kind: 'sent', messageId };
    } catch (error) {
      if (isSendRefused(error, 'throttled')) {
        const pause = Math.min(MAX_THROTTLE_PAUSE_MS, 250 * 2 ** attempt);
        if (Date.now() + pause - started > SENDER_BUDGET_MS) {
          return { kind: 'throttled' };
        }
        logger.info('Send throttled: slowing down', { attempt, pause });
        await sleep(pause);
        continue;
      }
      if (isSendRefused(error, 'rejected')) return { kind: 'rejected' };
      if (isSendRefused(error, 'paused')) return { kind: 'paused' };
      logger.warn('Send outcome unknown: the claim stays', { error });
      return { kind: 'uncertain' };
    }
  }
};
