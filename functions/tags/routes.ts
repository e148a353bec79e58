/**
 * Routes of the `tags` group.
 */

import { TagBody } from '../../shared/audience/contact.schema.ts';
import { createTag, listTags, TagView } from '../../shared/audience/tags.ts';
import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { PageQuery } from '../../shared/validation.ts';

/** What the `tags` group's function may use. */
export const tagBindings = [
  table({
    stores: [...PIPELINE_STORES, 'tags'],
    actions: [...PIPELINE_ACTIONS, 'dynamodb:Query', 'dynamodb:PutItem'],
  }),
] as const;

/** The deps of the `tags` group's function. */
export type TagDeps = DepsOf<typeof tagBindings>;

const route = routeFor<TagDeps>({ scope: 'audience' });

/** GET /tags, POST /tags. */
export const tagRoutes = [
  route({
    method: 'GET',
    path: '/tags',
    role: 'member',
    summary: 'Tags of the organization, newest first, with carrier counts',
    description:
      'Every tag of the organization, newest first, with `contactCount`: the contacts carrying it, in any list and status. Tags belong to the organization, not to a list.',
    query: PageQuery,
    responses: { 200: page(TagView, 'A page of tags') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listTags(deps, caller.orgId, query), query),
  }),
  route({
    method: 'POST',
    path: '/tags',
    role: 'admin',
    summary: 'Create a tag; a name taken (case-insensitively) answers 409',
    description:
      'Creates a tag carried by no contact yet. Names are unique in the organization, compared case-insensitively after trimming: a taken name answers 409 `tag.nameTaken`. To put a tag on a contact, creating it when missing, use POST /contacts/{contactId}/tags.',
    body: TagBody,
    responses: { 201: json(TagView, 'The tag, created') },
    errors: ['tag.nameTaken', 'write.contended'],
    handle: async (deps, { caller, body }) =>
      created(await createTag(deps, caller.orgId, body)),
  }),
];
