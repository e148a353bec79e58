/**
 * The cursor of GET /contacts: where the next page starts, so a client
 * walking a list pays per page (page numbers need the items before the
 * page read again). Opaque to clients: base64url of the email the next
 * page starts after, the next page's number, the matches before it (a
 * counted listing's total goes on from there), and the listing it belongs
 * to (list, segment, filters, limit), so a cursor used with other filters is refused rather
 * than silently mixing listings. It carries nothing secret: every read is
 * still scoped to the caller's organization and list.
 */
import * as v from 'valibot';
import { ValidationError } from '../errors.ts';

/** What a listing is, as far as its cursor is concerned. */
export interface ContactListing {
  listId?: string;
  segmentId?: string;
  status?: string;
  tagId?: string;
  search?: string;
  limit: number;
}

const Decoded = v.object({
  a: v.pipe(v.string(), v.minLength(1), v.maxLength(320)),
  p: v.pipe(v.number(), v.safeInteger(), v.minValue(2)),
  b: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0)), 0),
  l: v.string(),
});

/** The listing's identity inside a cursor. */
const listingOf = (listing: ContactListing): string =>
  JSON.stringify([
    listing.listId ?? '',
    listing.segmentId ?? '',
    listing.status ?? '',
    listing.tagId ?? '',
    listing.search?.toLowerCase() ?? '',
    listing.limit,
  ]);

/**
 * The cursor of the page that starts after `lastEmail`, numbered
 * `nextPage`, with `before` matches ahead of it.
 */
export const encodeCursor = (
  listing: ContactListing,
  lastEmail: string,
  nextPage: number,
  before = 0,
): string =>
  Buffer.from(
    JSON.stringify({
      a: lastEmail,
      p: nextPage,
      b: before,
      l: listingOf(listing),
    }),
  ).toString('base64url');

const invalid = (message: string) =>
  new ValidationError(`Invalid request: cursor: ${message}`, [
    { field: 'cursor', message },
  ]);

/**
 * Reads a cursor of this listing: the email the page starts after, its
 * number and the matches before it. 400 naming `cursor` for a malformed one or one of another
 * listing (other filters or limit).
 */
export const decodeCursor = (
  listing: ContactListing,
  cursor: string,
): { after: string; page: number; before: number } => {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor this API gave');
  }
  const parsed = v.safeParse(Decoded, decoded);
  if (!parsed.success) throw invalid('is not a cursor this API gave');
  if (parsed.output.l !== listingOf(listing)) {
    throw invalid(
      'belongs to another listing: keep the filters and limit of the call that gave it',
    );
  }
  return {
    after: parsed.output.a,
    page: parsed.output.p,
    before: parsed.output.b,
  };
};
