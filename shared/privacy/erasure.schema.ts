/**
 * Schemas of erasure: the request naming the address, and the audit
 * record an erasure answers with and keeps.
 */
import * as v from 'valibot';
import { EmailAddress, Timestamp, ViewId } from '../validation.ts';
import { ERASURE_TARGETS, type Erasure } from './erasure-ports.ts';

/**
 * `POST /erasures`: the address to erase. In a body, not in a URL: a path
 * or query string is written to access logs, a body is not.
 */
export const EraseBody = v.object({
  email: v.pipe(
    EmailAddress,
    v.description(
      'The address (trimmed and lower-cased, as contacts keep it) to erase in every list of the organization',
    ),
  ),
});

const Count = (description: string) =>
  v.pipe(v.number(), v.integer(), v.minValue(0), v.description(description));

/** The audit record of one erasure, as the API shows it. */
export const ErasureView = v.pipe(
  v.object({
    id: ViewId,
    erasedAt: Timestamp,
    erasedBy: v.pipe(
      v.object({ keyId: ViewId, userId: ViewId }),
      v.description('The API key that erased, and the user who holds it'),
    ),
    target: v.pipe(
      v.picklist(ERASURE_TARGETS),
      v.description(
        'How the person was named: `contact` (`POST /contacts/{contactId}/erase`) or `email` (`POST /erasures`); the address itself is never kept',
      ),
    ),
    contacts: Count('Contacts deleted: one per list that held the address'),
    contactIds: v.pipe(
      v.array(ViewId),
      v.description(
        'The ids of the contacts deleted (they name nothing any more): what a system that kept them, from webhooks say, erases on its side. Empty in records older than the field',
      ),
    ),
    journeys: Count(
      'Journeys through sequences deleted, their pending steps cancelled',
    ),
    topicOptOuts: Count('Topic opt-outs deleted'),
    items: Count(
      'Items deleted or stripped of the address by the erasure itself (contacts and their id pointers, journeys, opt-outs, recipient records of campaigns, sign-up counters, the suppression)',
    ),
  }),
  v.title('Erasure'),
);
export type ErasureView = v.InferOutput<typeof ErasureView>;

/** The view of a stored erasure record. */
export const erasureView = (erasure: Erasure): ErasureView => ({
  id: erasure.id,
  erasedAt: erasure.erasedAt,
  erasedBy: erasure.erasedBy,
  target: erasure.target,
  contacts: erasure.contacts,
  contactIds: erasure.contactIds,
  journeys: erasure.journeys,
  topicOptOuts: erasure.topicOptOuts,
  items: erasure.items,
});
