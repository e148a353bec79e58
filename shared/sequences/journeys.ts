/**
 * Journeys: contacts enter sequences and receive their steps, each step
 * exactly once at most, at its time.
 *
 * - Enrolment, from the committed facts (the table's stream): a contact
 *   who joins a list or receives a tag enters each active sequence with
 *   that trigger, on its published version, unless it was ever enrolled
 *   there (a conditional put: a repeated fact is a no-op; an ended journey
 *   never restarts).
 * - Steps: each journey has one schedule at a time, for its next step,
 *   named after (sequence, contact, position). Its fire re-reads the head,
 *   the journey and the contact; the step is sent through the campaign
 *   send path's pieces (guards, quota, suppression, composer, pacer,
 *   tags); then the journey advances and the next step is scheduled.
 * - At most once: the journey is claimed for the step (a write conditional
 *   on its revision) just before the provider is called, after every read
 *   and the composing. A duplicate fire or redelivery finds the position
 *   moved on, or the claim held; a claim that expired without an outcome
 *   (the consumer died while the provider was called) is never sent
 *   again: the step is recorded `uncertain` and the journey goes on.
 * - Paused: a fire marks the journey waiting and sends nothing; the
 *   resume (from the head's change on the stream) sends each waiting step
 *   once, and the next ones follow at their normal spacing from then.
 * - Deleted: no step goes out once the head is gone; the cleanup (from
 *   the head's removal on the stream) cancels each journey's schedule and
 *   deletes the journeys.
 */
import * as v from 'valibot';
import type { AudienceEvent } from '../audience/events.ts';
import type { Contact } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import { type DeliverDeps, SENDER_BUDGET_MS } from '../campaigns/deliver.ts';
import type { GuardDeps } from '../campaigns/send.ts';
import { AppError, ConflictError } from '../errors.ts';
import { accountRate } from '../mail/account.ts';
import { composeMessage } from '../mail/compose.ts';
import { last24Hours, quotaLeft, stopReason } from '../mail/guards.ts';
import { ratePlan, type SendResult, Slots, sendPaced } from '../mail/pacing.ts';
import { emailTags } from '../mail/tags.ts';
import { logger } from '../observability.ts';
import { timeZoneOf } from '../organizations/model.ts';
import type { OutgoingMessage, QueueSender } from '../ports.ts';
import { type SchedulingDeps, scheduleName } from '../scheduling/ports.ts';
import { sendingStateOf } from '../sending/readiness.ts';
import { Id } from '../validation.ts';
import {
  type Enrolment,
  type ExitReason,
  MAX_NODES_PER_VERSION,
  type SendEmailNode,
  type Sequence,
  type SequenceNode,
  type StepHoldReason,
  type StepOutcome,
} from './model.ts';
import type { SequencesDeps, VersionWithNodes } from './ports.ts';
import { STEPS_QUEUE } from './queue.ts';
import { sequenceStepTime } from './timing.ts';

/**
 * How long a claimed step is held: longer than the consumer may run, so
 * a live consumer is never overtaken; an expired claim means it died.
 */
export const STEP_LEASE_MS = 15 * 60_000;

/** How long a step that cannot go out now waits before it is tried again. */
export const HOLD_RETRY_MS = 60 * 60_000;

/**
 * A due instant nearer than this is sent to the queue (delayed) rather
 * than scheduled: a schedule takes a moment to be created and fire.
 */
export const DIRECT_LEAD_MS = 60_000;

/** Journeys read (or cleaned up) per resume or cleanup message. */
export const JOURNEYS_PER_MESSAGE = 100;

const Position = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(0),
  v.maxValue(MAX_NODES_PER_VERSION - 1),
);

/** A step of one journey fell due (a schedule's fire, or sent directly). */
export const StepMessage = v.object({
  kind: v.literal('step'),
  orgId: Id,
  sequenceId: Id,
  contactId: Id,
  position: Position,
});
export type StepMessage = v.InferOutput<typeof StepMessage>;

/** A sequence became active again: send the steps that came due meanwhile. */
export const ResumeMessage = v.object({
  kind: v.literal('resume'),
  orgId: Id,
  sequenceId: Id,
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
});
export type ResumeMessage = v.InferOutput<typeof ResumeMessage>;

/** A sequence was deleted: cancel its journeys' schedules, delete them. */
export const CleanupMessage = v.object({
  kind: v.literal('cleanup'),
  orgId: Id,
  sequenceId: Id,
});
export type CleanupMessage = v.InferOutput<typeof CleanupMessage>;

/** The schedule of a journey's step. */
export const stepScheduleName = (
  orgId: string,
  sequenceId: string,
  contactId: string,
  position: number,
): string => scheduleName('step', orgId, sequenceId, contactId, `${position}`);

/** What scheduling a journey's next step needs. */
export type ScheduleStepDeps = Pick<
  SequencesDeps,
  'clock' | 'sequences' | 'organizations'
> &
  SchedulingDeps & { queues: { steps: QueueSender } };

/** What enrolment needs. */
export type EnrolDeps = ScheduleStepDeps &
  Pick<SequencesDeps, 'enrolments'> &
  Pick<AudienceDeps, 'contacts'>;

/** What a step needs: the journey's stores and the campaign send path. */
export type StepDeps = EnrolDeps &
  Pick<SequencesDeps, 'ids'> &
  Omit<GuardDeps, 'campaigns'> &
  Pick<
    DeliverDeps,
    'topics' | 'delivery' | 'mailer' | 'pacer' | 'links' | 'endpoints'
  >;

/**
 * Published versions never change: a container keeps the ones it read
 * (a few hundred at most), so a step costs no reads of its content.
 */
const versionCache = new Map<string, VersionWithNodes>();
const VERSION_CACHE_SIZE = 200;

/** A published version with its nodes, read once per container. */
const publishedVersion = async (
  deps: Pick<SequencesDeps, 'sequences'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionWithNodes | undefined> => {
  const key = `${orgId}/${sequenceId}/${versionId}`;
  const cached = versionCache.get(key);
  if (cached) return cached;
  const found = await deps.sequences.getVersionWithNodes(
    orgId,
    sequenceId,
    versionId,
  );
  // Only what can no longer change is kept (a draft can).
  if (found && found.version.status !== 'draft') {
    if (versionCache.size >= VERSION_CACHE_SIZE) {
      const oldest = versionCache.keys().next().value;
      if (oldest !== undefined) versionCache.delete(oldest);
    }
    versionCache.set(key, found);
  }
  return found;
};

/**
 * The first send step at or after `from`, with the hours of the waits
 * before it; undefined when none is left.
 */
export const nextSendStep = (
  nodes: readonly SequenceNode[],
  from: number,
): { position: number; node: SendEmailNode; waitHours: number } | undefined => {
  let waitHours = 0;
  for (let position = from; position < nodes.length; position++) {
    const node = nodes[position];
    if (!node) break;
    if (node.type === 'wait') {
      waitHours += node.waitHours;
      continue;
    }
    return { position, node, waitHours };
  }
  return undefined;
};

/** When a step found after waiting `waitHours` from `base` falls due. */
const dueAt = (
  base: Date,
  step: { node: SendEmailNode; waitHours: number },
  zone: string,
): Date =>
  sequenceStepTime(
    new Date(base.getTime() + step.waitHours * 3_600_000),
    step.node.sendTimeMinutes,
    zone,
  );

/**
 * Makes sure the step at the journey's position will fire: a schedule at
 * its due instant, or a delayed message when that is within a minute.
 * Idempotent: the same journey and position give the same schedule.
 */
export const scheduleStep = async (
  deps: ScheduleStepDeps,
  orgId: string,
  journey: Pick<
    Enrolment,
    'sequenceId' | 'contactId' | 'position' | 'dueAt' | 'status'
  >,
): Promise<void> => {
  if (journey.status !== 'active' || !journey.dueAt) return;
  const message: StepMessage = {
    kind: 'step',
    orgId,
    sequenceId: journey.sequenceId,
    contactId: journey.contactId,
    position: journey.position,
  };
  const at = new Date(journey.dueAt);
  const lead = at.getTime() - deps.clock.now().getTime();
  if (lead <= DIRECT_LEAD_MS) {
    await deps.queues.steps.send(message, {
      group: orgId,
      delaySeconds: Math.max(0, Math.ceil(lead / 1000)),
    });
    return;
  }
  await deps.scheduler.schedule({
    name: stepScheduleName(
      orgId,
      journey.sequenceId,
      journey.contactId,
      journey.position,
    ),
    at,
    queue: STEPS_QUEUE,
    message,
  });
};

/** The trigger an audience event fires. */
const triggerOf = (event: AudienceEvent) =>
  event.type === 'contact.joinedList'
    ? { type: 'list_joined' as const, targetId: event.listId }
    : { type: 'tag_added' as const, targetId: event.tagId };

/**
 * Enrols the contact of each event in the active sequences its trigger
 * starts. Idempotent: the facts come at least once, and a journey that
 * exists (running or ended) is left as it is; a repeat whose journey has
 * not taken its first step yet makes sure that step is scheduled (the
 * first attempt may have died between the two). Only a subscribed
 * contact enters.
 */
export const enrolFromEvents = async (
  deps: EnrolDeps,
  events: readonly AudienceEvent[],
): Promise<number> => {
  let enrolled = 0;
  for (const event of events) {
    const sequences = await deps.sequences.triggered(
      event.orgId,
      triggerOf(event),
    );
    if (sequences.length === 0) continue;
    const [contact, org] = await Promise.all([
      deps.contacts.findById(event.orgId, event.contactId),
      deps.organizations.get(event.orgId),
    ]);
    if (!org || contact?.status !== 'subscribed') continue;
    for (const sequence of sequences) {
      if (await enrol(deps, event, sequence, contact, timeZoneOf(org))) {
        enrolled++;
      }
    }
  }
  return enrolled;
};

/** Enrols one contact in one sequence; true when a journey was created. */
const enrol = async (
  deps: EnrolDeps,
  event: AudienceEvent,
  sequence: Sequence,
  contact: Contact,
  zone: string,
): Promise<boolean> => {
  const { orgId } = event;
  if (!sequence.publishedVersionId) return false;
  const version = await publishedVersion(
    deps,
    orgId,
    sequence.id,
    sequence.publishedVersionId,
  );
  const first = version && nextSendStep(version.nodes, 0);
  if (!version || !first) return false;
  const now = deps.clock.now().toISOString();
  // Dated by the fact, so a repeat computes the same first instant.
  const journey: Enrolment = {
    sequenceId: sequence.id,
    contactId: contact.id,
    listId: contact.listId,
    email: contact.email,
    versionId: version.version.id,
    position: first.position,
    status: 'active',
    exitReason: null,
    enrolledAt: event.at,
    dueAt: dueAt(new Date(event.at), first, zone).toISOString(),
    waiting: false,
    claim: null,
    lastStep: null,
    lastHold: null,
    sent: 0,
    skipped: 0,
    endedAt: null,
    updatedAt: now,
    revision: 1,
  };
  if (await deps.enrolments.create(orgId, journey)) {
    // Deleted or paused since it was found: no journey. Read after the
    // journey was written, so a delete committed later finds the journey
    // in its cleanup (and its schedule, if made after, fires on no head).
    const headNow = await deps.sequences.get(orgId, sequence.id);
    if (headNow?.kind !== 'sequence' || headNow.status !== 'active') {
      await deps.enrolments.deleteMany(orgId, sequence.id, [contact.id]);
      return false;
    }
    await scheduleStep(deps, orgId, journey);
    logger.info('Contact enrolled', {
      orgId,
      sequenceId: sequence.id,
      contactId: contact.id,
      dueAt: journey.dueAt,
    });
    return true;
  }
  const existing = await deps.enrolments.get(orgId, sequence.id, contact.id);
  if (
    existing?.status === 'active' &&
    existing.lastStep === null &&
    existing.claim === null &&
    existing.enrolledAt === event.at
  ) {
    await scheduleStep(deps, orgId, existing);
  }
  return false;
};

/** Thrown to try a step again later: the message is retried. */
const tryLater = (text: string) => new ConflictError('sequence.changed', text);

/** The exit a contact's state means at a step, if it means one. */
const exitOf = (
  journey: Enrolment,
  contact: Contact | undefined,
): ExitReason | undefined => {
  if (!contact || contact.id !== journey.contactId) return 'removed';
  switch (contact.status) {
    case 'subscribed':
      return undefined;
    case 'bounced':
    case 'complained':
    case 'unsubscribed':
      return contact.status;
    default:
      // Back to pending (an address changed hands): not on this journey.
      return 'unsubscribed';
  }
};

/** A journey ended at its step. */
const ended = (
  journey: Enrolment,
  now: string,
  reason: ExitReason,
): Enrolment => ({
  ...journey,
  status: 'exited',
  exitReason: reason,
  dueAt: null,
  waiting: false,
  claim: null,
  endedAt: now,
  updatedAt: now,
});

/**
 * The journey after its step, moved to the next send step (due after its
 * waits from `now`: normal spacing, whatever delayed this one) or ended.
 */
const advanced = (
  journey: Enrolment,
  nodes: readonly SequenceNode[],
  now: Date,
  zone: string,
  outcome: StepOutcome,
  messageId?: string,
): Enrolment => {
  const at = now.toISOString();
  const next = nextSendStep(nodes, journey.position + 1);
  return {
    ...journey,
    ...(next
      ? {
          position: next.position,
          dueAt: dueAt(now, next, zone).toISOString(),
        }
      : { status: 'completed' as const, dueAt: null, endedAt: at }),
    waiting: false,
    claim: null,
    lastStep: {
      position: journey.position,
      outcome,
      at,
      ...(messageId ? { messageId } : {}),
    },
    sent: journey.sent + (outcome === 'sent' ? 1 : 0),
    skipped: journey.skipped + (outcome === 'skipped' ? 1 : 0),
    updatedAt: at,
  };
};

/** Writes the journey's change, then schedules its next step. */
const moveOn = async (
  deps: StepDeps,
  orgId: string,
  before: Enrolment,
  after: Enrolment,
): Promise<void> => {
  await deps.enrolments.update(orgId, before, after);
  const saved = { ...after, revision: before.revision + 1 };
  await scheduleStep(deps, orgId, saved);
};

/** The step waits an hour: the organization cannot send it now. */
const hold = async (
  deps: StepDeps,
  orgId: string,
  journey: Enrolment,
  reason: StepHoldReason,
): Promise<void> => {
  const now = deps.clock.now();
  logger.info('Sequence step held', {
    orgId,
    sequenceId: journey.sequenceId,
    contactId: journey.contactId,
    reason,
  });
  await moveOn(deps, orgId, journey, {
    ...journey,
    claim: null,
    waiting: false,
    dueAt: new Date(now.getTime() + HOLD_RETRY_MS).toISOString(),
    lastHold: { reason, at: now.toISOString() },
    updatedAt: now.toISOString(),
  });
};

/**
 * Runs one step of one journey (the `step` message). Idempotent, and at
 * most one send per (journey, step) whatever fires twice or dies.
 */
export const runStep = async (
  deps: StepDeps,
  message: StepMessage,
): Promise<void> => {
  const { orgId, sequenceId, contactId, position } = message;
  const [head, journey] = await Promise.all([
    deps.sequences.get(orgId, sequenceId),
    deps.enrolments.get(orgId, sequenceId, contactId),
  ]);
  // Deleted: nothing goes out (the cleanup removes what is left).
  if (head?.kind !== 'sequence' || journey?.status !== 'active') return;
  if (journey.position !== position) {
    // A late repeat of the step just done: its successor may have lost
    // its schedule to a crash after the journey moved on.
    if (journey.lastStep?.position === position && !journey.claim) {
      await scheduleStep(deps, orgId, journey);
    }
    return;
  }
  const now = deps.clock.now();
  const at = now.toISOString();
  if (journey.claim) {
    if (Date.parse(journey.claim.until) > now.getTime()) {
      throw tryLater(
        `Step ${position} of contact ${contactId} in sequence ${sequenceId} is being sent`,
      );
    }
    // The claimer died while the provider was called: maybe sent. Never
    // again; the journey goes on.
    logger.warn('Sequence step outcome unknown: not sent again', {
      orgId,
      sequenceId,
      contactId,
      position,
    });
    await settle(deps, orgId, journey, head, now, 'uncertain');
    return;
  }
  if (head.status === 'paused') {
    if (!journey.waiting) {
      await deps.enrolments.update(orgId, journey, {
        ...journey,
        waiting: true,
        updatedAt: at,
      });
    }
    return;
  }

  // 1. The journey's version and the contact as they are now.
  const version = await publishedVersion(
    deps,
    orgId,
    sequenceId,
    journey.versionId,
  );
  const node = version?.nodes[position];
  if (node?.type !== 'send_email') {
    await deps.enrolments.update(
      orgId,
      journey,
      ended(journey, at, 'version_gone'),
    );
    return;
  }
  const [contact, suppressed, declined] = await Promise.all([
    deps.contacts.get(orgId, journey.listId, journey.email),
    deps.delivery.suppressions(orgId, [journey.email], { consistent: true }),
    head.topicId
      ? deps.topics.optedOut(orgId, head.topicId, [journey.email])
      : Promise.resolve(new Set<string>()),
  ]);
  const exit =
    exitOf(journey, contact) ??
    (suppressed.has(journey.email) ? 'suppressed' : undefined);
  if (exit || !contact) {
    await deps.enrolments.update(
      orgId,
      journey,
      ended(journey, at, exit ?? 'removed'),
    );
    return;
  }
  if (declined.has(journey.email)) {
    // Opted out of the topic: this step is skipped, the journey goes on.
    await settle(deps, orgId, journey, head, now, 'skipped');
    return;
  }

  // 2. The guards of every send: the switch, readiness, the quota.
  const org = await deps.organizations.get(orgId);
  if (!org) return;
  const { readiness, sender } = await sendingStateOf(deps, org, null);
  if (!readiness.ready && readiness.blockers.includes('sending_disabled')) {
    await hold(deps, orgId, journey, 'sending_disabled');
    return;
  }
  if (stopReason(readiness.blockers)) {
    await hold(deps, orgId, journey, 'blocked');
    return;
  }
  if ((await quotaLeft(deps, org)) < 1) {
    await hold(deps, orgId, journey, 'quota_exceeded');
    return;
  }

  // 3. Compose, claim, count, send.
  let mail: OutgoingMessage;
  try {
    mail = await composeMessage(deps, {
      orgId,
      contact,
      subject: node.subject ?? '',
      html: node.content,
      ...sender,
      ...(org.postalAddress ? { postalAddress: org.postalAddress } : {}),
      ...(head.topicId ? { topicId: head.topicId } : {}),
    });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    logger.warn('Sequence step does not render: skipped', {
      orgId,
      sequenceId,
      position,
      error: error.message,
    });
    await settle(deps, orgId, journey, head, now, 'failed');
    return;
  }
  const claimed: Enrolment = {
    ...journey,
    claim: {
      position,
      owner: deps.ids.id(),
      until: new Date(now.getTime() + STEP_LEASE_MS).toISOString(),
    },
    updatedAt: at,
  };
  const holder = await takeClaim(deps, orgId, journey, claimed);
  /** Lets the claim go: nothing went out, the step may be tried again. */
  const letGo = () =>
    deps.enrolments.update(orgId, holder, {
      ...holder,
      claim: null,
      updatedAt: deps.clock.now().toISOString(),
    });
  const hour = last24Hours(now)[0] as string;
  /**
   * The head once more, at the instant the provider would be called: a
   * DELETE or a pause that committed since the first read withdraws the
   * send. The step is counted in the 24-hour window once, when it goes.
   */
  let headNow: Sequence | undefined = head;
  let counted = false;
  const stillWanted = async () => {
    headNow = await deps.sequences.get(orgId, sequenceId);
    if (headNow?.kind !== 'sequence' || headNow.status !== 'active') {
      return false;
    }
    if (!counted) {
      await deps.sendWindows.add(orgId, hour, 1);
      counted = true;
    }
    return true;
  };
  let result: SendResult;
  try {
    result = await sendPaced(
      deps,
      // One instant, on any lane: a step waits behind at most one run.
      new Slots(deps, ratePlan(await accountRate(deps)), {
        wanted: 1,
        deadline: deps.clock.now().getTime() + SENDER_BUDGET_MS,
      }),
      {
        ...mail,
        tags: emailTags({
          organization: orgId,
          kind: 'sequence',
          contact: contactId,
          sequence: sequenceId,
        }),
      },
      Date.now() + SENDER_BUDGET_MS,
      stillWanted,
    );
  } catch (error) {
    // Thrown before the provider was called (the pacer's item contended,
    // the account unreadable): sendPaced answers the provider's outcomes.
    await letGo();
    throw error;
  }
  if (result.kind === 'withdrawn') {
    // Deleted since: the claim goes with the journeys' cleanup. Paused
    // since: the step waits for the resume, like any fire while paused.
    if (headNow) {
      await deps.enrolments.update(orgId, holder, {
        ...holder,
        claim: null,
        waiting: true,
        updatedAt: deps.clock.now().toISOString(),
      });
    }
    return;
  }
  switch (result.kind) {
    case 'sent':
      await settle(deps, orgId, holder, head, now, 'sent', result.messageId);
      return;
    case 'rejected':
      await settle(deps, orgId, holder, head, now, 'failed');
      return;
    case 'paused':
      // Nothing went out: the claim is let go, the step waits.
      await hold(deps, orgId, holder, 'blocked');
      return;
    case 'throttled':
    case 'late':
      // Nothing went out: let go, and the message comes again.
      await letGo();
      throw tryLater(`Step ${position} of ${contactId} throttled`);
    default:
      // Unknown: the claim stays, and its expiry records it uncertain.
      throw tryLater(`Step ${position} of ${contactId}: outcome unknown`);
  }
};

/**
 * Writes the claim and answers the journey as stored with it. A write the
 * SDK retried after its first attempt went through answers a failed
 * condition: the journey is read again, and a claim with our owner is ours.
 */
const takeClaim = async (
  deps: StepDeps,
  orgId: string,
  journey: Enrolment,
  claimed: Enrolment,
): Promise<Enrolment> => {
  try {
    await deps.enrolments.update(orgId, journey, claimed);
    return { ...claimed, revision: journey.revision + 1 };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const stored = await deps.enrolments.get(
      orgId,
      journey.sequenceId,
      journey.contactId,
    );
    if (!stored?.claim || stored.claim.owner !== claimed.claim?.owner) {
      throw error;
    }
    return stored;
  }
};

/** Records the step's outcome and moves the journey to its next step. */
const settle = async (
  deps: StepDeps,
  orgId: string,
  journey: Enrolment,
  head: Sequence,
  now: Date,
  outcome: StepOutcome,
  messageId?: string,
): Promise<void> => {
  const version = await publishedVersion(
    deps,
    orgId,
    head.id,
    journey.versionId,
  );
  const org = await deps.organizations.get(orgId);
  const zone = org ? timeZoneOf(org) : 'UTC';
  await moveOn(
    deps,
    orgId,
    journey,
    advanced(journey, version?.nodes ?? [], now, zone, outcome, messageId),
  );
};

/**
 * Sends the steps that fell due while the sequence was paused, once each
 * (the `resume` message, a page of journeys at a time).
 */
export const resumeSequence = async (
  deps: Pick<StepDeps, 'sequences' | 'enrolments'> & {
    queues: { steps: QueueSender };
  },
  message: ResumeMessage,
): Promise<void> => {
  const { orgId, sequenceId } = message;
  const head = await deps.sequences.get(orgId, sequenceId);
  if (head?.kind !== 'sequence' || head.status !== 'active') return;
  const page = await deps.enrolments.page(orgId, sequenceId, {
    limit: JOURNEYS_PER_MESSAGE,
    waiting: true,
    ...(message.cursor ? { cursor: message.cursor } : {}),
  });
  for (const journey of page.items) {
    if (journey.status !== 'active') continue;
    const step: StepMessage = {
      kind: 'step',
      orgId,
      sequenceId,
      contactId: journey.contactId,
      position: journey.position,
    };
    await deps.queues.steps.send(step, { group: orgId });
  }
  if (page.cursor) {
    await deps.queues.steps.send(
      { ...message, cursor: page.cursor } satisfies ResumeMessage,
      { group: orgId },
    );
  }
};

/**
 * Removes a deleted sequence's journeys (the `cleanup` message): each
 * one's pending schedule is cancelled, then the journeys are deleted, a
 * page at a time until none is left. Nothing is done while the head
 * exists.
 */
export const cleanupSequence = async (
  deps: Pick<StepDeps, 'sequences' | 'enrolments' | 'scheduler'> & {
    queues: { steps: QueueSender };
  },
  message: CleanupMessage,
): Promise<void> => {
  const { orgId, sequenceId } = message;
  if (await deps.sequences.get(orgId, sequenceId)) return;
  const page = await deps.enrolments.page(orgId, sequenceId, {
    limit: JOURNEYS_PER_MESSAGE,
  });
  for (const journey of page.items) {
    if (journey.status === 'active') {
      await deps.scheduler.cancel(
        stepScheduleName(
          orgId,
          sequenceId,
          journey.contactId,
          journey.position,
        ),
      );
    }
  }
  await deps.enrolments.deleteMany(
    orgId,
    sequenceId,
    page.items.map((journey) => journey.contactId),
  );
  if (page.cursor) {
    await deps.queues.steps.send(message, { group: orgId });
  }
};
