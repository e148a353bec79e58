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
  paginateQuery,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as v from 'valibot';
import {
  type Condition,
  compileCondition,
  compileProjection,
  Placeholders,
} from '../../db/expressions.ts';
import { ENTITY_TYPE } from '../../db/items.ts';
import type { Key, KeyRange, QueryKey } from '../../db/keys.ts';
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
 * The item a single write's failed condition returned as it was (asked
 * with `ReturnValuesOnConditionCheckFailure`), as plain values; undefined
 * for any other error. The document client leaves it marshalled.
 */
export const conditionFailureItem = (
  error: unknown,
): Record<string, unknown> | undefined =>
  error instanceof ConditionalCheckFailedException && error.Item
    ? unmarshall(error.Item)
    : undefined;

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

/** Builds the domain error a failed condition means. */
export type Otherwise = (cause: unknown) => Error;

const otherwiseOf = new WeakMap<TransactItem, Otherwise>();

/**
 * Names the domain error of a transaction item's failed condition:
 * `transactWrite` throws it when that item's condition fails (the first
 * failed item naming one wins).
 */
export const onFailedCondition = (
  item: TransactItem,
  otherwise: Otherwise,
): TransactItem => {
  otherwiseOf.set(item, otherwise);
  return item;
};

const namedFailure = (items: readonly TransactItem[], error: unknown) => {
  for (const index of failedConditions(error) ?? []) {
    const item = items[index];
    const otherwise = item && otherwiseOf.get(item);
    if (otherwise) return otherwise(error);
  }
  return undefined;
};

/**
 * Sends one TransactWriteItems, again while DynamoDB cancels it because
 * another transaction held one of its items at that instant (a
 * `TransactionConflict`: nothing was checked, the same write may pass a
 * moment later). After the conflict budget it is a 409 `write.contended`,
 * or the conflict `contended` builds; any other failure surfaces at once: a
 * failed condition as the error its item names (`onFailedCondition`), else
 * as the provider's.
 */
export const transactWrite = (
  table: DynamoTable,
  TransactItems: TransactItem[],
  options: { contended?: (cause: unknown) => ConflictError } = {},
): Promise<void> =>
  retryOnConflict(async (retryable) => {
    try {
      await table.client.send(new TransactWriteCommand({ TransactItems }));
    } catch (error) {
      if (isTransactionConflict(error) && !failedConditions(error)?.length) {
        retryable(
          options.contended?.(error) ??
            new ConflictError(
              'write.contended',
              'Another request wrote the same items at the same moment; retry',
              { cause: error },
            ),
        );
      }
      throw namedFailure(TransactItems, error) ?? error;
    }
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Largest batch of keys one BatchGetItem accepts. */
const BATCH_GET_LIMIT = 100;

/** How many BatchGetItem requests one read keeps in flight. */
const BATCH_GET_CONCURRENCY = 4;

/**
 * One BatchGetItem request (at most 100 keys), strongly consistent by
 * default: the items found, and the keys DynamoDB left unprocessed
 * (throttling), for a caller that would rather do without them than wait
 * (`batchGet` retries them). The order of the items is not the keys'.
 */
export const batchGetOnce = async (
  table: DynamoTable,
  itemKeys: readonly Key[],
  { consistent = true }: { consistent?: boolean } = {},
): Promise<{ items: Record<string, unknown>[]; unprocessed: Key[] }> => {
  const result: BatchGetCommandOutput = await table.client.send(
    new BatchGetCommand({
      RequestItems: {
        [table.tableName]: {
          Keys: itemKeys.map((key) => ({ PK: key.PK, SK: key.SK })),
          ConsistentRead: consistent,
        },
      },
    }),
  );
  return {
    items: result.Responses?.[table.tableName] ?? [],
    unprocessed: (result.UnprocessedKeys?.[table.tableName]?.Keys ??
      []) as Key[],
  };
};

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
  const chunks: Key[][] = [];
  for (let i = 0; i < itemKeys.length; i += BATCH_GET_LIMIT) {
    chunks.push(itemKeys.slice(i, i + BATCH_GET_LIMIT));
  }
  const readChunk = async (keysOfChunk: Key[]) => {
    const found: Record<string, unknown>[] = [];
    let pending = keysOfChunk;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const read = await batchGetOnce(table, pending, { consistent });
      found.push(...read.items);
      pending = read.unprocessed;
      if (attempt > 8 && pending.length) {
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

/** The sort keys a query reads: a prefix, a range, or the whole partition. */
export type QueryRange = QueryKey | KeyRange | { PK: string };

/** The placeholders of a request, as its input names them (none: absent). */
export const placeholdersOf = (p: Placeholders) => ({
  ...(Object.keys(p.names).length ? { ExpressionAttributeNames: p.names } : {}),
  ...(Object.keys(p.values).length
    ? { ExpressionAttributeValues: p.values }
    : {}),
});

/** What a query reads besides its range. */
export interface QueryReadOptions {
  /** Keeps only the items it matches (read capacity is spent on all). */
  filter?: Condition;
  /** Key order (default) or descending. */
  descending?: boolean;
  consistent?: boolean;
  /** The attributes to read; the keys and the entity type are added. */
  project?: readonly string[];
  /** Items per request. */
  pageSize?: number;
  /** Reads on from after this key (a cursor); absent: from the start. */
  startKey?: Key;
}

/**
 * The input of a Query over a range: the key condition, a filter and a
 * projection, their placeholders shared.
 */
export const queryInput = (
  table: DynamoTable,
  range: QueryRange,
  options: QueryReadOptions = {},
): QueryCommandInput => {
  const p = new Placeholders();
  const pk = `${p.path('PK')} = ${p.value(range.PK)}`;
  const sk =
    'skPrefix' in range && range.skPrefix
      ? ` AND begins_with(${p.path('SK')}, ${p.value(range.skPrefix)})`
      : 'from' in range
        ? ` AND ${p.path('SK')} BETWEEN ${p.value(range.from)} AND ${p.value(range.to)}`
        : '';
  return {
    TableName: table.tableName,
    KeyConditionExpression: `${pk}${sk}`,
    ...(options.filter
      ? { FilterExpression: compileCondition(options.filter, p) }
      : {}),
    ...(options.project
      ? {
          ProjectionExpression: compileProjection(
            ['PK', 'SK', ENTITY_TYPE, ...options.project],
            p,
          ),
        }
      : {}),
    ...placeholdersOf(p),
    ...(options.descending ? { ScanIndexForward: false } : {}),
    ...(options.consistent ? { ConsistentRead: true } : {}),
  };
};

/**
 * Reads a range page by page, items of any type, unparsed: for ranges
 * holding several item types, each parsed by its own schema.
 */
export async function* queryPages(
  table: DynamoTable,
  range: QueryRange,
  options: QueryReadOptions = {},
): AsyncGenerator<Record<string, unknown>[]> {
  const { startKey, ...read } = options;
  const pages = paginateQuery(
    {
      client: table.client,
      ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    },
    {
      ...queryInput(table, range, read),
      ...(startKey ? { ExclusiveStartKey: { ...startKey } } : {}),
    },
  );
  for await (const page of pages) yield page.Items ?? [];
}

/**
 * One request of a Query: at most `limit` items evaluated (before the
 * filter), from after `startKey`; `lastKey` says where the next begins
 * (absent: the range is read to its end), `scanned` how many items it
 * evaluated (a filter may keep fewer).
 */
export const queryOnce = async (
  table: DynamoTable,
  range: QueryRange,
  options: Omit<QueryReadOptions, 'pageSize'> & {
    limit?: number;
    startKey?: Key;
  } = {},
): Promise<{
  items: Record<string, unknown>[];
  lastKey?: Key;
  scanned: number;
}> => {
  const { limit, startKey, ...read } = options;
  const { Items, LastEvaluatedKey, ScannedCount } = await table.client.send(
    new QueryCommand({
      ...queryInput(table, range, read),
      ...(limit === undefined ? {} : { Limit: limit }),
      ...(startKey ? { ExclusiveStartKey: { ...startKey } } : {}),
    }),
  );
  return {
    items: Items ?? [],
    ...(LastEvaluatedKey ? { lastKey: LastEvaluatedKey as Key } : {}),
    scanned: ScannedCount ?? 0,
  };
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
  range: QueryKey,
): Promise<void> => {
  // An empty prefix is the whole partition (DynamoDB refuses "").
  for await (const found of queryPages(table, range, { project: [] })) {
    await deleteKeys(table, found as unknown as Key[]);
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
