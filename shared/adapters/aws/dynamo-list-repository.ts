/**
 * Driven adapter: lists in their organization's partition. The list counter
 * on the organization item gives the total of GET /lists without a scan.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { CONTACT_STATUSES, type ContactStatus } from '../../audience/model.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { List } from '../../lists/model.ts';
import type { ListRepository, Page, PageRequest } from '../../ports.ts';
import {
  type DynamoTable,
  failedConditions,
  organizationCounter,
  pageByPrefix,
} from './dynamo-table.ts';

/** The counter attribute of each status on a list item. */
export const statusCountAttribute = (status: ContactStatus) =>
  `${status}Count` as const;

const toItem = (orgId: string, list: List) => ({
  ...keys.list(orgId, list.id),
  _type: 'List',
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

const fromItem = (item: Record<string, unknown>): List => ({
  id: String(item.id),
  name: String(item.name),
  createdAt: String(item.createdAt),
  contactCount: Number(item.contactCount ?? 0),
  statusCounts: Object.fromEntries(
    CONTACT_STATUSES.map((s) => [
      s,
      Number(item[statusCountAttribute(s)] ?? 0),
    ]),
  ) as Record<ContactStatus, number>,
});

/** Lists, their unique names and the organization's list counter. */
export class DynamoListRepository implements ListRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, list: List): Promise<void> {
    const { client, tableName: TableName } = this.table;
    try {
      await client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName,
                Item: {
                  ...keys.listName(orgId, list.name),
                  _type: 'ListName',
                  listId: list.id,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Put: {
                TableName,
                Item: toItem(orgId, list),
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Update: {
                TableName,
                Key: keys.organization(orgId),
                UpdateExpression: 'ADD listCount :one',
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (failedConditions(error)?.includes(0)) {
        throw new ConflictError(
          'list.nameTaken',
          `A list named "${list.name}" already exists`,
          { cause: error },
        );
      }
      throw error;
    }
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
    const total = await organizationCounter(
      this.table,
      keys.organization(orgId),
      'listCount',
    );
    const page = await pageByPrefix(
      this.table,
      keys.listsOfOrganization(orgId),
      total,
      request,
    );
    return { items: page.items.map(fromItem), total };
  }
}
