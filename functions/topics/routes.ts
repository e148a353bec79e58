/**
 * Routes of the `topics` group: topics and the opt-outs of readers.
 */

import * as v from 'valibot';
import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  CreateTopicBody,
  OptOutBody,
  UpdateTopicBody,
} from '../../shared/topics/topic.schema.ts';
import {
  createTopic,
  DeletedTopic,
  deleteTopic,
  getTopic,
  listTopicOptOuts,
  listTopics,
  OptOutView,
  optOutOfTopic,
  TopicView,
  UndoneOptOut,
  undoTopicOptOut,
  updateTopic,
} from '../../shared/topics/topics.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** What the `topics` group's function may use. */
export const topicBindings = [
  table({
    stores: [...PIPELINE_STORES, 'contacts', 'topics'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
] as const;

/** The deps of the `topics` group's function. */
export type TopicDeps = DepsOf<typeof topicBindings>;

const route = routeFor<TopicDeps>({ scope: 'audience' });

const TopicParams = idParams('topicId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What a topic is, as the spec puts it. */
const TOPICS =
  'A topic is a lasting editorial theme a reader can decline on its own, without leaving the list. A campaign or a sequence carries zero or one topic (`topicId`); the shortcode `{{topicOptOutUrl}}` in its content drops the reader from that topic when clicked, and a send whose content uses it without a topic is refused with 400.';

/** How opt-outs are kept (our decision). */
const OPT_OUTS =
  'Opt-outs are kept by email address, organization-wide: an address that declined a topic stops receiving it from every list of the organization.';

/** How names and descriptions are checked. */
const NAME_RULES =
  'Names are unique in the organization, compared case-insensitively after trimming: a taken name is 409 `topic.nameTaken`. A name is one line of 1 to 100 characters; a description at most 500 characters, line breaks allowed.';

/** Every route of the topics group. */
export const topicRoutes = [
  route({
    method: 'POST',
    path: '/topics',
    role: 'admin',
    summary: 'Create a topic; a name taken (case-insensitively) answers 409',
    description: md(
      'Creates a topic from `name` and an optional `description`, with no opt-out yet.',
      NAME_RULES,
      TOPICS,
    ),
    body: CreateTopicBody,
    responses: { 201: json(TopicView, 'The topic, created') },
    errors: ['topic.nameTaken', 'write.contended'],
    handle: async (deps, { caller, body }) =>
      created(await createTopic(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/topics',
    role: 'member',
    summary: 'Topics of the organization, newest first, with opt-out counts',
    description: md(
      'Every topic of the organization, newest first, paginated, each with the number of addresses that declined it.',
      TOPICS,
    ),
    query: PageQuery,
    responses: { 200: page(TopicView, 'A page of topics') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listTopics(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/topics/{topicId}',
    role: 'member',
    summary: 'One topic',
    description:
      'One topic with its opt-out count. A topic of another organization answers 404, as one that does not exist.',
    params: TopicParams,
    responses: { 200: json(TopicView, 'The topic') },
    errors: ['topic.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getTopic(deps, caller.orgId, params.topicId)),
  }),
  route({
    method: 'PATCH',
    path: '/topics/{topicId}',
    role: 'admin',
    summary: 'Rename a topic or change its description (null clears it)',
    description: md(
      'Changes `name` or `description`; at least one of them, a field left out is unchanged, a `description` of null or "" clears it. The answer is the topic after the change.',
      NAME_RULES,
      'A change that races another change of the topic (or its deletion) is 409 `topic.changed`: read it again.',
    ),
    params: TopicParams,
    body: UpdateTopicBody,
    responses: { 200: json(TopicView, 'The topic, after the change') },
    errors: ['topic.notFound', 'topic.nameTaken', 'topic.changed'],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateTopic(deps, caller.orgId, params.topicId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/topics/{topicId}',
    role: 'admin',
    summary: 'Delete a topic and its opt-outs',
    description:
      'Deletes the topic and its opt-outs, and answers its `id`; its name is free again. A campaign or a sequence step that still names it is refused at send time, like any unknown topic.',
    params: TopicParams,
    responses: { 200: json(DeletedTopic, 'The id of the topic deleted') },
    errors: ['topic.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteTopic(deps, caller.orgId, params.topicId)),
  }),
  route({
    method: 'GET',
    path: '/topics/{topicId}/opt-outs',
    role: 'member',
    summary: 'Addresses that declined the topic, by email',
    description: md(
      'The opt-outs of the topic, paginated, in order of email address.',
      OPT_OUTS,
    ),
    params: TopicParams,
    query: PageQuery,
    responses: { 200: page(OptOutView, 'A page of opt-outs') },
    errors: ['topic.notFound'],
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
    description: md(
      "Records that the address of the contact `contactId` declined the topic, as the contact's click on `{{topicOptOutUrl}}` would. The spec allows a separate call to record an opt-out and leaves its shape unstated; ours answers 201 with the opt-out when it is new, and 200 when the address had already declined the topic: nothing is written then, the stored opt-out keeps its first date and contact (the answer shows this request's).",
      OPT_OUTS,
      'A contact of another organization answers 404 `contact.notFound`, as one that does not exist.',
    ),
    params: TopicParams,
    body: OptOutBody,
    responses: {
      201: json(OptOutView, 'The opt-out, recorded'),
      200: json(OptOutView, 'The address had already declined the topic'),
    },
    errors: ['topic.notFound', 'contact.notFound', 'write.contended'],
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
    description: md(
      "Undoes the opt-out of the contact's address: it receives the topic again. Idempotent: `removed` is false when the address had not declined the topic.",
      OPT_OUTS,
    ),
    params: v.object({
      ...TopicParams.entries,
      ...idParams('contactId').entries,
    }),
    responses: { 200: json(UndoneOptOut, 'Whether an opt-out was removed') },
    errors: ['topic.notFound', 'contact.notFound', 'write.contended'],
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
