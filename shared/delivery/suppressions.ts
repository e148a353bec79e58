/**
 * The suppression list as an organization sees it: its suppressed
 * addresses newest first, one looked up, addresses added by hand or
 * brought from another provider, a suppression lifted, and the record of
 * the lifts. What a suppression does to contacts and sends is the
 * audience's (`shared/audience/suppressed.ts`); here is who may change the
 * list, and how.
 *
 * Lift rules: an admin lifts a manual or imported suppression, and a
 * bounce (the mailbox may exist again); a complaint, or an erased
 * person's suppression, only with `force` (409 otherwise), since the
 * person asked not to be mailed. Every lift is recorded (who, when, what
 * reason), and lifting changes no contact: a bounced, complained or
 * unsubscribed contact stays so until the person subscribes again.
 */
import * as v from 'valibot';
import type { Caller } from '../access/model.ts';
import { suppressAddresses } from '../audience/suppressed.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Page } from '../ports.ts';
import { retryOnConflict } from '../retry.ts';
import { Count, EmailAddress, PageQuery, Timestamp } from '../validation.ts';
import type {
  DeliveryDeps as Deps,
  LoggedSuppression,
  LogPage,
  Suppression,
  SuppressionLift,
  SuppressionReason,
} from './ports.ts';

/** Addresses one `POST /suppressions` takes at most. */
export const MAX_ADDRESSES_PER_CALL = 1000;

/** Reasons that only a forced lift lifts. */
const LIFTED_BY_FORCE: Partial<
  Record<SuppressionReason, 'suppression.complaint' | 'suppression.erased'>
> = {
  complaint: 'suppression.complaint',
  erased: 'suppression.erased',
};

const Reason = v.pipe(
  v.picklist([
    'bounce',
    'complaint',
    'manual',
    'imported',
    'erased',
  ] as const satisfies readonly SuppressionReason[]),
  v.description(
    'Why: `bounce` (a permanent bounce), `complaint` (marked as spam), `manual` (added by hand), `imported` (brought from another provider), `erased` (the person was erased; the address is gone, its keyed hash remains)',
  ),
);

const Source = v.pipe(
  v.picklist(['ses', 'import', 'api']),
  v.description(
    "Who said so: `ses` (the email provider's report of a message we sent), `import` (a bulk import line created a contact `bounced` or `complained`), `api` (a call: a contact's status set by hand, `POST /suppressions`, an erasure)",
  ),
);

/** An entry of the suppression list. */
export const SuppressionView = v.pipe(
  v.object({
    email: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The address, lower-cased; null once its person was erased',
      ),
    ),
    reason: Reason,
    source: Source,
    createdAt: v.pipe(
      Timestamp,
      v.description('When it was suppressed (for `ses`: when SES reported it)'),
    ),
    messageId: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The message that bounced or was complained about (source `ses`); null otherwise',
      ),
    ),
  }),
  v.title('Suppression'),
);
export type SuppressionView = v.InferOutput<typeof SuppressionView>;

/** The record of a lift. */
export const SuppressionLiftView = v.pipe(
  v.object({
    email: v.pipe(
      v.nullable(v.string()),
      v.description('The address; null once its person was erased'),
    ),
    reason: Reason,
    source: Source,
    suppressedAt: Timestamp,
    liftedAt: Timestamp,
    liftedBy: v.pipe(
      v.string(),
      v.description('The id of the API key that lifted it'),
    ),
    forced: v.pipe(
      v.boolean(),
      v.description(
        'Lifted with `force=true`: a complaint, or an erased person’s suppression',
      ),
    ),
  }),
  v.title('SuppressionLift'),
);
export type SuppressionLiftView = v.InferOutput<typeof SuppressionLiftView>;

/** The answer of `POST /suppressions`. */
export const AddedSuppressions = v.pipe(
  v.object({
    total: v.pipe(Count, v.description('Distinct addresses in the call')),
    added: v.pipe(Count, v.description('Addresses suppressed by this call')),
    alreadySuppressed: v.pipe(
      Count,
      v.description('Addresses suppressed before: each keeps its first reason'),
    ),
  }),
  v.title('AddedSuppressions'),
);
export type AddedSuppressions = v.InferOutput<typeof AddedSuppressions>;

/** Body of `POST /suppressions`. */
export const AddSuppressionsBody = v.object({
  addresses: v.pipe(
    v.array(
      v.object({
        email: EmailAddress,
        reason: v.optional(
          v.pipe(
            v.picklist(['manual', 'imported'], 'must be manual or imported'),
            v.description(
              '`manual` (the default): the organization chose not to mail it; `imported`: it comes from another provider’s suppression list',
            ),
          ),
          'manual',
        ),
      }),
      'must be an array',
    ),
    v.minLength(1, 'must hold at least one address'),
    v.maxLength(
      MAX_ADDRESSES_PER_CALL,
      `must hold at most ${MAX_ADDRESSES_PER_CALL.toLocaleString('en-US')} addresses`,
    ),
  ),
});
export type AddSuppressionsInput = v.InferOutput<typeof AddSuppressionsBody>;

/** An address in the path, percent-encoded by the client (`ana%40example.com`). */
export const AddressParams = v.object({ email: EmailAddress });

/** Query of the suppression list and of the lifts. */
export const SuppressionListQuery = v.object({
  ...PageQuery.entries,
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1024, 'is not a cursor this API gave'),
    ),
  ),
});
export type SuppressionListQuery = v.InferOutput<typeof SuppressionListQuery>;

/** Query of `DELETE /suppressions/{email}`. */
export const LiftQuery = v.object({
  force: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((value) => value === 'true'),
    ),
    'false',
  ),
});
export type LiftQuery = v.InferOutput<typeof LiftQuery>;

const notFound = (email: string) =>
  new NotFoundError(
    'suppression.notFound',
    `${email} is not on the organization's suppression list`,
  );

/** Who said so, as the view names it. */
const sourceOf = (suppression: {
  source?: 'import' | 'api';
}): SuppressionView['source'] => suppression.source ?? 'ses';

const viewOf = (suppression: LoggedSuppression): SuppressionView => ({
  email: suppression.email ?? null,
  reason: suppression.reason,
  source: sourceOf(suppression),
  createdAt: suppression.at,
  messageId: suppression.messageId ?? null,
});

const liftViewOf = (lift: SuppressionLift): SuppressionLiftView => ({
  email: lift.email ?? null,
  reason: lift.reason,
  source: sourceOf(lift),
  suppressedAt: lift.suppressedAt,
  liftedAt: lift.liftedAt,
  liftedBy: lift.liftedBy,
  forced: lift.forced,
});

// The cursor: where the next page starts (the position the last one ended
// at), its number, and the listing and limit it belongs to. Opaque to
// clients, and nothing secret: every read is scoped to the caller's
// organization.
const Cursor = v.object({
  a: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  p: v.pipe(v.number(), v.safeInteger(), v.minValue(2)),
  l: v.string(),
});

const invalidCursor = (message: string) =>
  new ValidationError(`Invalid request: cursor: ${message}`, [
    { field: 'cursor', message },
  ]);

const readCursor = (
  listing: string,
  cursor: string,
): { after: string; page: number } => {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('is not a cursor this API gave');
  }
  const parsed = v.safeParse(Cursor, decoded);
  if (!parsed.success) throw invalidCursor('is not a cursor this API gave');
  if (parsed.output.l !== listing) {
    throw invalidCursor(
      'belongs to another listing: keep the limit of the call that gave it',
    );
  }
  return { after: parsed.output.a, page: parsed.output.p };
};

/** A page of a log, read by number or from a cursor, with its next cursor. */
const pageOfLog = async <T, V>(
  name: string,
  query: SuppressionListQuery,
  read: (request: {
    page: number;
    limit: number;
    after?: string;
  }) => Promise<LogPage<T>>,
  view: (entry: T) => V,
): Promise<Page<V>> => {
  const listing = `${name}/${query.limit}`;
  const position = query.cursor ? readCursor(listing, query.cursor) : undefined;
  const number = position?.page ?? query.page;
  const found = await read({
    page: query.page,
    limit: query.limit,
    ...(position ? { after: position.after } : {}),
  });
  const more =
    found.last !== undefined &&
    found.items.length === query.limit &&
    number * query.limit < found.total;
  return {
    items: found.items.map(view),
    total: found.total,
    page: number,
    nextCursor: more
      ? Buffer.from(
          JSON.stringify({ a: found.last, p: number + 1, l: listing }),
        ).toString('base64url')
      : null,
  };
};

/** The organization's suppressions, newest first. */
export const listSuppressions = (
  deps: Pick<Deps, 'delivery'>,
  orgId: string,
  query: SuppressionListQuery,
): Promise<Page<SuppressionView>> =>
  pageOfLog(
    'suppressions',
    query,
    (request) => deps.delivery.suppressionLog(orgId, request),
    viewOf,
  );

/** The lifts of the organization's suppressions, newest first. */
export const listLifts = (
  deps: Pick<Deps, 'delivery'>,
  orgId: string,
  query: SuppressionListQuery,
): Promise<Page<SuppressionLiftView>> =>
  pageOfLog(
    'lifts',
    query,
    (request) => deps.delivery.liftLog(orgId, request),
    liftViewOf,
  );

/** The suppression of an address; 404 when it is not suppressed. */
const findSuppression = async (
  deps: Pick<Deps, 'delivery'>,
  orgId: string,
  email: string,
): Promise<Suppression> => {
  const found = (await deps.delivery.suppressions(orgId, [email])).get(email);
  if (!found) throw notFound(email);
  return found;
};

/**
 * One address's suppression: 404 `suppression.notFound` when it is not
 * suppressed in the organization (the same answer as for an address
 * another organization suppressed).
 */
export const getSuppression = async (
  deps: Pick<Deps, 'delivery'>,
  orgId: string,
  email: string,
): Promise<SuppressionView> =>
  viewOf(await findSuppression(deps, orgId, email));

/**
 * Adds addresses to the suppression list by hand (`manual`) or from
 * another provider (`imported`), and moves their contacts in every list to
 * `unsubscribed`. An address already suppressed keeps its first reason.
 * Idempotent: calling again adds nothing and completes contact moves a
 * call cut short left.
 */
export const addSuppressions = async (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  input: AddSuppressionsInput,
): Promise<AddedSuppressions> => {
  const at = deps.clock.now().toISOString();
  const suppressions: Suppression[] = input.addresses.map(
    ({ email, reason }) => ({ email, reason, at, source: 'api' }),
  );
  const total = new Set(suppressions.map((s) => s.email)).size;
  const added = await suppressAddresses(deps, orgId, suppressions);
  return {
    total,
    added: added.length,
    alreadySuppressed: total - added.length,
  };
};

/**
 * Lifts an address's suppression (admins). A complaint or an erased
 * person's suppression needs `force` (409 otherwise). The lift is recorded
 * with the caller's key; no contact changes. 404 when the address is not
 * suppressed.
 */
export const liftSuppression = (
  deps: Pick<Deps, 'delivery' | 'clock'>,
  caller: Caller,
  email: string,
  { force }: { force: boolean },
): Promise<SuppressionLiftView> =>
  retryOnConflict(async (retryable) => {
    const found = await findSuppression(deps, caller.orgId, email);
    const refusal = LIFTED_BY_FORCE[found.reason];
    if (refusal && !force) {
      throw new ConflictError(
        refusal,
        found.reason === 'complaint'
          ? `${email} complained: lift it with force=true only if the person asked to be mailed again`
          : `${email} was erased on request: lift it with force=true only if the person asked to be mailed again`,
      );
    }
    const lift = await deps.delivery
      .lift(caller.orgId, found, {
        at: deps.clock.now().toISOString(),
        by: caller.keyId,
        forced: refusal !== undefined,
      })
      .catch(retryable);
    return liftViewOf(lift);
  });
