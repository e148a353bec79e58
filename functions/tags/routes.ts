/**
 * Routes of the `tags` group.
 */
import { TagBody } from '../../shared/audience/contact.schema.ts';
import { createTag, listTags } from '../../shared/audience/tags.ts';
import { created, paginated } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import { PageQuery } from '../../shared/validation.ts';

/** GET /tags, POST /tags. */
export const tagRoutes = [
  route({
    method: 'GET',
    path: '/tags',
    role: 'member',
    summary: 'Tags of the organization, newest first, with carrier counts',
    query: PageQuery,
    handle: async (deps, { caller, query }) =>
      paginated(await listTags(deps, caller.orgId, query), query),
  }),
  route({
    method: 'POST',
    path: '/tags',
    role: 'admin',
    summary: 'Create a tag; a name taken (case-insensitively) answers 409',
    body: TagBody,
    handle: async (deps, { caller, body }) =>
      created(await createTag(deps, caller.orgId, body)),
  }),
];
