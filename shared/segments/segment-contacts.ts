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
import type { ContactView } from '../audience/contact-view.ts';
import { listContacts } from '../audience/contacts.ts';
import { requireList } from '../audience/lists.ts';
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
          'Only the contacts the segment matches (counted as a search is: at most 5,000 contacts read per call, `totalExact` false past that)',
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

/**
 * A page of contacts, by email. With `segmentId`: the contacts of the
 * segment's list it matches, counted as a search's matches are (at most
 * `CONTACT_SCAN_BUDGET` contacts read per call; past it `totalExact` is
 * false and the cursor resumes the reading); a `listId` that is not the
 * segment's answers 400 `segment.listMismatch`. `status`, `tagId` and
 * `search` combine with the segment (AND).
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
  // 2. The list's contacts the segment matches, counted as a search is:
  // at most the read budget per call, the cursor resuming the reading.
  return listContacts(
    deps,
    orgId,
    { ...rest, listId: segment.listId } satisfies ContactQueryInput,
    { id: segment.id, matches: (contact) => matchesSegment(segment, contact) },
  );
};
