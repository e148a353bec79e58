/**
 * Driven adapter support: the table handle shared by the DynamoDB
 * repositories, and the translation of DynamoDB failures into domain terms.
 */
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { itemSchema, parseItem } from '../../db/items.ts';
import type { Key, QueryKey } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';

/** One item of a TransactWriteItems request. */
export type TransactItem = NonNullable<
  TransactWriteCommandInput['TransactItems']
>[number];

/** The document client and the table name, passed to every repository. */
export interface DynamoTable {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** True for a failed condition of a single-item write. */
export const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException;

/**
 * For a cancelled transaction, the positions of the items whose condition
 * failed; undefined for any other error.
 */
export const failedConditions = (error: unknown): number[] | undefined => {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).flatMap((reason, index) =>
    reason.Code === 'ConditionalCheckFailed' ? [index] : [],
  );
};

/** Epoch seconds, the unit of the table's TTL attribute. */
export const epochSeconds = (date: Date): number =>
  Math.floor(date.getTime() / 1000);

/**
 * A counter maintained with `ADD`: no attribute yet means nothing was
 * counted, so it reads as 0.
 */
export const Counter = v.optional(v.number(), 0);

/** The organization item as the counter reads project it. */
const OrganizationCounters = itemSchema('Organization', {
  listCount: Counter,
  tagCount: Counter,
  templateCount: Counter,
  topicCount: Counter,
  sequenceCount: Counter,
  seriesCount: Counter,
  segmentCount: Counter,
  signupPageCount: Counter,
});

/** The collection counters kept on the organization item. */
export type OrganizationCounter = keyof v.InferOutput<
  typeof OrganizationCounters.schema
>;

/** True when a transaction was cancelled by a concurrent transaction. */
export const isTransactionConflict = (error: unknown): boolean =>
  error instanceof TransactionCanceledException &&
  (error.CancellationReasons ?? []).some(
    (reason) => reason.Code === 'TransactionConflict',
  );

/**
 * Sends one TransactWriteItems, again while DynamoDB cancels it because
 * another transaction held one of its items at that instant (a
 * `TransactionConflict`: nothing was checked, the same write may pass a
 * moment later). After the conflict budget it is a 409 `write.contended`;
 * any other failure (a condition that failed) surfaces at once.
 */
export const transactWrite = (
  table: DynamoTable,
  TransactItems: TransactItem[],
): Promise<void> =>
  retryOnConflict(async (retryable) => {
    try {
      await table.client.send(new TransactWriteCommand({ TransactItems }));
    } catch (error) {
      if (isTransactionConflict(error) && !failedConditions(error)?.length) {
        retryable(
          new ConflictError(
            'write.contended',
            'Another request wrote the same items at the same moment; retry',
            { cause: error },
          ),
        );
      }
      throw error;
    }
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Largest batch of keys one BatchGetItem accepts. */
const BATCH_GET_LIMIT = 100;

/**
 * Reads many items by key, strongly consistent, 100 keys per request,
 * retrying unprocessed keys with backoff. Missing items are left out.
 */
export const batchGet = async (
  table: DynamoTable,
  itemKeys: Key[],
  { consistent = true }: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < itemKeys.length; i += BATCH_GET_LIMIT) {
    let pending: Record<string, unknown>[] | undefined = itemKeys
      .slice(i, i + BATCH_GET_LIMIT)
      .map((key) => ({ ...key }));
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const result: BatchGetCommandOutput = await table.client.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: { Keys: pending, ConsistentRead: consistent },
          },
        }),
      );
      items.push(...(result.Responses?.[table.tableName] ?? []));
      pending = result.UnprocessedKeys?.[table.tableName]?.Keys;
      if (attempt > 8 && pending?.length) {
        throw new Error('DynamoDB left keys unprocessed after 9 attempts');
      }
    }
  }
  return items;
};

/**
 * One page of the items under a key prefix, given the collection's total
 * from its counter: newest first by default (ids are time-ordered), or in
 * ascending key order. Page numbers need an offset, so the items before the
 * page are read too.
 */
export const pageByPrefix = async (
  table: DynamoTable,
  query: QueryKey,
  total: number,
  { page, limit }: { page: number; limit: number },
  options: {
    projection?: { expression: string; names?: Record<string, string> };
    /**
     * Keeps only the items it matches (the total must count those only):
     * the query reads on until the page is full.
     */
    filter?: {
      expression: string;
      names?: Record<string, string>;
      values: Record<string, unknown>;
    };
    ascending?: boolean;
  } = {},
): Promise<{ items: Record<string, unknown>[]; total: number }> => {
  const { projection, filter } = options;
  const names = { ...projection?.names, ...filter?.names };
  const offset = (page - 1) * limit;
  if (offset >= total) return { items: [], total };
  const items: Record<string, unknown>[] = [];
  const pages = paginateQuery(
    // Pages of the items the page needs at most: one request when they fit.
    { client: table.client, pageSize: offset + limit },
    {
      TableName: table.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: {
        ':pk': query.PK,
        ':prefix': query.skPrefix,
        ...filter?.values,
      },
      ...(projection ? { ProjectionExpression: projection.expression } : {}),
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
      ScanIndexForward: options.ascending === true,
    },
  );
  for await (const result of pages) {
    items.push(...(result.Items ?? []));
    // Enough for the page: read no further.
    if (items.length >= offset + limit) break;
  }
  return { items: items.slice(offset, offset + limit), total };
};

/** Reads one numeric counter of the organization item (0 when absent). */
export const organizationCounter = async (
  table: DynamoTable,
  orgKey: Key,
  counter: OrganizationCounter,
): Promise<number> => {
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
      Key: orgKey,
      ProjectionExpression: '#counter',
      ExpressionAttributeNames: { '#counter': counter },
    }),
  );
  return parseItem(OrganizationCounters, Item ?? {}, orgKey)[counter];
};

/**
 * Creates an item together with the reservation of its unique name (a slug,
 * a list or tag name) and, optionally, a counter of the organization, in one
 * transaction. A taken name throws what `onTaken` builds; a missing counter
 * item (organization) fails like any other write.
 */
export const putWithReservation = async (
  table: DynamoTable,
  entry: {
    reservation: Key & Record<string, unknown>;
    item: Key & Record<string, unknown>;
    counter?: { key: Key; attribute: OrganizationCounter };
    onTaken: (cause: unknown) => Error;
  },
): Promise<void> => {
  const { tableName: TableName } = table;
  const absent = 'attribute_not_exists(PK)';
  try {
    await transactWrite(table, [
      {
        Put: {
          TableName,
          Item: entry.reservation,
          ConditionExpression: absent,
        },
      },
      { Put: { TableName, Item: entry.item, ConditionExpression: absent } },
      ...(entry.counter
        ? [
            {
              Update: {
                TableName,
                Key: entry.counter.key,
                UpdateExpression: 'ADD #counter :one',
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeNames: {
                  '#counter': entry.counter.attribute,
                },
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ]
        : []),
    ]);
  } catch (error) {
    if (failedConditions(error)?.includes(0)) throw entry.onTaken(error);
    throw error;
  }
};

/** Most keys one BatchWriteItem accepts. */
const BATCH_WRITE_LIMIT = 25;

/**
 * Deletes every item of a partition under a sort-key prefix (an empty one:
 * the whole partition), 25 per
 * request, retrying unprocessed keys. Not atomic: call it for items that
 * nothing reaches any more (their owner is already gone).
 */
export const deleteByPrefix = async (
  table: DynamoTable,
  query: QueryKey,
): Promise<void> => {
  const { tableName: TableName } = table;
  const pages = paginateQuery(
    { client: table.client },
    {
      TableName,
      // An empty prefix is the whole partition (DynamoDB refuses "").
      ...(query.skPrefix
        ? {
            KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
            ExpressionAttributeValues: {
              ':pk': query.PK,
              ':prefix': query.skPrefix,
            },
          }
        : {
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': query.PK },
          }),
      ProjectionExpression: 'PK, SK',
    },
  );
  for await (const result of pages) {
    await deleteKeys(table, (result.Items ?? []) as Key[]);
  }
};

/** One request of a BatchWriteItem: a put or a delete. */
export type BatchWriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Key } };

/**
 * Writes puts and deletes, 25 per request, retrying unprocessed ones with
 * backoff. Not atomic, unconditional: each request is idempotent.
 */
export const batchWrite = async (
  table: DynamoTable,
  all: readonly BatchWriteRequest[],
): Promise<void> => {
  const { tableName: TableName } = table;
  for (let i = 0; i < all.length; i += BATCH_WRITE_LIMIT) {
    let requests = all.slice(i, i + BATCH_WRITE_LIMIT);
    for (let round = 0; requests.length; round++) {
      if (round) await sleep(Math.min(1000, 50 * 2 ** round));
      if (round > 9) {
        throw new Error('DynamoDB left writes unprocessed after 10 attempts');
      }
      const written = await table.client.send(
        new BatchWriteCommand({ RequestItems: { [TableName]: [...requests] } }),
      );
      requests = (written.UnprocessedItems?.[TableName] ??
        []) as BatchWriteRequest[];
    }
  }
};

/**
 * Deletes items by key, 25 per request, retrying unprocessed keys. Not
 * atomic, unconditional: a missing item is no error.
 */
export const deleteKeys = (
  table: DynamoTable,
  found: readonly Key[],
): Promise<void> =>
  batchWrite(
    table,
    found.map((Key) => ({
      DeleteRequest: { Key: { PK: Key.PK, SK: Key.SK } },
    })),
  );
