/**
 * Running one step of a journey (the `step` message, its schedule's fire):
 * it re-reads the head, the journey and the contact; the step is sent
 * through the campaign send path's pieces (guards, quota, suppression,
 * composer, pacer, tags); then the journey advances and its next step is
 * scheduled.
 *
 * - At most once: the journey is claimed for the step (a write conditional
 *   on its revision) just before the provider is called, after every read
 *   and the composing. A duplicate fire or redelivery finds the position
 *   moved on, or the claim held; a claim that expired without an outcome
 *   (the consumer died while the provider was called) is never sent
 *   again: the step is recorded `uncertain` and the journey goes on.
 * - Paused: a fire marks the journey waiting and sends nothing; the
 *   resume (`resume-and-cleanup.ts`) sends each waiting step once.
 * - Deleted: no step goes out once the head is gone.
 */
import type { Contact } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import { AppError, ConflictError } from '../errors.ts';
import { accountRate } from '../mail/account.ts';
import { composeMessage } from '../mail/compose.ts';
import { last24Hours, quotaLeft, stopReason } from '../mail/guards.ts';
import {
  ratePlan,
  SENDER_BUDGET_MS,
  type SendResult,
  Slots,
  sendPaced,
} from '../mail/pacing.ts';
import type { MailDeps } from '../mail/ports.ts';
import { emailTags } from '../mail/tags.ts';
import { logger } from '../observability.ts';
import { timeZoneOf } from '../organizations/model.ts';
import type { CoreDeps, OutgoingMessage } from '../ports.ts';
import { type ReadinessDeps, sendingStateOf } from '../sending/readiness.ts';
import type {
  Enrolment,
  ExitReason,
  Sequence,
  SequenceNode,
  StepHoldReason,
  StepOutcome,
} from './model.ts';
import type { SequencesDeps } from './ports.ts';
import { publishedVersion } from './published-versions.ts';
import {
  nextSendStep,
  type ScheduleStepDeps,
  type StepMessage,
  scheduleStep,
  stepDueAt,
} from './step-schedule.ts';

/**
 * How long a claimed step is held: longer than the consumer may run, so
 * a live consumer is never overtaken; an expired claim means it died.
 */
export const STEP_LEASE_MS = 15 * 60_000;

/** How long a step that cannot go out now waits before it is tried again. */
export const HOLD_RETRY_MS = 60 * 60_000;

/**
 * What a step needs: the journey's stores and the campaign send path (the
 * fields: what its content merges, read once per step if it reads them).
 */
export type StepDeps = ScheduleStepDeps &
  Pick<SequencesDeps, 'enrolments' | 'ids' | 'topics'> &
  Pick<AudienceDeps, 'contacts' | 'delivery' | 'fields'> &
  ReadinessDeps &
  MailDeps &
  Pick<CoreDeps, 'links' | 'endpoints'>;

/** Thrown to try a step again later: the message is retried. */
const tryLater = (text: string) => new ConflictError('sequence.changed', text);

/**
 * The number of the email at `position` among its version's nodes: 1 for
 * the first send_email node, and so on (as a series numbers its steps).
 */
export const stepNumberOf = (
  nodes: readonly SequenceNode[],
  position: number,
): number =>
  nodes.slice(0, position + 1).filter((node) => node.type === 'send_email')
    .length;

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
          dueAt: stepDueAt(now, next, zone).toISOString(),
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
          step: stepNumberOf(version?.nodes ?? [], position),
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
