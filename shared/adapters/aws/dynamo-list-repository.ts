/**
 * Driven adapter: lists in their organization's partition. The list counter
 * on the organization item gives the total of GET /lists without a scan.
 */
import * as v from 'valibot';
import {
  CONTACT_STATUSES,
  type ContactStatus,
  type List,
} from '../../audience/model.ts';
import type { ListRepository } from '../../audience/ports.ts';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { pageOfCollection, putWithReservation } from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import { Counter, type DynamoTable } from './dynamo-table.ts';

/** The counter attribute of each status on a list item. */
export const statusCountAttribute = (status: ContactStatus) =>
  `${status}Count` as const;

export const ListItem = itemSchema('List', {
  id: v.string(),
  name: v.string(),
  createdAt: v.string(),
  contactCount: Counter,
  ...({
    pendingCount: Counter,
    subscribedCount: Counter,
    unsubscribedCount: Counter,
    bouncedCount: Counter,
    complainedCount: Counter,
  } satisfies Record<ReturnType<typeof statusCountAttribute>, typeof Counter>),
});

const ListNameItem = itemSchema('ListName', { listId: v.string() });

const toItem = (list: List) => ({
  id: list.id,
  name: list.name,
  createdAt: list.createdAt,
  contactCount: list.contactCount,
  ...Object.fromEntries(
    CONTACT_STATUSES.map((s) => [
      statusCountAttribute(s),
      list.statusCounts[s],
    ]),
  ),
});

const fromItem = (list: ItemOf<typeof ListItem>): List => ({
  id: list.id,
  name: list.name,
  createdAt: list.createdAt,
  contactCount: list.contactCount,
  statusCounts: {
    pending: list.pendingCount,
    subscribed: list.subscribedCount,
    unsubscribed: list.unsubscribedCount,
    bounced: list.bouncedCount,
    complained: list.complainedCount,
  },
});

/** Lists, their unique names and the organization's list counter. */
export class DynamoListRepository implements ListRepository {
  private readonly lists;
  private readonly names;

  constructor(private readonly table: DynamoTable) {
    this.lists = entity(table, ListItem);
    this.names = entity(table, ListNameItem);
  }

  async create(orgId: string, list: List): Promise<void> {
    await putWithReservation(this.table, {
      reservation: this.names.putTx(
        keys.listName(orgId, list.name),
        { listId: list.id },
        {
          if: (w) => w.missing(),
          otherwise: (cause) =>
            new ConflictError(
              'list.nameTaken',
              `A list named "${list.name}" already exists`,
              { cause },
            ),
        },
      ),
      item: this.lists.putTx(keys.list(orgId, list.id), toItem(list), {
        if: (w) => w.missing(),
      }),
      counted: keys.listsOfOrganization(orgId),
    });
  }

  async get(orgId: string, listId: string): Promise<List | undefined> {
    const found = await this.lists.get(keys.list(orgId, listId));
    return found && fromItem(found);
  }

  async page(orgId: string, request: PageRequest): Promise<Page<List>> {
    const page = await pageOfCollection(
      this.table,
      keys.listsOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => fromItem(this.lists.parse(item))),
      total: page.total,
    };
  }
}
