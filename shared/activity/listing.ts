/**
 * Reading a contact's activity: `GET /contacts/{contactId}/activity`,
 * newest first, walked by cursor. A page costs what it returns: one Query
 * of the contact's events up to the page's limit (and the contact's id
 * pointer, the tenancy check every contact read makes). No total is
 * counted: `total` counts the events up to this page, exact on the last.
 *
 * The cursor is opaque to clients, as the contacts listing's: base64url of
 * the last event shown, the next page's number, the events before it, and
 * the listing it belongs to (contact and limit), so a cursor of another
 * contact or limit is refused rather than silently read. It carries
 * nothing secret: every read is scoped to the caller's organization and
 * the contact in the path.
 */
import * as v from 'valibot';
import { ConsentView } from '../audience/contact-view.ts';
import { CONTACT_WRITE_PATHS } from '../audience/model.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { Page } from '../ports.ts';
import { MAX_PAGE_SIZE, Timestamp, ViewId } from '../validation.ts';
import {
  ACTIVITY_MESSAGE_KINDS,
  type ActivityEvent,
  BOUNCE_TYPES,
  CONTACT_ACTIVITY_TYPES,
  MAIL_ACTIVITY_TYPES,
} from './model.ts';
import type { ActivityDeps, ActivityRepository } from './ports.ts';

const positiveInt = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'limit must be a positive integer'),
  v.transform(Number),
  v.minValue(1, 'limit must be at least 1'),
  v.maxValue(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`),
);

/** `?limit=&cursor=` of GET /contacts/{contactId}/activity. */
export const ActivityQuery = v.object({
  limit: v.optional(positiveInt, '20'),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1024, 'is not a cursor this API gave'),
    ),
  ),
});
export type ActivityQueryInput = v.InferOutput<typeof ActivityQuery>;

const FieldValueView = v.nullable(
  v.union([v.string(), v.number(), v.boolean()]),
);

/** One event as the API shows it: every field present, null when unset. */
export const ActivityView = v.pipe(
  v.object({
    id: v.pipe(
      v.string(),
      v.description(
        'Unique in the contact’s activity: its instant, then what it comes from',
      ),
    ),
    type: v.pipe(
      v.picklist([...CONTACT_ACTIVITY_TYPES, ...MAIL_ACTIVITY_TYPES]),
      v.description(
        [
          'What happened. To the contact (from its writes):',
          '- `subscribed`: it entered `subscribed`, other than by its confirmation link;',
          '- `signed_up`: it asked to subscribe and awaits its confirmation (it became `pending`, or a hosted page recorded a new consent);',
          '- `confirmed`: its confirmation link subscribed it;',
          '- `unsubscribed`: it entered `unsubscribed`;',
          '- `suppressed`: it entered `bounced` or `complained` (`status`);',
          '- `tagged`, `untagged`: it gained or lost a tag (`tagId`);',
          '- `fields_changed`: custom field values changed (`changes`).',
          'To a message sent to it (from SES’s events; `message`):',
          '- `sent`, `delivered`, `delayed`, `rejected`, `opened`, `clicked` (`link`), `bounced` (`bounceType`), `complained`.',
        ].join('\n'),
      ),
    ),
    at: Timestamp,
    via: v.pipe(
      v.nullable(v.picklist(CONTACT_WRITE_PATHS)),
      v.description(
        'How an event of the contact came: `api` (a call with a key), `import` (a bulk import), `form` (a hosted sign-up page), `confirmation` (the confirmation link), `link` (the unsubscribe page of an email’s link), `one_click` (a mail client’s one-click unsubscribe, RFC 8058), `delivery` (a bounce or complaint SES reported); null for a mail event',
      ),
    ),
    status: v.pipe(
      v.nullable(v.picklist(['bounced', 'complained'])),
      v.description('The status a `suppressed` event entered'),
    ),
    tagId: v.pipe(
      v.nullable(ViewId),
      v.description('The tag of `tagged` and `untagged` (see /tags)'),
    ),
    changes: v.pipe(
      v.nullable(
        v.array(
          v.object({
            key: v.string(),
            from: FieldValueView,
            to: FieldValueView,
          }),
        ),
      ),
      v.description(
        'The values `fields_changed` changed, by field key: null where there was or is no value',
      ),
    ),
    consent: v.pipe(
      v.nullable(ConsentView),
      v.description(
        'The consent a hosted sign-up page recorded (`signed_up`), or the one the confirmation link confirmed (`confirmed`)',
      ),
    ),
    ip: v.pipe(
      v.nullable(v.string()),
      v.description('The address the confirmation link was opened from'),
    ),
    message: v.pipe(
      v.nullable(
        v.object({
          id: v.pipe(v.string(), v.description('SES’s message id')),
          kind: v.picklist(ACTIVITY_MESSAGE_KINDS),
          campaignId: v.pipe(
            v.nullable(ViewId),
            v.description(
              'The campaign: of a campaign’s message, or the campaign a series step made',
            ),
          ),
          sequenceId: v.pipe(
            v.nullable(ViewId),
            v.description(
              'The sequence of a step, or the series whose step made the campaign',
            ),
          ),
          step: v.pipe(
            v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
            v.description(
              'The step of that sequence or series: 1 for its first email',
            ),
          ),
        }),
      ),
      v.description('The message of a mail event; null for the others'),
    ),
    link: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The link a `clicked` event followed; the recipient’s address, where it carried it, reads `[email]`; cut at 500 characters',
      ),
    ),
    bounceType: v.pipe(
      v.nullable(v.picklist(BOUNCE_TYPES)),
      v.description(
        'Of a `bounced` event: `Permanent` (the address is suppressed) or not',
      ),
    ),
  }),
  v.title('ActivityEvent'),
);
export type ActivityView = v.InferOutput<typeof ActivityView>;

/** The API view of an event. */
export const activityView = (event: ActivityEvent): ActivityView => ({
  id: event.id,
  type: event.type,
  at: event.at,
  via: event.via ?? null,
  status: event.status ?? null,
  tagId: event.tagId ?? null,
  changes: event.changes ?? null,
  consent: event.consent
    ? {
        pageId: event.consent.pageId,
        pageVersion: event.consent.pageVersion,
        consentText: event.consent.consentText,
        ip: event.consent.ip ?? null,
        userAgent: event.consent.userAgent ?? null,
        referrer: event.consent.referrer ?? null,
        askedFields: (event.consent.askedFields ?? []).map(
          ({ key, label, required }) => ({ key, label, required }),
        ),
        signedUpAt: event.consent.signedUpAt,
        confirmedAt: event.consent.confirmedAt ?? null,
      }
    : null,
  ip: event.ip ?? null,
  message: event.message
    ? {
        id: event.message.id,
        kind: event.message.kind,
        campaignId: event.message.campaignId ?? null,
        sequenceId: event.message.sequenceId ?? null,
        step: event.message.step ?? null,
      }
    : null,
  link: event.link ?? null,
  bounceType: event.bounceType ?? null,
});

const Decoded = v.object({
  a: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  p: v.pipe(v.number(), v.safeInteger(), v.minValue(2)),
  b: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  l: v.string(),
});

/** The listing's identity inside a cursor: the contact and the limit. */
const listingOf = (contactId: string, limit: number): string =>
  JSON.stringify([contactId, limit]);

/** The cursor of the page after the event `after`. */
export const encodeActivityCursor = (
  contactId: string,
  limit: number,
  after: string,
  nextPage: number,
  before: number,
): string =>
  Buffer.from(
    JSON.stringify({
      a: after,
      p: nextPage,
      b: before,
      l: listingOf(contactId, limit),
    }),
  ).toString('base64url');

const invalid = (message: string) =>
  new ValidationError(`Invalid request: cursor: ${message}`, [
    { field: 'cursor', message },
  ]);

/** Reads a cursor of this listing; 400 naming `cursor` otherwise. */
const decodeActivityCursor = (
  contactId: string,
  limit: number,
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
  if (parsed.output.l !== listingOf(contactId, limit)) {
    throw invalid(
      'belongs to another listing: keep the contact and limit of the call that gave it',
    );
  }
  return {
    after: parsed.output.a,
    page: parsed.output.p,
    before: parsed.output.b,
  };
};

/**
 * A page of a contact's activity, newest first. 404 for a contact the
 * organization does not have (another organization's included); 400
 * naming `cursor` for a cursor this listing did not give.
 */
export const listActivity = async (
  deps: Pick<ActivityDeps, 'activity' | 'contacts'>,
  orgId: string,
  contactId: string,
  query: ActivityQueryInput,
): Promise<Page<ActivityView>> => {
  const position = query.cursor
    ? decodeActivityCursor(contactId, query.limit, query.cursor)
    : undefined;
  // The contact's pointer and the page at once: the page is of the
  // caller's organization whatever it finds.
  const [exists, found] = await Promise.all([
    deps.contacts.exists(orgId, contactId),
    deps.activity.page(orgId, contactId, {
      limit: query.limit,
      ...(position ? { after: position.after } : {}),
    }),
  ]);
  if (!exists) {
    throw new NotFoundError('contact.notFound', `No contact ${contactId}`);
  }
  const number = position?.page ?? 1;
  const before = position?.before ?? 0;
  const total = before + found.items.length;
  const last = found.items.at(-1);
  return {
    items: found.items.map(activityView),
    total,
    page: number,
    nextCursor:
      found.more && last
        ? encodeActivityCursor(
            contactId,
            query.limit,
            last.id,
            number + 1,
            total,
          )
        : null,
    totalExact: !found.more,
  };
};

/** Events read per request of a contact's whole activity. */
const WHOLE_ACTIVITY_PAGE = 100;

/**
 * Every event of a contact, newest first, a page of 100 at a time: for the
 * export and the erasure of a person, which need all of it.
 */
export const allActivityOf = async (
  deps: { activity: Pick<ActivityRepository, 'page'> },
  orgId: string,
  contactId: string,
): Promise<ActivityEvent[]> => {
  const events: ActivityEvent[] = [];
  for (let after: string | undefined; ; ) {
    const page = await deps.activity.page(orgId, contactId, {
      limit: WHOLE_ACTIVITY_PAGE,
      ...(after ? { after } : {}),
    });
    events.push(...page.items);
    after = page.items.at(-1)?.id;
    if (!page.more || !after) return events;
  }
};
