/**
 * Counted collections: the items of one kind under an organization (lists,
 * templates, campaigns…), each collection with counter items just past its
 * items, so a page and its total come back in one Query; and the creation
 * of an item together with the reservation of its unique name.
 */
import { type Condition, where } from '../../db/expressions.ts';
import { type EntityType, itemSchema } from '../../db/items.ts';
import type { Key, QueryKey } from '../../db/keys.ts';
import { entity } from './dynamo-entity.ts';
import {
  Counter,
  type DynamoTable,
  queryPages,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

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

/** A collection counter item as its readers read it. */
export const CollectionCounterItem = itemSchema('CollectionCounter', {
  count: Counter,
});

const counters = (table: DynamoTable) => entity(table, CollectionCounterItem);

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
): TransactItem =>
  counters(table).updateTx(
    collectionCounterKey(collection, counter),
    { add: { count: by } },
    cap === undefined
      ? {}
      : {
          if: (w) =>
            cap > 0
              ? w.or(w.missing('count'), w.lt('count', cap))
              : w.lt('count', cap),
        },
  );

/** Reads a collection's counter alone (0 before its first item). */
export const collectionCount = async (
  table: DynamoTable,
  collection: QueryKey,
  counter?: string,
): Promise<number> => {
  const found = await counters(table).get(
    collectionCounterKey(collection, counter),
    { consistent: true },
  );
  return found?.count ?? 0;
};

/** What a page of a collection reads besides its range. */
interface PageOptions {
  /** The attributes to read (the keys, type and counts are added). */
  project?: readonly string[];
  /**
   * Keeps only the items it matches (the total must count those only):
   * the query reads on until the page is full.
   */
  filter?: Condition;
}

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
  options: PageOptions & { ascending?: boolean } = {},
): Promise<{ items: Record<string, unknown>[]; total: number }> => {
  const offset = (page - 1) * limit;
  if (offset >= total) return { items: [], total };
  const items: Record<string, unknown>[] = [];
  const pages = queryPages(table, query, {
    ...options,
    descending: options.ascending !== true,
    // Pages of the items the page needs at most: one request when they fit.
    pageSize: offset + limit,
  });
  for await (const found of pages) {
    items.push(...found);
    // Enough for the page: read no further.
    if (items.length >= offset + limit) break;
  }
  return { items: items.slice(offset, offset + limit), total };
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
  options: PageOptions & {
    total?: (counters: Map<string, Record<string, unknown>>) => number;
    /** The entity type of the counter items (a filter keeps those). */
    counterType?: EntityType;
  } = {},
): Promise<{ items: Record<string, unknown>[]; total: number }> => {
  const { project, filter } = options;
  const base = counterBase(collection);
  const offset = (page - 1) * limit;
  const found = new Map<string, Record<string, unknown>>();
  const items: Record<string, unknown>[] = [];
  let total: number | undefined;
  const totalOf =
    options.total ??
    ((read) => {
      const item = read.get('count');
      return item ? counters(table).parse(item).count : 0;
    });
  const pages = queryPages(
    table,
    // Past every counter name.
    { PK: collection.PK, from: collection.skPrefix, to: `${base}\uffff` },
    {
      descending: true,
      // The counters and the items up to the page's end: one request.
      pageSize: offset + limit + 2,
      ...(project ? { project: [...project, 'count'] } : {}),
      ...(filter
        ? {
            filter: where.or(
              filter,
              where.eq('_type', options.counterType ?? 'CollectionCounter'),
            ),
          }
        : {}),
    },
  );
  for await (const read of pages) {
    for (const item of read) {
      const sk = String(item.SK);
      if (sk.startsWith(base)) found.set(sk.slice(base.length), item);
      else items.push(item);
    }
    // The counters come first: the total is known after the first read.
    total ??= totalOf(found);
    if (offset >= total || items.length >= offset + limit) break;
  }
  total ??= totalOf(found);
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
    /** The reservation's put, conditional on the name being free. */
    reservation: TransactItem;
    /** The item's put. */
    item: TransactItem;
    /** The collection whose counter the new item moves. */
    counted?: QueryKey;
  },
): Promise<void> => {
  await transactWrite(table, [
    entry.reservation,
    entry.item,
    ...(entry.counted ? [moveCollectionCounter(table, entry.counted, 1)] : []),
  ]);
};
