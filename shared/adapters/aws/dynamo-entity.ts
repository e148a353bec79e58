/**
 * The typed data layer: one `Entity` per item type, bound to the table,
 * reading and writing items of that type by its item schema. Gets parse
 * what they read; puts write the key, the entity type and the attributes
 * the schema names; updates and conditions are built from attribute paths
 * (`shared/db/expressions.ts`), never from hand-written placeholders; a
 * failed condition becomes the domain error the caller names.
 *
 * The same writes are offered as transaction items (`putTx`, `updateTx`,
 * `deleteTx`, `checkTx`) for `transactWrite`, which throws the domain error
 * of the first failed item that names one; a put also as a request of an
 * unconditional `batchWrite` (`putRequest`).
 */
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type * as v from 'valibot';
import {
  type Condition,
  compileCondition,
  compileProjection,
  compileUpdate,
  ifMissing,
  type PathOf,
  Placeholders,
  type Update,
  type Where,
  whereOf,
} from '../../db/expressions.ts';
import {
  ENTITY_TYPE,
  type EntityType,
  type ItemSchema,
  parseItem,
} from '../../db/items.ts';
import type { Key } from '../../db/keys.ts';
import {
  type BatchWriteRequest,
  conditionFailureItem,
  type DynamoTable,
  isConditionFailure,
  type Otherwise,
  onFailedCondition,
  placeholdersOf,
  type QueryRange,
  type QueryReadOptions,
  queryOnce,
  queryPages,
  type TransactItem,
} from './dynamo-table.ts';

/** An item schema whose stored attributes are `I` and parsed output `O`. */
export interface EntitySchema<I, O> {
  type: EntityType;
  schema: v.GenericSchema<I, O>;
}

/** A condition, or a function building it from the typed builder. */
export type ConditionOf<A> = Condition | ((where: Where<A>) => Condition);

/** What a conditional write may add to its request. */
export interface WriteOptions<A> {
  /** The write applies only when this holds. */
  if?: ConditionOf<A>;
  /** Thrown instead of the provider's error when the condition fails. */
  otherwise?: Otherwise;
}

/** The stored attributes a schema leaves out (TTL, search haystacks…). */
export type Housekeeping = Record<string, unknown>;

/** What a single write (not a transaction item) may add to its request. */
export interface SingleWriteOptions<A> extends WriteOptions<A> {
  /**
   * On a failed condition, the provider's error carries the item as it
   * was (`ReturnValuesOnConditionCheckFailure`): read it with `failedItem`.
   */
  returningOnFailure?: 'old';
}

/** What an update may add to its request. */
export interface UpdateOptions<A> extends WriteOptions<A> {
  /** Attributes set outside the schema (a TTL…), as a put's housekeeping. */
  housekeeping?: Housekeeping;
  /**
   * How the update writes the entity type: `set` (the default) sets it, so
   * an item the update creates is typed; `ifMissing` keeps a type already
   * there; `keep` leaves it alone (attributes added to an item another
   * writer owns and typed).
   */
  entityType?: 'set' | 'ifMissing' | 'keep';
}

/** What a query of one entity reads: its filter typed by the item. */
export type QueryOptions<A> = Omit<QueryReadOptions, 'filter' | 'project'> & {
  filter?: ConditionOf<A>;
  project?: readonly PathOf<A>[];
};

const resolve = <A>(condition: ConditionOf<A>): Condition =>
  typeof condition === 'function' ? condition(whereOf<A>()) : condition;

/** Asks a single write's failed condition for the item as it was. */
const oldOnFailure = (options: { returningOnFailure?: 'old' }) =>
  options.returningOnFailure
    ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const }
    : {};

/** The condition part of a request, or nothing. */
const conditionParts = <A>(
  condition: ConditionOf<A> | undefined,
  p: Placeholders,
) =>
  condition
    ? { ConditionExpression: compileCondition(resolve(condition), p) }
    : {};

/** Reads and writes the items of one type. */
export class Entity<I, O> {
  constructor(
    private readonly table: DynamoTable,
    readonly item: EntitySchema<I, O>,
  ) {}

  /** Parses a stored item of this type (read by a query elsewhere). */
  parse(stored: Record<string, unknown>, key?: Key): O {
    return parseItem(this.item as ItemSchema<O>, stored, key);
  }

  /** The item at `key`, parsed; undefined when there is none. */
  async get(
    key: Key,
    options: { consistent?: boolean } = {},
  ): Promise<O | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: { PK: key.PK, SK: key.SK },
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    return Item ? this.parse(Item, key) : undefined;
  }

  /**
   * Only the attributes named, parsed by the given schema (a summary of
   * the item); undefined when there is no item.
   */
  async project<P>(
    key: Key,
    paths: readonly PathOf<I>[],
    as: ItemSchema<P>,
    options: { consistent?: boolean } = {},
  ): Promise<P | undefined> {
    const p = new Placeholders();
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: { PK: key.PK, SK: key.SK },
        ProjectionExpression: compileProjection(paths, p),
        ...placeholdersOf(p),
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    return Item ? parseItem(as, Item, key) : undefined;
  }

  /**
   * The item as it was when a single write of this type failed its
   * condition, parsed: for a write asked `returningOnFailure: 'old'`;
   * undefined for any other error, or when there was no item.
   */
  failedItem(error: unknown): O | undefined {
    const stored = conditionFailureItem(error);
    return stored ? this.parse(stored) : undefined;
  }

  /** The whole item to store: key, entity type, attributes. */
  private stored(key: Key, attributes: I, housekeeping?: Housekeeping) {
    return {
      ...housekeeping,
      ...(attributes as object),
      PK: key.PK,
      SK: key.SK,
      [ENTITY_TYPE]: this.item.type,
    };
  }

  /** Writes the whole item (replacing one already there). */
  async put(
    key: Key,
    attributes: I,
    options: SingleWriteOptions<I> & { housekeeping?: Housekeeping } = {},
  ): Promise<void> {
    await this.attempt(
      () =>
        this.table.client.send(
          new PutCommand({
            ...this.putInput(key, attributes, options),
            ...oldOnFailure(options),
          }),
        ),
      options,
    );
  }

  /**
   * Updates the item (creating it unless a condition forbids): the entity
   * type is set with every update (unless `entityType` says otherwise), so
   * an item an update creates is typed. With `returning: 'new'`, the item
   * after the update, parsed.
   */
  update(
    key: Key,
    update: Update<I>,
    options: SingleWriteOptions<I> & UpdateOptions<I> & { returning: 'new' },
  ): Promise<O>;
  update(
    key: Key,
    update: Update<I>,
    options?: SingleWriteOptions<I> &
      UpdateOptions<I> & { returning?: undefined },
  ): Promise<undefined>;
  async update(
    key: Key,
    update: Update<I>,
    options: SingleWriteOptions<I> &
      UpdateOptions<I> & { returning?: 'new' } = {},
  ): Promise<O | undefined> {
    const { Attributes } = await this.attempt(
      () =>
        this.table.client.send(
          new UpdateCommand({
            ...this.updateInput(key, update, options),
            ...(options.returning ? { ReturnValues: 'ALL_NEW' } : {}),
            ...oldOnFailure(options),
          }),
        ),
      options,
    );
    return options.returning && Attributes
      ? this.parse(Attributes, key)
      : undefined;
  }

  /** Deletes the item (no error when absent, unless a condition says). */
  async delete(key: Key, options: SingleWriteOptions<I> = {}): Promise<void> {
    await this.attempt(
      () =>
        this.table.client.send(
          new DeleteCommand({
            ...this.deleteInput(key, options),
            ...oldOnFailure(options),
          }),
        ),
      options,
    );
  }

  /** The items of a range, parsed, every page read. */
  async all(range: QueryRange, options: QueryOptions<I> = {}): Promise<O[]> {
    const found: O[] = [];
    for await (const page of this.pages(range, options)) found.push(...page);
    return found;
  }

  /** The items of a range, parsed, page by page. */
  async *pages(
    range: QueryRange,
    options: QueryOptions<I> = {},
  ): AsyncGenerator<O[]> {
    const { filter, ...rest } = options;
    const pages = queryPages(this.table, range, {
      ...rest,
      ...(filter ? { filter: resolve(filter) } : {}),
    });
    for await (const page of pages) {
      yield page.map((stored) => this.parse(stored));
    }
  }

  /**
   * One request of a Query, parsed: at most `limit` items evaluated, from
   * after `startKey`; `lastKey` where the next request begins, `scanned`
   * how many items it evaluated (before the filter).
   */
  async page(
    range: QueryRange,
    options: Omit<QueryOptions<I>, 'pageSize'> & {
      limit?: number;
      startKey?: Key;
    } = {},
  ): Promise<{ items: O[]; lastKey?: Key; scanned: number }> {
    const { filter, ...rest } = options;
    const { items, lastKey, scanned } = await queryOnce(this.table, range, {
      ...rest,
      ...(filter ? { filter: resolve(filter) } : {}),
    });
    return {
      items: items.map((stored) => this.parse(stored)),
      ...(lastKey ? { lastKey } : {}),
      scanned,
    };
  }

  /** A put in a transaction. */
  putTx(
    key: Key,
    attributes: I,
    options: WriteOptions<I> & { housekeeping?: Housekeeping } = {},
  ): TransactItem {
    return this.remember(
      { Put: this.putInput(key, attributes, options) },
      options,
    );
  }

  /** An update in a transaction. */
  updateTx(
    key: Key,
    update: Update<I>,
    options: UpdateOptions<I> = {},
  ): TransactItem {
    return this.remember(
      { Update: this.updateInput(key, update, options) },
      options,
    );
  }

  /** A delete in a transaction. */
  deleteTx(key: Key, options: WriteOptions<I> = {}): TransactItem {
    return this.remember({ Delete: this.deleteInput(key, options) }, options);
  }

  /**
   * A put in a `batchWrite`: unconditional, the whole item (key, entity
   * type, attributes) as `put` writes it.
   */
  putRequest(
    key: Key,
    attributes: I,
    options: { housekeeping?: Housekeeping } = {},
  ): BatchWriteRequest {
    return {
      PutRequest: {
        Item: this.stored(key, attributes, options.housekeeping),
      },
    };
  }

  /** A condition on another item of the transaction, writing nothing. */
  checkTx(
    key: Key,
    condition: ConditionOf<I>,
    options: { otherwise?: Otherwise } = {},
  ): TransactItem {
    const p = new Placeholders();
    return this.remember(
      {
        ConditionCheck: {
          TableName: this.table.tableName,
          Key: { PK: key.PK, SK: key.SK },
          ConditionExpression: compileCondition(resolve(condition), p),
          ...placeholdersOf(p),
        },
      },
      options,
    );
  }

  private putInput(
    key: Key,
    attributes: I,
    options: WriteOptions<I> & { housekeeping?: Housekeeping },
  ) {
    const p = new Placeholders();
    const condition = conditionParts(options.if, p);
    return {
      TableName: this.table.tableName,
      Item: this.stored(key, attributes, options.housekeeping),
      ...condition,
      ...placeholdersOf(p),
    };
  }

  private updateInput(key: Key, update: Update<I>, options: UpdateOptions<I>) {
    const p = new Placeholders();
    const { type } = this.item;
    const entityType = options.entityType ?? 'set';
    const typed = {
      ...update,
      set: {
        ...options.housekeeping,
        ...update.set,
        ...(entityType === 'keep'
          ? {}
          : {
              [ENTITY_TYPE]: entityType === 'set' ? type : ifMissing(type),
            }),
      },
    } as unknown as Update<I>;
    const UpdateExpression = compileUpdate(typed, p);
    const condition = conditionParts(options.if, p);
    return {
      TableName: this.table.tableName,
      Key: { PK: key.PK, SK: key.SK },
      UpdateExpression,
      ...condition,
      ...placeholdersOf(p),
    };
  }

  private deleteInput(key: Key, options: WriteOptions<I>) {
    const p = new Placeholders();
    const condition = conditionParts(options.if, p);
    return {
      TableName: this.table.tableName,
      Key: { PK: key.PK, SK: key.SK },
      ...condition,
      ...placeholdersOf(p),
    };
  }

  private remember(item: TransactItem, options: { otherwise?: Otherwise }) {
    return options.otherwise
      ? onFailedCondition(item, options.otherwise)
      : item;
  }

  private async attempt<T>(
    write: () => Promise<T>,
    options: { otherwise?: Otherwise },
  ): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (options.otherwise && isConditionFailure(error)) {
        throw options.otherwise(error);
      }
      throw error;
    }
  }
}

/** The entity of an item type on a table. */
export const entity = <I, O>(
  table: DynamoTable,
  item: EntitySchema<I, O>,
): Entity<I, O> => new Entity(table, item);
