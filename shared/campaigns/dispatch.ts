/**
 * The dispatcher of campaign sends: the one service call of the `dispatch`
 * consumer. It starts a send (told by the API, or by a schedule's fire,
 * which re-checks the switch, readiness and quota first), then walks the
 * audience by cursor — never by page number — and hands the senders a few
 * batches at a time, and sees the send end.
 *
 * Fair by construction: a send has at most {@link BATCHES_IN_FLIGHT}
 * batches in the senders' queue; each finished batch asks for the next. A
 * small campaign's batch therefore waits behind a handful of batches of a
 * big one, never behind all of them (on AWS the queue is also a fair queue,
 * grouped by organization).
 *
 * Cheap to wait for: a sender lives as long as its batch takes at the
 * rate, so a batch handed out while another of the send is in flight is
 * delayed in the queue until shortly before that one should end
 * ({@link delayFor}). Senders of one send overlap by a second or so
 * rather than for a whole batch, and no function is paid to wait for the
 * queue's turn.
 *
 * Resumable: the state (cursor, batches in flight) changes by conditional
 * writes only; a batch is recorded before its message is sent, and one
 * whose message is not known to be queued is sent again by the next run.
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError } from '../errors.ts';
import { accountRate } from '../mail/account.ts';
import { refusingBlockers } from '../mail/guards.ts';
import { ratePlan } from '../mail/pacing.ts';
import { logger } from '../observability.ts';
import type { SegmentContact } from '../segments/evaluate.ts';
import { sendingStateOf } from '../sending/readiness.ts';
import { Id } from '../validation.ts';
import { segmentFilterOf } from './campaigns.ts';
import { type BatchMessage, MAX_BATCH } from './deliver.ts';
import type {
  Campaign,
  HoldReason,
  InFlightBatch,
  SendState,
} from './model.ts';
import { NO_PROGRESS } from './model.ts';
import type { CampaignsDeps as Deps } from './ports.ts';
import { type GuardDeps, holdOf } from './send.ts';
import { settleCampaign } from './settle.ts';

/**
 * Batches of one send in the senders' queue at once, per sender the send
 * runs at once (its rate plan's `sendersPerSend`): one under way and one
 * waiting for its turn.
 */
export const BATCHES_IN_FLIGHT = 2;

/**
 * The most bytes of recipients in one batch's message: SQS takes messages
 * of 256 KB, and a batch of long addresses must stay well within it.
 */
export const MAX_BATCH_BYTES = 160_000;

/** Items of the list one walk step reads at most. */
export const WALK_STEP_ITEMS = 500;

/**
 * Recipients per batch: ten seconds of one sender's rate (its share of the
 * account's, `ratePlan`), 10 to {@link MAX_BATCH}. A batch alone takes at
 * most about ten seconds (more while other sends share the rate), well
 * within a sender's time budget; the larger the batch, the less its lease,
 * its completion and its messages weigh on each recipient.
 */
export const batchSizeFor = (ratePerSecond: number): number =>
  Math.max(10, Math.min(MAX_BATCH, Math.round(ratePerSecond * 10)));

/**
 * The size of the next batch of a send of `total` recipients, `handedOut`
 * of them in batches already: `size`, but the last round of batches (what
 * is left past whole rounds of a batch per sender) is shared evenly by the
 * senders, so that they end together instead of one carrying a whole
 * batch alone at its share of the rate while the others' lanes stand
 * idle. `total` is the send's recipient count, which a segment only
 * estimates: the batches past it keep the last round's size.
 */
export const lastRoundSize = (
  size: number,
  total: number,
  handedOut: number,
  senders: number,
): number => {
  const last = total % (size * senders);
  if (last === 0 || handedOut < total - last) return size;
  return Math.min(size, Math.max(10, Math.ceil(last / senders)));
};

/** The longest delay SQS gives a message, in seconds. */
export const MAX_DELAY_SECONDS = 900;

/**
 * How long before the batches in flight should end the next one starts:
 * a tenth of their time at the rate, at least a second — the time a
 * delayed message takes to become a running sender.
 */
const handoverMs = (durationMs: number): number =>
  Math.max(1_000, durationMs / 10);

/** How long a batch of this many recipients takes at the rate. */
const durationAt = (recipients: number, rate: number): number =>
  (recipients / rate) * 1000;

/**
 * When a batch in flight should end, as known now. One that has not
 * started yet ends when it was planned to. One under way has shared the
 * rate with the batch before it since it started (the one whose end
 * brought the dispatcher here), so it has done about half as much as
 * alone: what is left takes its time at the whole rate, less half the
 * time since it started. Without this, planned ends drift earlier than
 * real ones batch after batch, until every batch starts at once.
 */
export const expectedEnd = (batch: InFlightBatch, now: Date): number => {
  if (!batch.ends) return 0;
  const ends = Date.parse(batch.ends);
  const starts = Date.parse(batch.starts ?? batch.at);
  const elapsed = now.getTime() - starts;
  if (elapsed <= 0) return ends;
  return now.getTime() + Math.max(0, ends - starts - elapsed / 2);
};

/**
 * The delay of a batch's message, in whole seconds (to the nearest: the
 * handover's second absorbs the half second), and when it should then
 * start and end: shortly before a sender of the send should be free (the
 * last of the batches in flight ends, with one sender at a time; the
 * earliest of the last `senders` with several), or now when one is (a new
 * send, or one whose batches are late). `rate` is one sender's.
 */
export const delayFor = (
  inFlight: readonly InFlightBatch[],
  recipients: number,
  rate: number,
  now: Date,
  senders = 1,
): { delaySeconds: number; starts: Date; ends: Date } => {
  const duration = durationAt(recipients, rate);
  // With several senders at once, the batch takes the place of the one
  // that ends first among those it must wait for.
  const ends = inFlight.map((b) => expectedEnd(b, now)).sort((a, b) => a - b);
  const busyUntil =
    ends.length < senders ? 0 : (ends[ends.length - senders] as number);
  const wait = busyUntil - handoverMs(duration) - now.getTime();
  const delaySeconds = Math.min(
    MAX_DELAY_SECONDS,
    Math.max(0, Math.round(wait / 1000)),
  );
  const starts = new Date(now.getTime() + delaySeconds * 1000);
  return {
    delaySeconds,
    starts,
    ends: new Date(starts.getTime() + duration),
  };
};

/** How long the dispatcher waits for the API to name a send it was told of. */
export const START_GRACE_MS = 60_000;

/** After this, a batch whose message is not known queued is queued again. */
export const REQUEUE_AFTER_MS = 30_000;

const Instant = v.pipe(v.string(), v.isoTimestamp());

/** A message of the dispatcher's queue. */
export const DispatchMessage = v.variant('kind', [
  /** The API accepted a send now. */
  v.object({
    kind: v.literal('start'),
    orgId: Id,
    campaignId: Id,
    sendId: Id,
    requestedAt: Instant,
  }),
  /** A scheduled send's schedule fired. */
  v.object({
    kind: v.literal('fire'),
    orgId: Id,
    campaignId: Id,
    sendId: Id,
    scheduledAt: Instant,
  }),
  /** A batch ended: hand out the next, or see the send end. */
  v.object({
    kind: v.literal('continue'),
    orgId: Id,
    campaignId: Id,
    sendId: Id,
  }),
  /**
   * A paused send was resumed: queue its batches in flight again (their
   * messages were dropped while it was paused), then go on.
   */
  v.object({
    kind: v.literal('resume'),
    orgId: Id,
    campaignId: Id,
    sendId: Id,
    requestedAt: Instant,
  }),
]);
export type DispatchMessage = v.InferOutput<typeof DispatchMessage>;

/** What the dispatcher needs. */
export type DispatchDeps = GuardDeps &
  Pick<Deps, 'sends' | 'topics' | 'delivery' | 'pacer'> & {
    queues: Pick<Deps['queues'], 'send'>;
  };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A race lost for now: the consumer retries the message. */
const notYet = (message: string) =>
  new ConflictError('campaign.changed', message);

/** Back to draft: the fire of a schedule found the send held. */
const holdFired = (
  deps: DispatchDeps,
  message: Extract<DispatchMessage, { kind: 'fire' }>,
  reason: HoldReason,
  blockers?: string[],
) =>
  settleCampaign(
    deps,
    message.orgId,
    message.campaignId,
    message.sendId,
    (campaign, now) =>
      campaign.status === 'scheduled'
        ? {
            ...campaign,
            status: 'draft',
            scheduledAt: null,
            sendId: null,
            lastHold: { reason, at: now, ...(blockers ? { blockers } : {}) },
            updatedAt: now,
          }
        : undefined,
  );

/**
 * A schedule fired: if the campaign is still scheduled for this send and
 * instant, re-check what the API checked (the switch, readiness, quota)
 * and start; otherwise nothing (a late, early or duplicate fire, or a
 * campaign sent meanwhile).
 */
const fire = async (
  deps: DispatchDeps,
  message: Extract<DispatchMessage, { kind: 'fire' }>,
): Promise<Campaign | undefined> => {
  const { orgId, campaignId, sendId } = message;
  const campaign = await deps.campaigns.get(orgId, campaignId);
  if (
    campaign?.status !== 'scheduled' ||
    campaign.sendId !== sendId ||
    campaign.scheduledAt !== new Date(message.scheduledAt).toISOString()
  ) {
    logger.info('Schedule fire with nothing to do', { orgId, campaignId });
    return undefined;
  }
  const org = await deps.organizations.get(orgId);
  if (!org) throw new NotFoundError('organization.notFound', `No ${orgId}`);
  const { readiness } = await sendingStateOf(
    deps,
    org,
    campaign.sendingIdentityId,
  );
  const blockers = refusingBlockers(readiness.blockers);
  if (blockers.length > 0) {
    await holdFired(deps, message, 'blocked', blockers);
    return undefined;
  }
  const { hold, recipients } = await holdOf(deps, org, campaign);
  if (hold) {
    await holdFired(deps, message, hold);
    return undefined;
  }
  return settleCampaign(deps, orgId, campaignId, sendId, (current, now) =>
    current.status === 'scheduled'
      ? {
          ...current,
          status: 'sending',
          scheduledAt: current.scheduledAt,
          startedAt: now,
          progress: { ...NO_PROGRESS, total: recipients },
          updatedAt: now,
        }
      : undefined,
  );
};

/**
 * The campaign of a start message, once the API named its send: the API
 * tells the dispatcher first and changes the campaign right after, so a
 * message may come a moment early (a short wait, then a retry). One the
 * campaign never names (its request failed or lost a race) does nothing.
 */
const started = async (
  deps: DispatchDeps,
  message: Extract<DispatchMessage, { kind: 'start' }>,
): Promise<Campaign | undefined> => {
  const { orgId, campaignId, sendId } = message;
  for (let attempt = 0; ; attempt++) {
    const campaign = await deps.campaigns.get(orgId, campaignId);
    if (campaign?.sendId === sendId) {
      return campaign.status === 'sending' ? campaign : undefined;
    }
    const waiting =
      campaign &&
      (campaign.status === 'draft' || campaign.status === 'scheduled') &&
      deps.clock.now().getTime() <
        Date.parse(message.requestedAt) + START_GRACE_MS;
    if (!waiting) return undefined;
    if (attempt >= 4) {
      throw notYet(`Campaign ${campaignId} does not name send ${sendId} yet`);
    }
    await sleep(250 * (attempt + 1));
  }
};

/**
 * The campaign of a resume, once its pause is lifted: the API tells the
 * dispatcher first and lifts the pause right after, so the message may
 * come a moment early (short waits, then a retry, for a minute at most).
 */
const resumed = async (
  deps: DispatchDeps,
  message: Extract<DispatchMessage, { kind: 'resume' }>,
): Promise<Campaign | undefined> => {
  const { orgId, campaignId } = message;
  for (let attempt = 0; ; attempt++) {
    const campaign = await deps.campaigns.get(orgId, campaignId);
    if (!campaign?.paused) return campaign;
    const waiting =
      deps.clock.now().getTime() <
      Date.parse(message.requestedAt) + START_GRACE_MS;
    if (!waiting) return undefined;
    if (attempt >= 4) {
      throw notYet(`Campaign ${campaignId} is still paused`);
    }
    await sleep(250 * (attempt + 1));
  }
};

/** The first state of a send, and its recipients counted in the window. */
const openSend = async (
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
): Promise<void> => {
  const sendId = campaign.sendId as string;
  const existing = await deps.sends.get(orgId, campaign.id);
  if (existing?.sendId === sendId) return;
  const state: SendState = {
    sendId,
    cursor: null,
    walked: false,
    nextBatch: 0,
    inFlight: {},
    batchesDone: 0,
    progress: { ...NO_PROGRESS, total: campaign.progress.total },
    version: 0,
    handedOut: 0,
    // A start redelivered before this state is stored takes a block too;
    // the state stored first keeps its own.
    laneBlock: await deps.pacer.nextBlock(),
  };
  await deps.sends.start(orgId, campaign.id, state);
  // The organization's rolling 24-hour window takes the audience on.
  await deps.sendWindows.add(
    orgId,
    deps.clock.now().toISOString().slice(0, 13),
    campaign.progress.total,
  );
};

/** Whether a contact of the list is in the campaign's segment. */
type SegmentFilter = (contact: SegmentContact) => boolean;

/**
 * The contacts of a walk step the send keeps: those the campaign's segment
 * matches (as they are now), not those who declined its topic. Read
 * eventually consistent: the sender reads each recipient again,
 * consistently, before its send. Suppressed addresses are not looked up
 * here: their contacts are bounced or complained, so the walk (subscribed
 * only) leaves them out, and the sender checks suppressions for the
 * seconds in which an address is suppressed but its contacts not yet
 * changed.
 */
const eligible = async <C extends SegmentContact & { id: string }>(
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
  inSegment: SegmentFilter,
  walked: C[],
): Promise<C[]> => {
  const contacts = walked.filter(inSegment);
  if (contacts.length === 0 || !campaign.topicId) return contacts;
  const declined = await deps.topics.optedOut(
    orgId,
    campaign.topicId,
    contacts.map((c) => c.email),
    { consistent: false },
  );
  return contacts.filter((c) => !declined.has(c.email));
};

/**
 * Walks on from the cursor until a batch is full or the list ends: the
 * batch's range ends at its last recipient (the next walk starts there).
 */
export const nextBatch = async (
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
  inSegment: SegmentFilter,
  cursor: string | null,
  size: number,
): Promise<{
  recipients: { contactId: string; email: string }[];
  last: string | null;
  done: boolean;
}> => {
  const recipients: { contactId: string; email: string }[] = [];
  let bytes = 0;
  let after = cursor;
  for (;;) {
    const step = await deps.audience.walk(orgId, campaign.listId, {
      after,
      // A tag's index entries are nearly all recipients: read what the
      // batch still needs, so that no entry (nor its contact) is read
      // again by the next batch.
      limit: campaign.tagId
        ? Math.min(WALK_STEP_ITEMS, size - recipients.length)
        : WALK_STEP_ITEMS,
      tagId: campaign.tagId,
    });
    const kept = await eligible(
      deps,
      orgId,
      campaign,
      inSegment,
      step.contacts,
    );
    for (const contact of kept) {
      recipients.push({ contactId: contact.id, email: contact.email });
      // The recipient as its message carries it, in JSON.
      bytes += contact.id.length + contact.email.length + 32;
      if (recipients.length === size || bytes >= MAX_BATCH_BYTES) {
        // Full: the range ends here; the rest of the step is read again.
        const rest = step.contacts.findIndex((c) => c.email > contact.email);
        return {
          recipients,
          last: contact.email,
          done: step.done && rest === -1,
        };
      }
    }
    after = step.last;
    if (step.done) return { recipients, last: after, done: true };
  }
};

/** The message of a batch in flight, its recipients read again from its range. */
const batchMessage = async (
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
  inSegment: SegmentFilter,
  batch: number,
  range: InFlightBatch,
  laneBlock: number | undefined,
): Promise<BatchMessage> => {
  const contacts = await deps.audience.range(orgId, campaign.listId, {
    after: range.after,
    last: range.last,
    tagId: campaign.tagId,
  });
  const kept = await eligible(deps, orgId, campaign, inSegment, contacts);
  return {
    orgId,
    campaignId: campaign.id,
    sendId: campaign.sendId as string,
    batch,
    range: { after: range.after, last: range.last },
    recipients: kept.map((c) => ({ contactId: c.id, email: c.email })),
    ...(laneBlock === undefined ? {} : { laneBlock }),
  };
};

/**
 * Sends a batch to the senders, grouped by organization (fair queues),
 * delayed until its turn.
 */
const queueBatch = (
  deps: DispatchDeps,
  message: BatchMessage,
  delaySeconds = 0,
) =>
  deps.queues.send.send(message, {
    group: message.orgId,
    ...(delaySeconds > 0 ? { delaySeconds } : {}),
  });

/**
 * The send ends when the walk reached the list's end and every batch is
 * done: the campaign becomes sent with its exact progress.
 */
const finishIfDone = async (
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
  state: SendState,
): Promise<boolean> => {
  const done =
    state.walked &&
    Object.keys(state.inFlight).length === 0 &&
    state.batchesDone === state.nextBatch;
  if (!done) return false;
  const { sent, failed, skipped } = state.progress;
  await settleCampaign(
    deps,
    orgId,
    campaign.id,
    state.sendId,
    (current, now) =>
      current.status === 'sending'
        ? {
            ...current,
            status: 'sent',
            completedAt: now,
            progress: { total: sent + failed + skipped, sent, failed, skipped },
            updatedAt: now,
          }
        : undefined,
  );
  logger.info('Campaign sent', {
    orgId,
    campaignId: campaign.id,
    sent,
    failed,
    skipped,
  });
  return true;
};

/**
 * One run over a running send: queue again the batches whose message may
 * be lost, hand out batches up to the cap, and end the send when all is
 * done. Each change of the state is conditional; a lost race re-reads.
 */
const advance = async (
  deps: DispatchDeps,
  orgId: string,
  campaign: Campaign,
  options: { requeueInFlight?: boolean } = {},
): Promise<void> => {
  // A resume queues every batch in flight again, once.
  let requeueAll = options.requeueInFlight === true;
  const plan = ratePlan(await accountRate(deps));
  const rate = plan.senderRate;
  const size = batchSizeFor(rate);
  const cap = BATCHES_IN_FLIGHT * plan.sendersPerSend;
  // The segment as it is now: each batch keeps the contacts it matches.
  const inSegment = await segmentFilterOf(deps, orgId, campaign);
  for (;;) {
    const state = await deps.sends.get(orgId, campaign.id);
    if (!state || state.sendId !== campaign.sendId) return;
    if (await finishIfDone(deps, orgId, campaign, state)) return;
    const now = deps.clock.now();

    // Batches recorded but maybe never queued (a crash in between), or
    // all of them after a pause (their messages were dropped).
    const lost = Object.entries(state.inFlight).filter(
      ([, b]) =>
        requeueAll ||
        (!b.queued && now.getTime() - Date.parse(b.at) >= REQUEUE_AFTER_MS),
    );
    requeueAll = false;
    if (lost.length > 0) {
      for (const [n, range] of lost) {
        await queueBatch(
          deps,
          await batchMessage(
            deps,
            orgId,
            campaign,
            inSegment,
            Number(n),
            range,
            state.laneBlock,
          ),
        );
      }
      await saveQuietly(deps, orgId, campaign.id, {
        ...state,
        inFlight: Object.fromEntries(
          Object.entries(state.inFlight).map(([n, b]) => [
            n,
            lost.some(([m]) => m === n) ? { ...b, queued: true } : b,
          ]),
        ),
      });
      continue;
    }

    if (state.walked || Object.keys(state.inFlight).length >= cap) {
      return;
    }

    // The next batch: recorded first (conditionally), then queued.
    const batch = await nextBatch(
      deps,
      orgId,
      campaign,
      inSegment,
      state.cursor,
      state.handedOut === undefined
        ? size
        : lastRoundSize(
            size,
            state.progress.total,
            state.handedOut,
            plan.sendersPerSend,
          ),
    );
    const n = state.nextBatch;
    const turn = delayFor(
      Object.values(state.inFlight),
      batch.recipients.length,
      rate,
      now,
      plan.sendersPerSend,
    );
    const range: InFlightBatch | undefined =
      batch.recipients.length > 0 && batch.last
        ? {
            after: state.cursor,
            last: batch.last,
            at: now.toISOString(),
            queued: false,
            starts: turn.starts.toISOString(),
            ends: turn.ends.toISOString(),
          }
        : undefined;
    const recorded: SendState = {
      ...state,
      ...(state.handedOut === undefined
        ? {}
        : { handedOut: state.handedOut + batch.recipients.length }),
      cursor: batch.last,
      walked: batch.done,
      nextBatch: range ? n + 1 : n,
      inFlight: range ? { ...state.inFlight, [n]: range } : state.inFlight,
    };
    if (!(await saveQuietly(deps, orgId, campaign.id, recorded))) continue;
    if (!range) continue;
    await queueBatch(
      deps,
      {
        orgId,
        campaignId: campaign.id,
        sendId: state.sendId,
        batch: n,
        range: { after: range.after, last: range.last },
        recipients: batch.recipients,
        ...(state.laneBlock === undefined
          ? {}
          : { laneBlock: state.laneBlock }),
      },
      turn.delaySeconds,
    );
    await saveQuietly(deps, orgId, campaign.id, {
      ...recorded,
      version: recorded.version + 1,
      inFlight: { ...recorded.inFlight, [n]: { ...range, queued: true } },
    });
  }
};

/** Saves the state; false when it changed meanwhile (read it again). */
const saveQuietly = async (
  deps: DispatchDeps,
  orgId: string,
  campaignId: string,
  state: SendState,
): Promise<boolean> => {
  try {
    await deps.sends.save(orgId, campaignId, state);
    return true;
  } catch (error) {
    if (error instanceof ConflictError) return false;
    throw error;
  }
};

/** The dispatcher's service call for one message. Idempotent. */
export const dispatchCampaign = async (
  deps: DispatchDeps,
  message: DispatchMessage,
): Promise<void> => {
  const campaign =
    message.kind === 'fire'
      ? await fire(deps, message)
      : message.kind === 'start'
        ? await started(deps, message)
        : message.kind === 'resume'
          ? await resumed(deps, message)
          : await deps.campaigns.get(message.orgId, message.campaignId);
  if (campaign?.status !== 'sending' || campaign.sendId !== message.sendId) {
    return;
  }
  await openSend(deps, message.orgId, campaign);
  // Paused: nothing handed out, nothing queued again, until resumed.
  if (campaign.paused) return;
  await advance(deps, message.orgId, campaign, {
    requeueInFlight: message.kind === 'resume',
  });
};
