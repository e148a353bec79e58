/**
 * Routes of the `segments` group: saved filters over one list's contacts,
 * which series narrow their list with.
 */

import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  CreateSegmentBody,
  UpdateSegmentBody,
} from '../../shared/segments/segment.schema.ts';
import {
  createSegment,
  DeletedSegment,
  deleteSegment,
  getSegment,
  listSegments,
  SegmentView,
  SegmentWithCount,
  updateSegment,
} from '../../shared/segments/segments.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** What the `segments` group's function may use. */
export const segmentBindings = [
  table({
    stores: [...PIPELINE_STORES, 'lists', 'tags', 'fields', 'segments'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
] as const;

/** The deps of the `segments` group's function. */
export type SegmentDeps = DepsOf<typeof segmentBindings>;

const route = routeFor<SegmentDeps>({ scope: 'audience' });

const SegmentParams = idParams('segmentId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What a segment is (the spec leaves the resource unstated). */
const SEGMENTS =
  'A segment is a saved filter over the contacts of one list: a series narrows its list with one (`audienceSegmentId`), and `GET /contacts?segmentId=` lists its contacts. Its list is fixed at creation.';

/** The condition vocabulary. */
const CONDITIONS = [
  '`match` is `all` (every condition must hold) or `any` (one at least); `conditions` holds 1 to 20 objects `{field, operator, value}`:',
  [
    '- `tag`: `has` / `hasNot`, `value` the id of a tag of the organization (400 naming the condition otherwise).',
    '- `status`: `is` / `isNot`, `value` one of `pending`, `subscribed`, `unsubscribed`, `bounced`, `complained`.',
    '- `emailDomain`: `is` / `isNot`, `value` a domain such as `example.com`: the part of the address after `@`, compared exactly and case-insensitively (a subdomain is another domain).',
    '- `email`, `name`: `contains` / `notContains`, `value` 1 to 100 characters, case-insensitive; `name` looks in the first name, the last name and both joined by a space.',
    '- `createdAt` (added to the list), `joinedAt` (first subscribed; none while never subscribed), `confirmedAt` (double opt-in confirmed): `before` / `after`, `value` an ISO 8601 instant with an explicit offset, strictly before or after it; a contact without the date matches neither. `joinedAt` and `confirmedAt` also take `exists` / `notExists`, without `value`.',
    "- `fields.<key>`, a custom field of the organization (see `/fields`; 400 naming `conditions.<i>.field` otherwise), by its type: every type `is` / `isNot` (exact equality) and `exists` / `notExists` (without `value`); `text` also `contains` / `notContains` (case-insensitive); `number` `greaterThan` / `lessThan`; `date` `before` / `after` (strictly, by day). `value` must fit the field as a contact value does (a number, `YYYY-MM-DD`, `true` or `false`, one of the options): 400 naming `conditions.<i>.operator` or `conditions.<i>.value` otherwise. Only stored values count, never the field's default: a contact without a value matches `isNot`, `notContains` and `notExists`, and no other. A field a segment names cannot be deleted (409 `field.inUse`).",
  ].join('\n'),
  "Texts and domains are stored lower-cased (a custom field's `contains` text too; its other values as sent), instants in UTC. A bad condition answers 400 with `details` naming its path, e.g. `conditions.1.value`.",
].join('\n\n');

/** What a live count costs. */
const COUNT_COST =
  'The counts are live: the whole list is read on each call, so the cost grows with the list (one read unit per 8 KB of contacts, eventually consistent).';

/** Every route of the segments group. */
export const segmentRoutes = [
  route({
    method: 'POST',
    path: '/segments',
    role: 'admin',
    summary: 'Create a segment over one list',
    description: md(
      'Creates a segment from `name` (1 to 100 characters; names need not be unique), `listId` (a list of the organization: 404 `list.notFound` otherwise), `match` and `conditions`.',
      CONDITIONS,
      SEGMENTS,
    ),
    body: CreateSegmentBody,
    responses: { 201: json(SegmentView, 'The segment, created') },
    errors: ['list.notFound', 'write.contended'],
    handle: async (deps, { caller, body }) =>
      created(await createSegment(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/segments',
    role: 'member',
    summary: 'Segments of the organization, newest first',
    description: md(
      'Every segment of the organization, newest first, paginated; the total comes from a counter. Rows carry no counts (each would read a whole list): read one segment for them.',
      SEGMENTS,
    ),
    query: PageQuery,
    responses: { 200: page(SegmentView, 'A page of segments') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listSegments(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/segments/{segmentId}',
    role: 'member',
    summary: 'One segment, with how many contacts it matches now',
    description: md(
      'One segment with `contactCount` (contacts of its list that match, any status) and `subscribedCount` (those a send would reach). A segment of another organization answers 404, as one that does not exist.',
      COUNT_COST,
    ),
    params: SegmentParams,
    responses: { 200: json(SegmentWithCount, 'The segment and its counts') },
    errors: ['segment.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getSegment(deps, caller.orgId, params.segmentId)),
  }),
  route({
    method: 'PATCH',
    path: '/segments/{segmentId}',
    role: 'admin',
    summary: 'Rename a segment or change its match or conditions',
    description: md(
      'Changes `name`, `match` or `conditions`; at least one of them, a field left out is unchanged, and `conditions` replaces the whole array. `listId` cannot change (400 naming it): create another segment for another list. Series that use the segment see the change at their next send.',
      CONDITIONS,
    ),
    params: SegmentParams,
    body: UpdateSegmentBody,
    responses: { 200: json(SegmentView, 'The segment, after the change') },
    errors: ['segment.notFound', 'write.contended'],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateSegment(deps, caller.orgId, params.segmentId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/segments/{segmentId}',
    role: 'admin',
    summary: 'Delete a segment no series uses',
    description:
      'Deletes the segment and answers its `id`. A segment that narrows a series cannot be deleted: 400 `segment.inUse` naming each series (name and id); take it off them first (`audienceSegmentId` null).',
    params: SegmentParams,
    responses: { 200: json(DeletedSegment, 'The id of the segment deleted') },
    errors: ['segment.notFound', 'segment.inUse', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteSegment(deps, caller.orgId, params.segmentId)),
  }),
];
