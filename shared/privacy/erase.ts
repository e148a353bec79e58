/**
 * Erasure of a person (GDPR Art. 17): everything the organization holds
 * under one address goes — its contacts in every list, their tag index
 * entries, topic opt-outs, journeys with their pending steps, sign-up
 * counters and marks, the address on campaign recipients — while what must
 * survive survives without it: the suppression (kept under the address's
 * keyed hash, so the address is never mailed again by a later import),
 * campaign statistics as counts, and an audit record of the erasure.
 *
 * A person is one address across lists, so an erasure named by a contact
 * id erases its address in the whole organization. An address the
 * organization holds nothing about (no contact, no declined topic, no
 * suppression) is 404 `person.notFound`, alike for another organization's.
 * Each step is idempotent: an erasure cut short is completed by erasing
 * the address again (its suppression, kept, still names it). A send walking the list at the address right now makes it 409
 * (`erasure.sendRunning`) before anything is changed: a retry a minute
 * later passes.
 */
import type { Caller } from '../access/model.ts';
import { allActivityOf } from '../activity/listing.ts';
import type { ActivityDeps } from '../activity/ports.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import type { CampaignsDeps } from '../campaigns/ports.ts';
import type { DeliveryRepository } from '../delivery/ports.ts';
import { NotFoundError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import type { SequencesDeps } from '../sequences/ports.ts';
import { stepScheduleName } from '../sequences/step-schedule.ts';
import type { SignupLimits, SignupPageRepository } from '../signup/ports.ts';
import type { TopicsDeps } from '../topics/ports.ts';
import { normalizeEmail } from '../validation.ts';
import type { Erasure, ErasuresDeps, ErasureTarget } from './erasure-ports.ts';

/** What an erasure reaches. */
export type EraseDeps = Pick<ErasuresDeps, 'erasures' | 'clock' | 'ids'> &
  Pick<AudienceDeps, 'contacts'> & {
    delivery: Pick<
      DeliveryRepository,
      'suppressions' | 'forgetAddress' | 'forgetMessages'
    >;
  } & Pick<TopicsDeps, 'topics'> &
  Pick<SequencesDeps, 'sequences' | 'enrolments'> &
  Pick<CampaignsDeps, 'campaigns' | 'sends'> &
  Pick<ActivityDeps, 'activity'> &
  SchedulingDeps & {
    signupPages: Pick<SignupPageRepository, 'all'>;
    signupLimits: Pick<SignupLimits, 'forgetAddress'>;
  };

/** Whom to erase: a contact (its address) or an address. */
export type ErasureSubject = { contactId: string } | { email: string };

/** Pages read at a time when walking an organization's collections. */
const PAGE = 100;

/** Every item of a page-numbered collection. */
const everyPage = async <T>(
  read: (page: number) => Promise<{ items: T[]; total: number }>,
): Promise<T[]> => {
  const all: T[] = [];
  for (let page = 1; ; page++) {
    const { items, total } = await read(page);
    all.push(...items);
    if (items.length < PAGE || all.length >= total) return all;
  }
};

/** The address a subject names; a contact of another organization is unknown. */
const addressOf = async (
  deps: Pick<EraseDeps, 'contacts'>,
  orgId: string,
  subject: ErasureSubject,
): Promise<{ email: string; target: ErasureTarget }> => {
  if ('email' in subject) {
    return { email: normalizeEmail(subject.email), target: 'email' };
  }
  const contact = await deps.contacts.findById(orgId, subject.contactId);
  if (!contact) {
    throw new NotFoundError(
      'contact.notFound',
      `Contact ${subject.contactId} not found`,
    );
  }
  return { email: contact.email, target: 'contact' };
};

/** The campaigns whose sends may hold the address: those that sent. */
const sentCampaignIds = async (
  deps: Pick<EraseDeps, 'campaigns'>,
  orgId: string,
): Promise<string[]> => {
  const ids: string[] = [];
  for (const status of ['sending', 'sent', 'failed'] as const) {
    const found = await everyPage((page) =>
      deps.campaigns.page(orgId, { status }, { page, limit: PAGE }),
    );
    ids.push(...found.map((campaign) => campaign.id));
  }
  return ids;
};

/**
 * Ends the contacts' journeys: each pending step's schedule cancelled, then
 * the journeys deleted (a step firing late finds none and does nothing).
 */
const forgetJourneys = async (
  deps: Pick<EraseDeps, 'sequences' | 'enrolments' | 'scheduler'>,
  orgId: string,
  contactIds: readonly string[],
): Promise<number> => {
  if (contactIds.length === 0) return 0;
  const sequences = await everyPage((page) =>
    deps.sequences.page(orgId, 'sequence', { page, limit: PAGE }),
  );
  let ended = 0;
  for (const sequence of sequences) {
    const journeys = (
      await Promise.all(
        contactIds.map((contactId) =>
          deps.enrolments.get(orgId, sequence.id, contactId),
        ),
      )
    ).filter((journey) => journey !== undefined);
    for (const journey of journeys.filter((j) => j.status === 'active')) {
      await deps.scheduler.cancel(
        stepScheduleName(
          orgId,
          sequence.id,
          journey.contactId,
          journey.position,
        ),
      );
    }
    await deps.enrolments.deleteMany(
      orgId,
      sequence.id,
      journeys.map((journey) => journey.contactId),
    );
    ended += journeys.length;
  }
  return ended;
};

/**
 * Removes every contact of the address, each with its counters in one
 * transaction; a contact changed meanwhile is read again.
 */
const removeContacts = async (
  deps: Pick<EraseDeps, 'contacts'>,
  orgId: string,
  email: string,
): Promise<string[]> => {
  const removed: string[] = [];
  await retryOnConflict(async (retryable) => {
    for (const contact of await deps.contacts.ofAddress(orgId, email)) {
      await deps.contacts.remove(orgId, contact).catch(retryable);
      removed.push(contact.id);
    }
  });
  return removed;
};

/** Erases a person from the organization and records it. */
export const erasePerson = async (
  deps: EraseDeps,
  caller: Caller,
  subject: ErasureSubject,
): Promise<Erasure> => {
  const { orgId } = caller;
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) recorded it: that
  // one (its contacts are gone by now, so it is looked for first).
  const earlier = deps.ids.rerun
    ? await deps.erasures.get(orgId, id)
    : undefined;
  if (earlier) return earlier;
  const { email, target } = await addressOf(deps, orgId, subject);
  const [before, declined, suppressed] = await Promise.all([
    deps.contacts.ofAddress(orgId, email),
    deps.topics.declinedBy(orgId, email),
    deps.delivery.suppressions(orgId, [email]),
  ]);
  // Nothing held: the same answer as for another organization's address,
  // and nothing written.
  if (before.length === 0 && declined.length === 0 && suppressed.size === 0) {
    throw new NotFoundError(
      'person.notFound',
      'The organization holds nothing about this address',
    );
  }
  const contactIds = before.map((contact) => contact.id);

  // 1. Sends first: a running one at the address stops the erasure here.
  const campaignItems = await deps.sends.forgetAddress(
    orgId,
    await sentCampaignIds(deps, orgId),
    contactIds,
    email,
  );
  // 2. The suppression first, under the address key alone: an add racing
  //    this erasure either stores its contact before the contacts are
  //    read below (and it goes with them) or sees the suppression once
  //    stored (and keeps it unsubscribed, as an add after the erasure).
  const suppressionItems = await deps.delivery.forgetAddress(
    orgId,
    email,
    deps.clock.now().toISOString(),
  );
  // 3. The address's choices, while its contacts still count them.
  const topicOptOuts = await deps.topics.forgetAddress(orgId, email);
  // 4. Journeys, so no step is sent to a contact about to go.
  let journeys = await forgetJourneys(deps, orgId, contactIds);
  // 5. The contacts, their counters with them (the stream drops their
  //    tag index entries and their activity again); then the records of
  //    mail other than campaigns' (they name the recipient), found by the
  //    messages their activity names, and the activity itself.
  const removed = await removeContacts(deps, orgId, email);
  // A contact added meanwhile may have been enrolled: its journeys too.
  journeys += await forgetJourneys(
    deps,
    orgId,
    removed.filter((id) => !contactIds.includes(id)),
  );
  let activityItems = 0;
  let messageItems = 0;
  for (const contactId of new Set([...contactIds, ...removed])) {
    const events = await allActivityOf(deps, orgId, contactId);
    messageItems += await deps.delivery.forgetMessages(
      orgId,
      events.flatMap(({ message }) =>
        message && message.kind !== 'campaign' ? [message.id] : [],
      ),
    );
    activityItems += await deps.activity.forget(orgId, contactId);
  }
  // 6. Sign-up counters and confirmation marks.
  const pages = await deps.signupPages.all(orgId);
  const signupItems = await deps.signupLimits.forgetAddress(
    orgId,
    email,
    pages.map((page) => page.id),
  );

  const erasure: Erasure = {
    id,
    erasedAt: deps.clock.now().toISOString(),
    erasedBy: { keyId: caller.keyId, userId: caller.userId },
    target,
    contacts: removed.length,
    contactIds: removed,
    journeys,
    topicOptOuts,
    items:
      campaignItems +
      topicOptOuts +
      journeys +
      removed.length * 2 +
      signupItems +
      activityItems +
      messageItems +
      suppressionItems,
  };
  await deps.erasures.record(orgId, erasure);
  return erasure;
};

/** One erasure record of the organization. */
export const getErasure = async (
  deps: Pick<ErasuresDeps, 'erasures'>,
  orgId: string,
  erasureId: string,
): Promise<Erasure> => {
  const found = await deps.erasures.get(orgId, erasureId);
  if (!found) {
    throw new NotFoundError('erasure.notFound', `No erasure ${erasureId}`);
  }
  return found;
};

/** The organization's erasures, newest first. */
export const listErasures = (
  deps: Pick<ErasuresDeps, 'erasures'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<Erasure>> => deps.erasures.page(orgId, request);
