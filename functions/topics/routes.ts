/**
 * Routes of the `topics` group: topics and the opt-outs of readers.
 */
import * as v from 'valibot';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import {
  CreateTopicBody,
  OptOutBody,
  UpdateTopicBody,
} from '../../shared/topics/topic.schema.ts';
import {
  createTopic,
  deleteTopic,
  getTopic,
  listTopicOptOuts,
  listTopics,
  optOutOfTopic,
  undoTopicOptOut,
  updateTopic,
} from '../../shared/topics/topics.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

const TopicParams = idParams('topicId');

/** Every route of the topics group. */
export const topicRoutes = [
  route({
    method: 'POST',
    path: '/topics',
    role: 'admin',
    summary: 'Create a topic; a name taken (case-insensitively) answers 409',
    body: CreateTopicBody,
    handle: async (deps, { caller, body }) =>
      created(await createTopic(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/topics',
    role: 'member',
    summary: 'Topics of the organization, newest first, with opt-out counts',
    query: PageQuery,
    handle: async (deps, { caller, query }) =>
      paginated(await listTopics(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/topics/{topicId}',
    role: 'member',
    summary: 'One topic',
    params: TopicParams,
    handle: async (deps, { caller, params }) =>
      ok(await getTopic(deps, caller.orgId, params.topicId)),
  }),
  route({
    method: 'PATCH',
    path: '/topics/{topicId}',
    role: 'admin',
    summary: 'Rename a topic or change its description (null clears it)',
    params: TopicParams,
    body: UpdateTopicBody,
    handle: async (deps, { caller, params, body }) =>
      ok(await updateTopic(deps, caller.orgId, params.topicId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/topics/{topicId}',
    role: 'admin',
    summary: 'Delete a topic and its opt-outs',
    params: TopicParams,
    handle: async (deps, { caller, params }) =>
      ok(await deleteTopic(deps, caller.orgId, params.topicId)),
  }),
  route({
    method: 'GET',
    path: '/topics/{topicId}/opt-outs',
    role: 'member',
    summary: 'Addresses that declined the topic, by email',
    params: TopicParams,
    query: PageQuery,
    handle: async (deps, { caller, params, query }) =>
      paginated(
        await listTopicOptOuts(deps, caller.orgId, params.topicId, query),
        query,
      ),
  }),
  route({
    method: 'POST',
    path: '/topics/{topicId}/opt-outs',
    role: 'admin',
    summary: "Record that a contact's address declined the topic (idempotent)",
    params: TopicParams,
    body: OptOutBody,
    handle: async (deps, { caller, params, body }) => {
      const { created: isNew, ...optOut } = await optOutOfTopic(
        deps,
        caller.orgId,
        params.topicId,
        body.contactId,
      );
      return isNew ? created(optOut) : ok(optOut);
    },
  }),
  route({
    method: 'DELETE',
    path: '/topics/{topicId}/opt-outs/{contactId}',
    role: 'admin',
    summary: "Undo an opt-out: the contact's address receives the topic again",
    params: v.object({
      ...TopicParams.entries,
      ...idParams('contactId').entries,
    }),
    handle: async (deps, { caller, params }) =>
      ok(
        await undoTopicOptOut(
          deps,
          caller.orgId,
          params.topicId,
          params.contactId,
        ),
      ),
  }),
];
