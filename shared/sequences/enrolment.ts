/**
 * Enrolment, from the committed facts (the table's stream): a contact who
 * joins a list or receives a tag enters each active sequence with that
 * trigger, on its published version, unless it was ever enrolled there (a
 * conditional put: a repeated fact is a no-op; an ended journey never
 * restarts), and its first step is scheduled.
 *
 * The `contacts` stream consumer loads this and what it imports: sending a
 * step (`run-step.ts`, the send path, the rendering engine) stays out.
 */
import type { AudienceEvent } from '../audience/events.ts';
import type { Contact } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import { logger } from '../observability.ts';
import { timeZoneOf } from '../organizations/model.ts';
import type { Enrolment, Sequence } from './model.ts';
import type { SequencesDeps } from './ports.ts';
import { publishedVersion } from './published-versions.ts';
import {
  nextSendStep,
  type ScheduleStepDeps,
  scheduleStep,
  stepDueAt,
} from './step-schedule.ts';

/** What enrolment needs. */
export type EnrolDeps = ScheduleStepDeps &
  Pick<SequencesDeps, 'enrolments'> &
  Pick<AudienceDeps, 'contacts'>;

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
    dueAt: stepDueAt(new Date(event.at), first, zone).toISOString(),
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
