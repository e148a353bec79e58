/**
 * Routes of the `lists` group.
 */

import {
  CreateListBody,
  createList,
  getList,
  ListView,
  ListWithCount,
  listLists,
} from '../../shared/audience/lists.ts';
import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** What the `lists` group's function may use. */
export const listBindings = [
  table({
    stores: [...PIPELINE_STORES, 'lists'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
] as const;

/** The deps of the `lists` group's function. */
export type ListDeps = DepsOf<typeof listBindings>;

const route = routeFor<ListDeps>({ scope: 'audience' });

/** POST /lists, GET /lists, GET /lists/{listId}. */
export const listRoutes = [
  route({
    method: 'POST',
    path: '/lists',
    role: 'admin',
    summary: 'Create a list',
    description:
      'Creates an empty list. Names are unique in the organization, compared case-insensitively after trimming; a taken name is a 409.',
    body: CreateListBody,
    responses: { 201: json(ListView, 'The list, created') },
    errors: ['list.nameTaken', 'write.contended'],
    handle: async (deps, { caller, body }) =>
      created(await createList(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/lists',
    role: 'member',
    summary: 'Lists of the organization, newest first, with contact counts',
    description:
      'Every list of the organization, newest first, with its number of contacts (any status) and of subscribed contacts.',
    query: PageQuery,
    responses: { 200: page(ListWithCount, 'A page of lists') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listLists(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/lists/{listId}',
    role: 'member',
    summary: 'One list, without its contact count',
    description:
      'One list. A list of another organization answers 404, as one that does not exist.',
    params: idParams('listId'),
    responses: { 200: json(ListView, 'The list') },
    errors: ['list.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getList(deps, caller.orgId, params.listId)),
  }),
];
