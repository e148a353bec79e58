/**
 * Driven adapter: lists in their organization's partition. The list counter
 * on the organization item gives the total of GET /lists without a scan.
 */
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { List } from '../../lists/model.ts';
import type { ListRepository, Page, PageRequest } from '../../ports.ts';
import { type DynamoTable, failedConditions } from './dynamo-table.ts';

const toItem = (orgId: string, list: List) => ({
  ...keys.list(orgId, list.id),
  _type: 'List',
  id: list.id,
  name: list.name,
  createdAt: list.createdAt,
  contactCount: list.contactCount,
});

const fromItem = (item: Record<string, unknown>): List => ({
  id: String(item.id),
  name: String(item.name),
  createdAt: String(item.createdAt),
  contactCount: Number(item.contactCount ?? 0),
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

  async page(orgId: string, { page, limit }: PageRequest): Promise<Page<List>> {
    const { Item: org } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.organization(orgId),
        ProjectionExpression: 'listCount',
      }),
    );
    const total = Number(org?.listCount ?? 0);
    const offset = (page - 1) * limit;
    if (offset >= total) return { items: [], total };

    // Page numbers need an offset: read up to the page's end, newest first.
    const query = keys.listsOfOrganization(orgId);
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const result = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': query.PK,
            ':prefix': query.skPrefix,
          },
          ScanIndexForward: false,
          Limit: offset + limit - items.length,
          ExclusiveStartKey,
        }),
      );
      items.push(...(result.Items ?? []));
      ExclusiveStartKey = result.LastEvaluatedKey;
    } while (ExclusiveStartKey && items.length < offset + limit);
    return { items: items.slice(offset, offset + limit).map(fromItem), total };
  }
}
