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
import { AppError, ConflictError } from '../errors.ts';
import { accountRate } from '../mail/account.ts';
import { type ComposeFor, prepareMessage } from '../mail/compose.ts';
import { stopReason } from '../mail/guards.ts';
import {
  blockSeed,
  firstLaneOf,
  parallelSendsFor,
  ratePlan,
  SENDER_BUDGET_MS,
  Slots,
  sendPaced,
} from '../mail/pacing.ts';
import { emailTags } from '../mail/tags.ts';
import { logger } from '../observability.ts';
import type { CoreDeps, OutgoingMessage } from '../ports.ts';
import { sendingStateOf } from '../sending/readiness.ts';
import { Id } from '../validation.ts';
import { segmentFilterOf } from './campaigns.ts';
import { copyProgress, type Halt, watchCampaign } from './control.ts';
import type { Campaign, FailureReason, Progress } from './model.ts';
import type { CampaignsDeps as Deps, RecipientOutcome } from './ports.ts';
import type { GuardDeps } from './send.ts';
import { settleCampaign } from './settle.ts';

/**
 * Most recipients of one batch: four seconds of a sender at its most
 * (`SENDER_RATE`); the dispatcher also keeps a batch's message well under
 * SQS's 256 KB.
 */
export const MAX_BATCH = 1_000;

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
  /**
   * The send's block of the pacer's lanes (`SendState.laneBlock`). Absent
   * from messages of sends started before blocks: the campaign id's hash.
   */
  laneBlock: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
export type BatchMessage = v.InferOutput<typeof BatchMessage>;

/**
 * How much later than its budget a sender's last claimed recipients may
 * still wait for their instant: past it, the claim stays (see
 * `RECIPIENT_LEASE_MS`).
 */
const SEND_GRACE_MS = 5_000;

/** A number from a campaign's id: where its senders start on the lanes. */
const laneSeed = (campaignId: string): number => {
  let hash = 0;
  for (let i = 0; i < campaignId.length; i++) {
    hash = (hash * 31 + campaignId.charCodeAt(i)) >>> 0;
  }
  return hash;
};

/** A batch's lease: longer than a sender may run (its function's timeout). */
export const BATCH_LEASE_MS = 60_000;

/**
 * A recipient's claim: long enough for SES's first event of the message to
 * reach us after a sender died, so that it is never sent twice.
 */
export const RECIPIENT_LEASE_MS = 15 * 60_000;

/** What a sender needs (the fields: what its content merges). */
export type DeliverDeps = GuardDeps &
  Pick<
    Deps,
    | 'sends'
    | 'topics'
    | 'delivery'
    | 'mailer'
    | 'pacer'
    | 'ids'
    | 'audience'
    | 'fields'
  > &
  Pick<CoreDeps, 'links'> & { queues: Pick<Deps['queues'], 'dispatch'> };

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

/**
 * The recipients still in the audience when their turn comes, read
 * strongly consistent so that an unsubscribe, an untag, a change that
 * takes a contact out of the campaign's segment or a topic opt-out that
 * landed before is honoured. A batch of the whole list (no tag, no
 * segment) reads its range with one Query: its recipients are most of the
 * range, and a Query is billed by the kilobyte (~0.1 read unit a contact)
 * where a read by key costs a whole unit each. A tag's or a segment's
 * batch reads its own recipients by key (one BatchGetItem per 100, in
 * parallel), never what lies between them in the list (a rare tag's
 * batch may span most of it). Suppressions are read
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
  const { range } = message;
  const dense = range && !campaign.tagId && !campaign.segmentId;
  const [contacts, declined, suppressed, inSegment] = await Promise.all([
    dense
      ? deps.audience
          .range(orgId, campaign.listId, {
            ...range,
            tagId: null,
            consistent: true,
          })
          .then((found) => new Map(found.map((c) => [c.email, c])))
      : deps.contacts.getMany(orgId, campaign.listId, emails),
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
  // Paused: the batch stays in flight; the resume queues it again.
  if (found.campaign.paused) return;
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
  // A pause or a cancellation, seen within a second: no provider call
  // starts after it (checked right before each), and no claim is made.
  const watch = watchCampaign(deps, orgId, campaignId, sendId);
  let halt: Halt | undefined;
  const halted = async () => {
    halt ??= await watch();
    return halt !== undefined;
  };
  /** Claimed, then withdrawn before the call: given back at the end. */
  const withdrawn: string[] = [];

  // 3. Claim, compose, pace and send, a few recipients at a time.
  // What is the same for every recipient is composed once per batch (the
  // organization's fields too, read once if the content reads them).
  let composeFor: ComposeFor | undefined;
  try {
    composeFor = await prepareMessage(deps, {
      orgId,
      subject: campaign.subject,
      html: content.html,
      ...sender,
      ...(org.postalAddress ? { postalAddress: org.postalAddress } : {}),
      ...(campaign.topicId ? { topicId: campaign.topicId } : {}),
      campaignId,
    });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    stoppedBy = { reason: 'content_invalid', text: error.message };
  }
  const plan = ratePlan(await accountRate(deps));
  const slots = new Slots(deps, plan, {
    wanted: recipients.length,
    lanes: plan.lanesPerSender,
    // The send's block of lanes, and in it the lanes of the sender this
    // batch follows: senders of one send do not meet on a lane.
    firstLane: firstLaneOf(
      plan,
      message.laneBlock === undefined
        ? laneSeed(campaignId)
        : blockSeed(plan, message.laneBlock),
      batch,
    ),
    deadline: leaseStart.getTime() + SENDER_BUDGET_MS + SEND_GRACE_MS,
  });
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
      mail = await (composeFor as ComposeFor)(contact);
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
          // A series step's campaign names its step too.
          ...(campaign.origin
            ? { sequence: campaign.origin.seriesId, step: campaign.origin.step }
            : {}),
        }),
      },
      started + SENDER_BUDGET_MS,
      async () => !(await halted()),
    );
    switch (result.kind) {
      case 'withdrawn':
        withdrawn.push(contact.id);
        break;
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
      if (await halted()) return;
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
      {
        length: Math.min(parallelSendsFor(plan.senderRate), recipients.length),
      },
      worker,
    ),
  );
  // What was reserved for sends that did not happen goes back to the lane.
  await slots.release();
  if (failure) {
    // What SES took is recorded; the retried message claims the rest.
    await deps.sends.recordOutcomes(orgId, campaignId, recorded);
    throw failure.error;
  }
  if (halt) {
    // What SES took is recorded and the rest given back. Paused, the
    // batch stays in flight for the resume; stopped (cancelled), what it
    // sent is counted and shown on the campaign.
    await deps.sends.recordOutcomes(orgId, campaignId, recorded);
    if (halt === 'stopped') {
      // Counted while the batch is still ours (its lease names us).
      await deps.sends.completeBatch(orgId, campaignId, batch, owner, outcome);
    }
    await deps.sends.release(orgId, campaignId, batch, owner, withdrawn);
    if (halt === 'stopped') await copyProgress(deps, orgId, campaign);
    logger.info('Batch halted', {
      orgId,
      campaignId,
      batch,
      halt,
      sent: outcome.sent,
    });
    return;
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
