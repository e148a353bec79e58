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
import {
  ENTITY_TYPE,
  type EntityType,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
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

/** How many BatchGetItem requests one read keeps in flight. */
const BATCH_GET_CONCURRENCY = 4;

/**
 * Reads many items by key, strongly consistent, 100 keys per request (up
 * to four requests in flight), retrying unprocessed keys with backoff.
 * Missing items are left out; the order of the items is not the keys'.
 */
export const batchGet = async (
  table: DynamoTable,
  itemKeys: Key[],
  { consistent = true }: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> => {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < itemKeys.length; i += BATCH_GET_LIMIT) {
    chunks.push(
      itemKeys.slice(i, i + BATCH_GET_LIMIT).map((key) => ({ ...key })),
    );
  }
  const readChunk = async (keysOfChunk: Record<string, unknown>[]) => {
    const found: Record<string, unknown>[] = [];
    let pending: Record<string, unknown>[] | undefined = keysOfChunk;
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const result: BatchGetCommandOutput = await table.client.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: { Keys: pending, ConsistentRead: consistent },
          },
        }),
      );
      found.push(...(result.Responses?.[table.tableName] ?? []));
      pending = result.UnprocessedKeys?.[table.tableName]?.Keys;
      if (attempt > 8 && pending?.length) {
        throw new Error('DynamoDB left keys unprocessed after 9 attempts');
      }
    }
    return found;
  };
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < chunks.length; i += BATCH_GET_CONCURRENCY) {
    const read = await Promise.all(
      chunks.slice(i, i + BATCH_GET_CONCURRENCY).map(readChunk),
    );
    items.push(...read.flat());
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

/**
 * Where a collection's counters live: at `<NAME>$<counter>`, just past its
 * `<NAME>#<id>` items ('$' follows '#'), so that a newest-first Query from
 * the counters down reads the total first, in the same request as the page.
 * Readers of `begins_with(SK, '<NAME>#')` never see them.
 */
const counterBase = (collection: QueryKey): string => {
  if (!collection.skPrefix.endsWith('#')) {
    throw new Error(
      `A counted collection's prefix ends with '#': ${collection.skPrefix}`,
    );
  }
  return `${collection.skPrefix.slice(0, -1)}$`;
};

/** The key of one counter of a collection (default `count`). */
export const collectionCounterKey = (
  collection: QueryKey,
  counter = 'count',
): Key => ({ PK: collection.PK, SK: `${counterBase(collection)}${counter}` });

/** A collection counter item as its readers project it. */
const CollectionCounterItem = itemSchema('CollectionCounter', {
  count: Counter,
});

/**
 * The transaction item moving a collection's counter by `by`, creating it
 * at its first use; with `cap`, refused (a failed condition) when the count
 * has reached it.
 */
export const moveCollectionCounter = (
  table: DynamoTable,
  collection: QueryKey,
  by: number,
  { counter, cap }: { counter?: string; cap?: number } = {},
): TransactItem => ({
  Update: {
    TableName: table.tableName,
    Key: collectionCounterKey(collection, counter),
    UpdateExpression: 'SET #type = :type ADD #count :by',
    ...(cap === undefined
      ? {}
      : {
          ConditionExpression:
            '(attribute_not_exists(#count) AND :zero < :cap) OR #count < :cap',
        }),
    ExpressionAttributeNames: { '#type': ENTITY_TYPE, '#count': 'count' },
    ExpressionAttributeValues: {
      ':type': 'CollectionCounter',
      ':by': by,
      ...(cap === undefined ? {} : { ':cap': cap, ':zero': 0 }),
    },
  },
});

/** Reads a collection's counter alone (0 before its first item). */
export const collectionCount = async (
  table: DynamoTable,
  collection: QueryKey,
  counter?: string,
): Promise<number> => {
  const key = collectionCounterKey(collection, counter);
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
      Key: key,
      ConsistentRead: true,
    }),
  );
  return Item ? parseItem(CollectionCounterItem, Item, key).count : 0;
};

/**
 * One page of a collection, newest first, and its total, in one Query (for
 * a page that fits 1 MB): the Query starts at the collection's counters,
 * just past its items, so they come first, then the newest items. `total`
 * reads the counter items (default: the `count` of the `count` counter).
 * A filter keeps the counters too, and must match what the total counts.
 */
export const pageOfCollection = async (
  table: DynamoTable,
  collection: QueryKey,
  { page, limit }: { page: number; limit: number },
  options: {
    projection?: { expression: string; names?: Record<string, string> };
    filter?: {
      expression: string;
      names?: Record<string, string>;
      values: Record<string, unknown>;
    };
    total?: (counters: Map<string, Record<string, unknown>>) => number;
    /** The entity type of the counter items (a filter keeps those). */
    counterType?: EntityType;
  } = {},
): Promise<{ items: Record<string, unknown>[]; total: number }> => {
  const { projection, filter } = options;
  const base = counterBase(collection);
  const names: Record<string, string> = {
    ...projection?.names,
    ...filter?.names,
    ...(filter ? { '#counterType': ENTITY_TYPE } : {}),
  };
  const offset = (page - 1) * limit;
  const counters = new Map<string, Record<string, unknown>>();
  const items: Record<string, unknown>[] = [];
  let total: number | undefined;
  const totalOf =
    options.total ??
    ((found) => {
      const item = found.get('count');
      return item ? parseItem(CollectionCounterItem, item).count : 0;
    });
  const pages = paginateQuery(
    // The counters and the items up to the page's end: one request.
    { client: table.client, pageSize: offset + limit + 2 },
    {
      TableName: table.tableName,
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
      ExpressionAttributeValues: {
        ':pk': collection.PK,
        ':first': collection.skPrefix,
        // Past every counter name.
        ':last': `${base}\uffff`,
        ...filter?.values,
        ...(filter
          ? { ':counterType': options.counterType ?? 'CollectionCounter' }
          : {}),
      },
      ...(projection
        ? { ProjectionExpression: `${projection.expression}, #count, #type` }
        : {}),
      ...(filter
        ? {
            FilterExpression: `(${filter.expression}) OR #counterType = :counterType`,
          }
        : {}),
      ...(projection || Object.keys(names).length
        ? {
            ExpressionAttributeNames: {
              ...names,
              ...(projection
                ? { '#count': 'count', '#type': ENTITY_TYPE }
                : {}),
            },
          }
        : {}),
      ScanIndexForward: false,
    },
  );
  for await (const result of pages) {
    for (const item of result.Items ?? []) {
      const sk = String(item.SK);
      if (sk.startsWith(base)) counters.set(sk.slice(base.length), item);
      else items.push(item);
    }
    // The counters come first: the total is known after the first read.
    total ??= totalOf(counters);
    if (offset >= total || items.length >= offset + limit) break;
  }
  total ??= totalOf(counters);
  return { items: items.slice(offset, offset + limit), total };
};

/**
 * Creates an item together with the reservation of its unique name (a slug,
 * a list or tag name) and, optionally, its collection's counter, in one
 * transaction. A taken name throws what `onTaken` builds.
 */
export const putWithReservation = async (
  table: DynamoTable,
  entry: {
    reservation: Key & Record<string, unknown>;
    item: Key & Record<string, unknown>;
    /** The collection whose counter the new item moves. */
    counted?: QueryKey;
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
      ...(entry.counted
        ? [moveCollectionCounter(table, entry.counted, 1)]
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
