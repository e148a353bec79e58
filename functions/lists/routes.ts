/**
 * Routes of the `lists` group.
 */
import {
  CreateListBody,
  createList,
  getList,
  listLists,
} from '../../shared/audience/lists.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** POST /lists, GET /lists, GET /lists/{listId}. */
export const listRoutes = [
  route({
    method: 'POST',
    path: '/lists',
    role: 'admin',
    summary: 'Create a list',
    body: CreateListBody,
    handle: async (deps, { caller, body }) =>
      created(await createList(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/lists',
    role: 'member',
    summary: 'Lists of the organization, newest first, with contact counts',
    query: PageQuery,
    handle: async (deps, { caller, query }) =>
      paginated(await listLists(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/lists/{listId}',
    role: 'member',
    summary: 'One list, without its contact count',
    params: idParams('listId'),
    handle: async (deps, { caller, params }) =>
      ok(await getList(deps, caller.orgId, params.listId)),
  }),
];
