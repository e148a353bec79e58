/**
 * `GET /contacts` with a segment: the contacts of the segment's list that
 * it matches, with the listing's other filters on top. Without a segment it
 * is the audience's own listing, unchanged. Agnostic to how it is called
 * and where data is stored.
 */
import * as v from 'valibot';
import {
  ContactQuery,
  type ContactQueryInput,
} from '../audience/contact.schema.ts';
import { decodeCursor } from '../audience/contact-cursor.ts';
import { type ContactView, contactViews } from '../audience/contact-view.ts';
import {
  listContacts,
  listingOfQuery,
  nextCursorOf,
} from '../audience/contacts.ts';
import { requireList } from '../audience/lists.ts';
import type { Contact } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import type { Page } from '../ports.ts';
import { Id } from '../validation.ts';
import { matchesSegment } from './evaluate.ts';
import type { SegmentsDeps } from './ports.ts';
import { requireSegment, requireSegmentOfList } from './segments.ts';

/**
 * Query of GET /contacts: the audience's filters, and `segmentId`. With a
 * segment, `listId` may be left out (the segment names its list); one of
 * the two is required.
 */
export const ContactListingQuery = v.pipe(
  v.object({
    ...ContactQuery.entries,
    listId: v.optional(ContactQuery.entries.listId),
    segmentId: v.optional(
      v.pipe(
        Id,
        v.description(
          'Only the contacts the segment matches (its list is read whole)',
        ),
      ),
    ),
  }),
  v.forward(
    v.check(
      (query) => query.listId !== undefined || query.segmentId !== undefined,
      // Worded as any missing field; the route's description says more.
      'is required',
    ),
    ['listId'],
  ),
);
export type ContactListingQueryInput = v.InferOutput<
  typeof ContactListingQuery
>;

/** Whether a contact passes the listing's own filters (status, tag, search). */
const passesFilters = (query: ContactListingQueryInput, contact: Contact) => {
  if (query.status && contact.status !== query.status) return false;
  if (query.tagId && !contact.tagIds.includes(query.tagId)) return false;
  if (query.search) {
    // The audience's own haystack: email and names joined by spaces.
    const haystack = [contact.email, contact.firstName, contact.lastName]
      .filter(Boolean)
      .join(' ')
      .toLowerCase();
    if (!haystack.includes(query.search.toLowerCase())) return false;
  }
  return true;
};

/**
 * A page of contacts, by email. With `segmentId`: the segment's list is
 * read whole (its matches are counted for the total) and only the page is
 * kept; a `listId` that is not the segment's answers 400
 * `segment.listMismatch`. `status`, `tagId` and `search` combine with the
 * segment (AND).
 */
export const listContactsOf = async (
  deps: Pick<AudienceDeps, 'contacts' | 'tags' | 'lists'> &
    Pick<SegmentsDeps, 'segments'>,
  orgId: string,
  query: ContactListingQueryInput,
): Promise<Page<ContactView>> => {
  const { segmentId, listId, ...rest } = query;
  if (segmentId === undefined) {
    return listContacts(deps, orgId, {
      ...rest,
      listId: listId as string,
    } satisfies ContactQueryInput);
  }
  // 1. The list named (if any), then the segment, which must be over it.
  if (listId !== undefined) await requireList(deps, orgId, listId);
  const segment =
    listId === undefined
      ? await requireSegment(deps, orgId, segmentId)
      : await requireSegmentOfList(deps, orgId, segmentId, listId);
  // 2. Walk the list (in email order): keep the page, count every match.
  const listing = listingOfQuery(query);
  const position = query.cursor
    ? decodeCursor(listing, query.cursor)
    : undefined;
  const number = position?.page ?? query.page;
  let offset = position ? 0 : (query.page - 1) * query.limit;
  const items: Contact[] = [];
  let total = 0;
  for await (const contacts of deps.segments.contactsOfList(
    orgId,
    segment.listId,
  )) {
    for (const contact of contacts) {
      if (!matchesSegment(segment, contact)) continue;
      if (!passesFilters(query, contact)) continue;
      // After a cursor, the page starts at the first match past its email.
      if (position && contact.email <= position.after) offset = total + 1;
      if (total >= offset && total < offset + query.limit) items.push(contact);
      total++;
    }
  }
  return {
    total,
    items: await contactViews(deps, orgId, items),
    page: number,
    nextCursor: nextCursorOf(listing, items, number, total),
  };
};
