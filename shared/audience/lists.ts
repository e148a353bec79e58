/**
 * Application logic of lists. Agnostic to how it is called and where data
 * is stored.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { Count, requiredName, Timestamp, ViewId } from '../validation.ts';
import { CONTACT_STATUSES, type ContactStatus, type List } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** Body of POST /lists. */
export const CreateListBody = v.object({
  name: requiredName(100),
});

/** A list as the API shows it, without its count. */
export const ListView = v.pipe(
  v.object({
    id: ViewId,
    name: v.string(),
    createdAt: Timestamp,
  }),
  v.title('List'),
);
export type ListView = v.InferOutput<typeof ListView>;

/** A list with its counts (GET /lists rows). */
export const ListWithCount = v.pipe(
  v.object({
    ...ListView.entries,
    contactCount: v.pipe(
      Count,
      v.description('Contacts in the list, any status'),
    ),
    subscribedCount: v.pipe(
      Count,
      v.description('Contacts who receive campaigns (status subscribed)'),
    ),
  }),
  v.title('ListWithCount'),
);
export type ListWithCount = v.InferOutput<typeof ListWithCount>;

const view = ({ id, name, createdAt }: List): ListView => ({
  id,
  name,
  createdAt,
});

/** Creates a list; names are unique in the organization, case-insensitively. */
export const createList = async (
  deps: Pick<Deps, 'lists' | 'ids' | 'clock'>,
  orgId: string,
  input: v.InferOutput<typeof CreateListBody>,
): Promise<ListView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun ? await deps.lists.get(orgId, id) : undefined;
  if (earlier) return view(earlier);
  const list: List = {
    id,
    name: input.name,
    createdAt: deps.clock.now().toISOString(),
    contactCount: 0,
    statusCounts: Object.fromEntries(
      CONTACT_STATUSES.map((status) => [status, 0]),
    ) as Record<ContactStatus, number>,
  };
  await deps.lists.create(orgId, list);
  return view(list);
};

/** The stored list, or 404 for a missing one or another organization's. */
export const requireList = async (
  deps: Pick<Deps, 'lists'>,
  orgId: string,
  listId: string,
): Promise<List> => {
  const list = await deps.lists.get(orgId, listId);
  if (!list) throw new NotFoundError('list.notFound', `No list ${listId}`);
  return list;
};

/** One list of the organization; 404 for a missing one or another's. */
export const getList = async (
  deps: Pick<Deps, 'lists'>,
  orgId: string,
  listId: string,
): Promise<ListView> => view(await requireList(deps, orgId, listId));

/** A page of the organization's lists, newest first, each with its count. */
export const listLists = async (
  deps: Pick<Deps, 'lists'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<ListWithCount>> => {
  const page = await deps.lists.page(orgId, request);
  return {
    total: page.total,
    items: page.items.map((list) => ({
      ...view(list),
      contactCount: list.contactCount,
      subscribedCount: list.statusCounts.subscribed,
    })),
  };
};
