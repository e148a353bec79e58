/**
 * Application logic of topics and opt-outs. Agnostic to how it is called and
 * where data is stored.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import type { Topic, TopicOptOut } from './model.ts';
import type { TopicsDeps as Deps } from './ports.ts';
import type { CreateTopicInput, UpdateTopicInput } from './topic.schema.ts';

/** A topic as the API shows it. */
export const TopicView = v.pipe(
  v.object({
    id: ViewId,
    name: v.string(),
    description: v.pipe(
      v.nullable(v.string()),
      v.description('What readers of the topic receive; null when none'),
    ),
    optOutCount: v.pipe(
      Count,
      v.description('Addresses that declined the topic'),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('Topic'),
);
export type TopicView = v.InferOutput<typeof TopicView>;

/** The answer of DELETE /topics/{topicId}. */
export const DeletedTopic = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the topic removed')),
  }),
  v.title('DeletedTopic'),
);
export type DeletedTopic = v.InferOutput<typeof DeletedTopic>;

/** An opt-out as the API shows it. */
export const OptOutView = v.pipe(
  v.object({
    topicId: ViewId,
    email: v.pipe(
      v.string(),
      v.email(),
      v.description(
        'The address that declined the topic: opt-outs are per address, for every list of the organization',
      ),
    ),
    contactId: v.pipe(
      ViewId,
      v.description('The contact it was recorded from (by the API or a link)'),
    ),
    optedOutAt: Timestamp,
  }),
  v.title('TopicOptOut'),
);
export type OptOutView = v.InferOutput<typeof OptOutView>;

/** The answer of DELETE /topics/{topicId}/opt-outs/{contactId}. */
export const UndoneOptOut = v.pipe(
  v.object({
    topicId: ViewId,
    contactId: ViewId,
    removed: v.pipe(
      v.boolean(),
      v.description(
        "False when the contact's address had not declined the topic",
      ),
    ),
  }),
  v.title('UndoneTopicOptOut'),
);
export type UndoneOptOut = v.InferOutput<typeof UndoneOptOut>;

const view = (topic: Topic): TopicView => ({
  id: topic.id,
  name: topic.name,
  description: topic.description ?? null,
  optOutCount: topic.optOutCount,
  createdAt: topic.createdAt,
  updatedAt: topic.updatedAt,
});

/** The stored topic, or 404 for a missing one or another organization's. */
export const requireTopic = async (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  topicId: string,
): Promise<Topic> => {
  const topic = await deps.topics.get(orgId, topicId);
  if (!topic) throw new NotFoundError('topic.notFound', `No topic ${topicId}`);
  return topic;
};

/** Creates a topic; a name taken (case-insensitively) answers 409. */
export const createTopic = async (
  deps: Pick<Deps, 'topics' | 'ids' | 'clock'>,
  orgId: string,
  input: CreateTopicInput,
): Promise<TopicView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun ? await deps.topics.get(orgId, id) : undefined;
  if (earlier) return view(earlier);
  const now = deps.clock.now().toISOString();
  const topic: Topic = {
    id,
    name: input.name,
    ...(input.description ? { description: input.description } : {}),
    createdAt: now,
    updatedAt: now,
    optOutCount: 0,
  };
  await deps.topics.create(orgId, topic);
  return view(topic);
};

/** One topic. */
export const getTopic = async (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  topicId: string,
): Promise<TopicView> => view(await requireTopic(deps, orgId, topicId));

/** A page of topics, newest first, with opt-out counts. */
export const listTopics = async (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<TopicView>> => {
  const page = await deps.topics.page(orgId, request);
  return { total: page.total, items: page.items.map(view) };
};

/** Renames a topic or changes its description (null or "" clears it). */
export const updateTopic = async (
  deps: Pick<Deps, 'topics' | 'clock'>,
  orgId: string,
  topicId: string,
  input: UpdateTopicInput,
): Promise<TopicView> => {
  const before = await requireTopic(deps, orgId, topicId);
  const { description: _, ...rest } = before;
  const description =
    input.description === undefined ? before.description : input.description;
  const after: Topic = {
    ...rest,
    name: input.name ?? before.name,
    ...(description ? { description } : {}),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.topics.update(orgId, before, after);
  return view(after);
};

/**
 * Deletes a topic and its opt-outs. A campaign or step that still names it
 * is refused at send time, like any unknown topic.
 */
export const deleteTopic = async (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  topicId: string,
): Promise<DeletedTopic> => {
  await deps.topics.delete(orgId, await requireTopic(deps, orgId, topicId));
  return { id: topicId };
};

const contactOf = async (
  deps: Pick<Deps, 'contacts'>,
  orgId: string,
  contactId: string,
) => {
  const contact = await deps.contacts.findById(orgId, contactId);
  if (!contact) {
    throw new NotFoundError('contact.notFound', `No contact ${contactId}`);
  }
  return contact;
};

/**
 * Records that a contact's address declined a topic. Idempotent: `created`
 * is false when the address had already declined it.
 */
export const optOutOfTopic = async (
  deps: Pick<Deps, 'topics' | 'contacts' | 'clock'>,
  orgId: string,
  topicId: string,
  contactId: string,
): Promise<OptOutView & { created: boolean }> => {
  await requireTopic(deps, orgId, topicId);
  const contact = await contactOf(deps, orgId, contactId);
  const optOut: TopicOptOut = {
    email: contact.email,
    contactId,
    optedOutAt: deps.clock.now().toISOString(),
  };
  const created = await deps.topics.addOptOut(orgId, topicId, optOut);
  return { topicId, ...optOut, created };
};

/** Undoes an opt-out: the contact's address receives the topic again. */
export const undoTopicOptOut = async (
  deps: Pick<Deps, 'topics' | 'contacts'>,
  orgId: string,
  topicId: string,
  contactId: string,
): Promise<UndoneOptOut> => {
  await requireTopic(deps, orgId, topicId);
  const contact = await contactOf(deps, orgId, contactId);
  const removed = await deps.topics.removeOptOut(orgId, topicId, contact.email);
  return { topicId, contactId, removed };
};

/** The addresses that declined a topic, by email. */
export const listTopicOptOuts = async (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  topicId: string,
  request: PageRequest,
): Promise<Page<OptOutView>> => {
  const topic = await requireTopic(deps, orgId, topicId);
  const page = await deps.topics.pageOptOuts(
    orgId,
    topicId,
    topic.optOutCount,
    request,
  );
  return {
    total: page.total,
    items: page.items.map((item) => ({ topicId, ...item })),
  };
};

/**
 * Of these recipients, those a send with this topic must skip. Campaign and
 * sequence senders call it before composing.
 */
export const recipientsWhoDeclined = (
  deps: Pick<Deps, 'topics'>,
  orgId: string,
  topicId: string,
  emails: string[],
): Promise<Set<string>> => deps.topics.optedOut(orgId, topicId, emails);
