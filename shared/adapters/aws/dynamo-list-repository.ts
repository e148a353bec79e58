/**
 * Driven adapter: lists in their organization's partition. The list counter
 * on the organization item gives the total of GET /lists without a scan.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import {
  CONTACT_STATUSES,
  type ContactStatus,
  type List,
} from '../../audience/model.ts';
import type { ListRepository } from '../../audience/ports.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  Counter,
  type DynamoTable,
  pageOfCollection,
  putWithReservation,
} from './dynamo-table.ts';

/** The counter attribute of each status on a list item. */
export const statusCountAttribute = (status: ContactStatus) =>
  `${status}Count` as const;

const toItem = (orgId: string, list: List) => ({
  ...keys.list(orgId, list.id),
  ...entityType('List'),
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

const ListItem = itemSchema('List', {
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

const fromItem = (item: Record<string, unknown>): List => {
  const list = parseItem(ListItem, item);
  return {
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
  };
};

/** Lists, their unique names and the organization's list counter. */
export class DynamoListRepository implements ListRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, list: List): Promise<void> {
    await putWithReservation(this.table, {
      reservation: {
        ...keys.listName(orgId, list.name),
        ...entityType('ListName'),
        listId: list.id,
      },
      item: toItem(orgId, list),
      counted: keys.listsOfOrganization(orgId),
      onTaken: (cause) =>
        new ConflictError(
          'list.nameTaken',
          `A list named "${list.name}" already exists`,
          { cause },
        ),
    });
  }

  async get(orgId: string, listId: string): Promise<List | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.list(orgId, listId),
      }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async page(orgId: string, request: PageRequest): Promise<Page<List>> {
    const page = await pageOfCollection(
      this.table,
      keys.listsOfOrganization(orgId),
      request,
    );
    return { items: page.items.map(fromItem), total: page.total };
  }
}
