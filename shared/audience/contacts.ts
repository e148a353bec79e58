/**
 * Application logic of contacts: add (with double opt-in), read, list,
 * update, unsubscribe, resubscribe. Agnostic to how it is called and where
 * data is stored.
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError } from '../errors.ts';
import {
  checkFieldValues,
  withFieldValues,
  withValuesApplied,
} from '../fields/values.ts';
import type { Page } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import type { ReadinessDeps } from '../sending/readiness.ts';
import { ConfirmationOutcome, sendConfirmation } from './confirmation.ts';
import type {
  AddContactInput,
  ContactQueryInput,
  UpdateContactInput,
} from './contact.schema.ts';
import { changeContact, requestStatus, withStatus } from './contact-changes.ts';
import {
  type ContactListing,
  decodeCursor,
  encodeCursor,
} from './contact-cursor.ts';
import { ContactView, contactViewOf, contactViews } from './contact-view.ts';
import { requireList } from './lists.ts';
import {
  type Contact,
  type ContactStatus,
  type List,
  withNamesGiven,
} from './model.ts';
import type { ContactPage, AudienceDeps as Deps } from './ports.ts';
import {
  followSuppression,
  SUPPRESSION_OF_STATUS,
  suppressAddress,
  suppressedStatuses,
} from './suppressed.ts';
import { checkTagCap, resolveTags, tagsWith } from './tags.ts';

const byId =
  (deps: Pick<Deps, 'contacts'>, orgId: string, contactId: string) => () =>
    deps.contacts.findById(orgId, contactId);

/**
 * Reads a contact to subscribe again: an unsubscribed one whose address is
 * suppressed (by hand, from another provider) is refused, 409
 * `contact.suppressed`. Other statuses keep their own rules.
 */
const toSubscribe =
  (
    deps: Pick<Deps, 'contacts' | 'delivery'>,
    orgId: string,
    contactId: string,
  ) =>
  async () => {
    const contact = await deps.contacts.findById(orgId, contactId);
    if (contact?.status !== 'unsubscribed') return contact;
    const suppressed = (
      await suppressedStatuses(deps, orgId, [contact.email])
    ).get(contact.email);
    if (suppressed) throw suppressedAddress(contact.email, suppressed);
    return contact;
  };

/** The answer of POST /lists/{listId}/contacts: the contact and its email. */
export const AddedContact = v.pipe(
  v.object({
    ...ContactView.entries,
    confirmation: ConfirmationOutcome,
  }),
  v.title('AddedContact'),
);
export type AddedContact = v.InferOutput<typeof AddedContact>;

/** The result of adding a contact to a list. */
export interface AddContactResult {
  /** The contact did not exist in the list (201), or it did (200). */
  created: boolean;
  contact: ContactView;
  /** What happened to the confirmation email (double opt-in only). */
  confirmation: ConfirmationOutcome;
}

/**
 * The refusal of a subscription to a suppressed address (the organization
 * lifts it first, `DELETE /suppressions/{email}`).
 */
export const suppressedAddress = (email: string, status: string) =>
  new ConflictError(
    'contact.suppressed',
    `${email} is on the organization's suppression list (its contacts are ${status}): it cannot be subscribed`,
  );

/**
 * A contact whose address is suppressed: the suppression's status, no
 * confirmation link, and no join unless it had joined before.
 */
const asSuppressed = (
  after: Contact,
  before: Contact | undefined,
  status: ContactStatus,
): Contact => {
  if (after.status === status) return after;
  if (after.status === 'bounced' || after.status === 'complained') return after;
  const { confirmationNonce: _, joinedAt: __, ...rest } = after;
  return {
    ...rest,
    status,
    ...(before?.joinedAt ? { joinedAt: before.joinedAt } : {}),
  };
};

/**
 * Adds a contact to a list, or updates the one with that email. Unlike a
 * bulk import this has effects: with double opt-in the contact is pending
 * and a confirmation email goes out; otherwise it joins the list at once.
 * A suppressed address (an SES bounce or complaint, one added to the
 * suppression list, an erased person's) is stored with the suppression's
 * status, as it was before the list existed (the spec's add is an upsert):
 * never subscribed, and no confirmation goes to it.
 */
export const addContact = async (
  // Everything but the sending setup: the confirmation only reads readiness.
  deps: Omit<Deps, 'provider' | 'dns'> & ReadinessDeps,
  orgId: string,
  listId: string,
  input: AddContactInput,
): Promise<AddContactResult> => {
  // 1. The list, the organization's opt-in rule, the tags (get-or-create).
  await requireList(deps, orgId, listId);
  await checkFieldValues(deps, orgId, input.fields);
  const suppressed = (await suppressedStatuses(deps, orgId, [input.email])).get(
    input.email,
  );
  const optin = await deps.optinSettings.get(orgId);
  const doubleOptIn = optin.required || input.doubleOptIn === true;
  // The tag cap before any write: no tag is created for a refused add.
  const existing = await deps.contacts.get(orgId, listId, input.email);
  const wanted = await tagsWith(
    deps,
    orgId,
    existing?.tagIds ?? [],
    input.tags ?? [],
  );
  checkTagCap(input.email, existing?.tagIds.length ?? 0, wanted.size, 'tags');
  const tags = await resolveTags(deps, orgId, input.tags ?? []);
  const tagIds = tags.map((t) => t.id);

  // The first attempt builds on the contact just read; a write in between
  // fails the conditional save, and the next attempt reads again.
  let firstAttempt = true;
  return retryOnConflict(async (retryable) => {
    const now = deps.clock.now().toISOString();
    const before = firstAttempt
      ? existing
      : await deps.contacts.get(orgId, listId, input.email);
    firstAttempt = false;

    // 2. New: pending with a confirmation nonce, or subscribed (joined).
    // Existing: names and tags completed; a pending one gets a fresh link,
    // or joins now when the caller waives double opt-in.
    let after: Contact = before
      ? merge(before, input, tagIds, doubleOptIn, deps.ids.id(), now)
      : {
          id: deps.ids.id(),
          listId,
          email: input.email,
          ...(input.firstName ? { firstName: input.firstName } : {}),
          ...(input.lastName ? { lastName: input.lastName } : {}),
          ...withFieldValues(undefined, input.fields),
          status: doubleOptIn ? 'pending' : 'subscribed',
          tagIds: [...new Set(tagIds)].sort(),
          optinAt: now,
          ...(input.optinIp ? { optinIp: input.optinIp } : {}),
          ...(doubleOptIn
            ? { confirmationNonce: deps.ids.id() }
            : { joinedAt: now }),
          createdAt: now,
          updatedAt: now,
          version: 0,
        };

    checkTagCap(
      input.email,
      before?.tagIds.length ?? 0,
      after.tagIds.length,
      'tags',
    );
    if (suppressed) after = asSuppressed(after, before, suppressed);

    // 3. Store conditionally; a concurrent add means: read again.
    await deps.contacts
      .save(orgId, [{ ...(before ? { before } : {}), after, origin: 'api' }])
      .catch(retryable);
    // An address suppressed while this add ran (an erasure, an SES report)
    // is read again once stored: the contact follows it, and no email
    // goes. Either the suppression's writer saw this contact, or this
    // sees the suppression.
    if (!suppressed) {
      const now = (await suppressedStatuses(deps, orgId, [input.email])).get(
        input.email,
      );
      if (now) {
        const followed = await changeContact(
          deps,
          orgId,
          () => deps.contacts.get(orgId, listId, input.email),
          (current, at) => followSuppression(current, now, at),
          'api',
        ).catch((error: unknown) => {
          // Erased meanwhile: the add runs again, after the erasure.
          if (!(error instanceof NotFoundError)) throw error;
          return retryable(
            new ConflictError(
              'contact.changed',
              'The address was erased while it was being added',
              { cause: error },
            ),
          );
        });
        return {
          created: !before,
          contact: await contactViewOf(deps, orgId, followed.after),
          confirmation: { status: 'not_required' as const },
        };
      }
    }

    // 4. A new confirmation link means a confirmation email.
    const needsEmail =
      after.status === 'pending' &&
      after.confirmationNonce !== before?.confirmationNonce;
    const confirmation = needsEmail
      ? await sendConfirmation(deps, orgId, after)
      : { status: 'not_required' as const };
    return {
      created: !before,
      contact: await contactViewOf(deps, orgId, after),
      confirmation,
    };
  });
};

/** The names a caller with a key gave (an empty one gives nothing). */
const namesIn = (input: { firstName?: string; lastName?: string }) =>
  (['firstName', 'lastName'] as const).filter((name) => input[name]);

const merge = (
  before: Contact,
  input: AddContactInput,
  tagIds: string[],
  doubleOptIn: boolean,
  nonce: string,
  now: string,
): Contact => {
  const merged: Contact = withValuesApplied(
    {
      ...withNamesGiven(before, namesIn(input)),
      ...(input.firstName ? { firstName: input.firstName } : {}),
      ...(input.lastName ? { lastName: input.lastName } : {}),
      tagIds: [...new Set([...before.tagIds, ...tagIds])].sort(),
      updatedAt: now,
    },
    before.fields,
    input.fields,
  );
  if (before.status !== 'pending') return merged;
  return doubleOptIn
    ? { ...merged, confirmationNonce: nonce }
    : withStatus(merged, 'subscribed', now);
};

/** One contact with its tags; 404 for a missing one or another's. */
export const getContact = async (
  deps: Pick<Deps, 'contacts' | 'tags'>,
  orgId: string,
  contactId: string,
): Promise<ContactView> => {
  const contact = await deps.contacts.findById(orgId, contactId);
  if (!contact) {
    throw new NotFoundError('contact.notFound', `No contact ${contactId}`);
  }
  return contactViewOf(deps, orgId, contact);
};

/**
 * A page of a list's contacts, by email, filtered by status, tag and a
 * search in email and names. Totals come from counters where they can: the
 * list's (no filter, a status), the tag's per list (a tag alone, read
 * through the tag index). A search, or a tag with a status, counts its
 * matches, reading at most `CONTACT_SCAN_BUDGET` contacts per call; when it
 * stops there, `totalExact` is false and the cursor resumes the reading.
 */
export const listContacts = async (
  deps: Pick<Deps, 'contacts' | 'tags' | 'lists'>,
  orgId: string,
  query: ContactQueryInput,
  /**
   * A segment of the list on top of the filters: its matches are counted
   * as a search's are (its id binds the cursor to it).
   */
  segment?: { id: string; matches: (contact: Contact) => boolean },
): Promise<Page<ContactView>> => {
  const listing = listingOfQuery({
    ...query,
    ...(segment ? { segmentId: segment.id } : {}),
  });
  const position = query.cursor
    ? decodeCursor(listing, query.cursor)
    : undefined;
  const list = await requireList(deps, orgId, query.listId);
  const number = position?.page ?? query.page;
  const knownTotal = segment
    ? undefined
    : await countedTotal(deps, orgId, list, query);
  // A tag of another organization (or none) matches nothing.
  if (knownTotal === null) {
    return { total: 0, items: [], page: number, nextCursor: null };
  }
  const request = { page: query.page, limit: query.limit };
  const found = await deps.contacts.page(
    orgId,
    query.listId,
    {
      ...(query.status ? { status: query.status } : {}),
      ...(query.tagId ? { tagId: query.tagId } : {}),
      ...(query.search ? { search: query.search } : {}),
      ...(segment ? { matches: segment.matches } : {}),
    },
    request,
    knownTotal,
    position,
  );
  // The matches ahead of this page's first item.
  const ahead = position ? position.before : (query.page - 1) * query.limit;
  return {
    total: found.total,
    items: await contactViews(deps, orgId, found.items),
    page: number,
    nextCursor: nextCursorAfter(listing, found, number, ahead),
    ...(knownTotal === undefined
      ? { totalExact: found.exact }
      : // A tag with a status said whether its total was exact: it is.
        query.tagId && query.status
        ? { totalExact: true }
        : {}),
  };
};

/**
 * The total a counter gives for this query: the list's (no filter, a
 * status), the tag's in the list (a tag alone; null when the organization
 * has no such tag), or undefined when the matches must be counted.
 */
const countedTotal = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  list: List,
  query: ContactQueryInput,
): Promise<number | null | undefined> => {
  if (query.search) return undefined;
  if (query.tagId) {
    // Per tag and list, the counters keep all carriers and subscribed ones.
    if (query.status && query.status !== 'subscribed') return undefined;
    return (
      (await deps.tags.countInList(orgId, query.tagId, list.id, {
        subscribed: query.status === 'subscribed',
      })) ?? null
    );
  }
  return query.status ? list.statusCounts[query.status] : list.contactCount;
};

/**
 * The cursor after a page: after its last item while matches remain; after
 * the last email read when a counted listing stopped at its budget with
 * the page unfilled; null at the end.
 */
const nextCursorAfter = (
  listing: ContactListing,
  found: ContactPage,
  page: number,
  ahead: number,
): string | null => {
  const last = found.items.at(-1);
  const through = ahead + found.items.length;
  if (last && found.items.length === listing.limit) {
    if (through < found.total || !found.exact) {
      return encodeCursor(listing, last.email, page + 1, through);
    }
    return null;
  }
  return found.scannedThrough === undefined
    ? null
    : encodeCursor(listing, found.scannedThrough, page + 1, found.total);
};

/** What a cursor of this query must belong to. */
export const listingOfQuery = (query: {
  listId?: string | undefined;
  segmentId?: string | undefined;
  status?: string | undefined;
  tagId?: string | undefined;
  search?: string | undefined;
  limit: number;
}): ContactListing => ({
  limit: query.limit,
  ...(query.listId ? { listId: query.listId } : {}),
  ...(query.segmentId ? { segmentId: query.segmentId } : {}),
  ...(query.status ? { status: query.status } : {}),
  ...(query.tagId ? { tagId: query.tagId } : {}),
  ...(query.search ? { search: query.search } : {}),
});

/**
 * Changes a contact's names (null clears) or status (per `withStatus`). A
 * status of `bounced` or `complained` set by hand suppresses the address in
 * the organization, as an SES report or an import saying so does.
 */
export const updateContact = async (
  deps: Pick<
    Deps,
    'contacts' | 'tags' | 'clock' | 'delivery' | 'lists' | 'fields'
  >,
  orgId: string,
  contactId: string,
  input: UpdateContactInput,
): Promise<ContactView> => {
  await checkFieldValues(deps, orgId, input.fields);
  const { after } = await changeContact(
    deps,
    orgId,
    input.status === 'subscribed'
      ? toSubscribe(deps, orgId, contactId)
      : byId(deps, orgId, contactId),
    (contact, now) => {
      const named: Contact = {
        ...withNamesGiven(
          contact,
          (['firstName', 'lastName'] as const).filter(
            (field) => input[field] !== undefined,
          ),
        ),
        updatedAt: now,
      };
      for (const field of ['firstName', 'lastName'] as const) {
        const value = input[field];
        if (value === null || value === '') delete named[field];
        else if (value !== undefined) named[field] = value;
      }
      const valued = withValuesApplied(named, contact.fields, input.fields);
      return input.status ? requestStatus(valued, input.status, now) : valued;
    },
    'api',
  );
  const reason = SUPPRESSION_OF_STATUS[after.status];
  if (input.status && reason) {
    await suppressAddress(deps, orgId, {
      email: after.email,
      reason,
      at: after.updatedAt,
      source: 'api',
    });
  }
  return contactViewOf(deps, orgId, after);
};

/** Unsubscribes a contact; unsubscribing twice changes nothing. */
export const unsubscribeContact = async (
  deps: Pick<Deps, 'contacts' | 'tags' | 'clock'>,
  orgId: string,
  contactId: string,
): Promise<ContactView> => {
  const { after } = await changeContact(
    deps,
    orgId,
    byId(deps, orgId, contactId),
    (contact, now) => withStatus(contact, 'unsubscribed', now),
    'api',
  );
  return contactViewOf(deps, orgId, after);
};

/**
 * Subscribes an unsubscribed contact again. A pending contact must confirm,
 * a bounced or complained address cannot come back, and a suppressed
 * address is not subscribed while it is: all answer 409.
 */
export const resubscribeContact = async (
  deps: Pick<Deps, 'contacts' | 'tags' | 'clock' | 'delivery'>,
  orgId: string,
  contactId: string,
): Promise<ContactView> => {
  const { after } = await changeContact(
    deps,
    orgId,
    toSubscribe(deps, orgId, contactId),
    (contact, now) => requestStatus(contact, 'subscribed', now),
    'api',
  );
  return contactViewOf(deps, orgId, after);
};
