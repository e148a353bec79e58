/**
 * The cursor of GET /contacts: where the next page starts, so a client
 * walking a list pays per page (page numbers need the items before the
 * page read again). Opaque to clients: base64url of the last email shown,
 * the next page's number, and the listing it belongs to (list, segment,
 * filters, limit), so a cursor used with other filters is refused rather
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
  p: v.pipe(v.number(), v.integer(), v.minValue(2)),
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

/** The cursor of the page after the one ending at `lastEmail`. */
export const encodeCursor = (
  listing: ContactListing,
  lastEmail: string,
  nextPage: number,
): string =>
  Buffer.from(
    JSON.stringify({ a: lastEmail, p: nextPage, l: listingOf(listing) }),
  ).toString('base64url');

const invalid = (message: string) =>
  new ValidationError(`Invalid request: cursor: ${message}`, [
    { field: 'cursor', message },
  ]);

/**
 * Reads a cursor of this listing: the email the page starts after and its
 * number. 400 naming `cursor` for a malformed one or one of another
 * listing (other filters or limit).
 */
export const decodeCursor = (
  listing: ContactListing,
  cursor: string,
): { after: string; page: number } => {
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
  return { after: parsed.output.a, page: parsed.output.p };
};
