/**
 * The envelopes of the spec as schemas: success `{success: true, data}`,
 * paginated `{success: true, data: [...], pagination}` and error
 * `{error, code, details?}`. The OpenAPI document describes them and the
 * tests check every answer against them.
 */
import * as v from 'valibot';
import { Count } from '../validation.ts';

/** `pagination` of a paginated answer. */
export const Pagination = v.pipe(
  v.object({
    total: v.pipe(
      Count,
      v.description(
        'Items matching, on all pages; while `totalExact` is false, those counted so far (see `totalExact`)',
      ),
    ),
    page: v.pipe(v.number(), v.integer(), v.minValue(1)),
    limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
    totalPages: v.pipe(Count, v.description('ceil(total / limit)')),
    nextCursor: v.pipe(
      v.optional(v.nullable(v.string())),
      v.description(
        'On listings that take a cursor (GET /contacts, GET /contacts/{contactId}/activity, GET /suppressions, GET /suppressions/lifts, GET /webhooks/{webhookId}/deliveries): pass it as `cursor` to get the next page at the cost of that page alone; null on the last page',
      ),
    ),
    totalExact: v.pipe(
      v.optional(v.boolean()),
      v.description(
        'On GET /contacts with `search`, or `tagId` with `status`: false when the call stopped at its read budget (5,000 contacts), so `total` counts the matches read so far and `nextCursor` reads on. On GET /contacts/{contactId}/activity and GET /webhooks/{webhookId}/deliveries, which count no total: false while `nextCursor` reads on, `total` counting the items up to this page (a first page of one item beside a cursor says `total: 1`)',
      ),
    ),
  }),
  v.title('Pagination'),
);

/** `{success: true, data}` around a data schema. */
export const successEnvelope = <S extends v.GenericSchema>(data: S) =>
  v.object({ success: v.literal(true), data });

/** `{success: true, data: [...], pagination}` around an item schema. */
export const pageEnvelope = <S extends v.GenericSchema>(item: S) =>
  v.object({
    success: v.literal(true),
    data: v.array(item),
    pagination: Pagination,
  });

/** One field of a 400's `details`. */
export const FieldIssue = v.pipe(
  v.object({
    field: v.pipe(
      v.string(),
      v.description('Dotted path of the field, e.g. `contacts.3.email`'),
    ),
    message: v.string(),
  }),
  v.title('FieldIssue'),
);

/** The error body of every error answer. */
export const ErrorEnvelope = v.pipe(
  v.object({
    error: v.pipe(v.string(), v.description('What went wrong, for a person')),
    code: v.pipe(
      v.string(),
      v.description('Stable machine code, e.g. `list.notFound`'),
    ),
    details: v.optional(v.array(FieldIssue)),
  }),
  v.title('Error'),
);
