/**
 * Routes of the `suppressions` group: the organization's suppression list
 * (issue 31, §3) — listed newest first, looked up, added to by hand or from
 * another provider, lifted, and the record of the lifts.
 */

import {
  addressKey,
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import {
  AddedSuppressions,
  AddressParams,
  AddSuppressionsBody,
  addSuppressions,
  getSuppression,
  LiftQuery,
  liftSuppression,
  listLifts,
  listSuppressions,
  MAX_ADDRESSES_PER_CALL,
  SuppressionLiftView,
  SuppressionListQuery,
  SuppressionView,
} from '../../shared/delivery/suppressions.ts';
import { ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';

/** What the `suppressions` group's function may use. */
export const suppressionBindings = [
  table({
    // The list and its log; the contacts of added addresses, in every list.
    stores: [...PIPELINE_STORES, 'delivery', 'lists', 'contacts'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `suppressions` group's function. */
export type SuppressionDeps = DepsOf<typeof suppressionBindings>;

const route = routeFor<SuppressionDeps>({ scope: 'audience' });

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What the list is (our design: the spec has no such resource). */
const LIST =
  'The suppression list holds the addresses the organization never mails: those that bounced for good or complained (reported by SES, or said by a bulk import line or a contact status set by hand), those it added by hand, those it brought from another provider, and those of erased people (by a keyed hash only). It applies in every list: nothing is sent to them, and a bulk import creates them with their status, never subscribed.';

/** How an address is named in the path. */
const ADDRESS =
  'The address in the path is percent-encoded (`ana%40example.com`), compared after trimming and lower-casing. An address the organization has not suppressed answers 404 `suppression.notFound`, whether or not another organization did.';

/** How the listings page. */
const PAGING =
  'Newest first. Page numbers (`page` from 1, `limit` 1 to 100, default 20) read the entries before the page again; to walk the list, follow `pagination.nextCursor` instead: pass it as `cursor` with the same `limit` (another one answers 400 naming `cursor`), and the next page costs that page alone.';

/** Every route of the suppressions group. */
export const suppressionRoutes = [
  route({
    method: 'GET',
    path: '/suppressions',
    role: 'member',
    summary: "The organization's suppressed addresses, newest first",
    description: md(
      LIST,
      PAGING,
      '`reason` is `bounce`, `complaint`, `manual`, `imported` or `erased`; `source` says who said so (`ses`, `import`, `api`).',
    ),
    query: SuppressionListQuery,
    responses: { 200: page(SuppressionView, 'A page of suppressions') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listSuppressions(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/suppressions/lifts',
    role: 'member',
    summary: 'The suppressions lifted, newest first: who lifted what, when',
    description: md(
      'Every lift is recorded: the address, the reason it was suppressed for, when it was suppressed and lifted, the id of the API key that lifted it, and whether it took `force=true` (a complaint, an erased person).',
      PAGING,
    ),
    query: SuppressionListQuery,
    responses: { 200: page(SuppressionLiftView, 'A page of lifts') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listLifts(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/suppressions/{email}',
    role: 'member',
    summary: 'Whether an address is suppressed, and why',
    description: md(ADDRESS),
    params: AddressParams,
    responses: { 200: json(SuppressionView, 'The suppression') },
    errors: ['suppression.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getSuppression(deps, caller.orgId, params.email)),
  }),
  route({
    method: 'POST',
    path: '/suppressions',
    role: 'admin',
    summary:
      'Suppress addresses by hand, or bring a suppression list from another provider',
    description: md(
      `Adds up to ${MAX_ADDRESSES_PER_CALL.toLocaleString('en-US')} addresses: \`{"addresses": [{"email": "ana@example.com"}, {"email": "bo@example.com", "reason": "imported"}]}\`. \`reason\` is \`manual\` (the default: the organization chose not to mail it) or \`imported\` (it comes from another provider's list).`,
      'Every contact of each address, in every list, becomes `unsubscribed` (a bounced or complained one stays so), and is not subscribed again while the address is suppressed (409 `contact.suppressed` from the contact routes; a sign-up does nothing). An address suppressed already keeps its first reason: the call is idempotent, and answers how many it added.',
    ),
    body: AddSuppressionsBody,
    responses: { 200: json(AddedSuppressions, 'What the call added') },
    errors: ['write.contended', 'contact.changed'],
    handle: async (deps, { caller, body }) =>
      ok(await addSuppressions(deps, caller.orgId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/suppressions/{email}',
    role: 'admin',
    summary: 'Lift a suppression; a complaint only with force=true',
    description: md(
      'Lifts the suppression: the address may be mailed again once it is subscribed. A `manual`, `imported` or `bounce` suppression is lifted at once (a mailbox that bounced may exist again). A `complaint`, or an `erased` person, answers 409 `suppression.complaint` / `suppression.erased` unless `force=true`: the person asked not to be mailed, so lift it only when they asked again.',
      'Every lift is recorded with the id of the key that made it (`GET /suppressions/lifts`). Lifting changes no contact: a bounced, complained or unsubscribed contact stays so until the person subscribes again (a bounced or complained contact cannot be subscribed again in its list).',
      ADDRESS,
    ),
    params: AddressParams,
    query: LiftQuery,
    responses: { 200: json(SuppressionLiftView, 'The lift, as recorded') },
    errors: [
      'suppression.notFound',
      'suppression.complaint',
      'suppression.erased',
      'write.contended',
    ],
    handle: async (deps, { caller, params, query }) =>
      ok(await liftSuppression(deps, caller, params.email, query)),
  }),
];
