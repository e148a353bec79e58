/**
 * The benchmarks' DynamoDB meter: a middleware on the real document client
 * that asks for `ReturnConsumedCapacity` on every call and records it, so
 * the figures are those of the production code path. What AWS would
 * charge is worked out where DynamoDB Local differs:
 * - a transaction costs 2 write units per item and started KB (Local
 *   charges a flat 2 per transaction);
 * - a write refused by its condition still costs its write units (the
 *   error carries no consumed capacity): at least 1;
 * - a key a BatchGetItem did not find costs a read's minimum (Local
 *   charges only the items it found).
 */
import { performance } from 'node:perf_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The low-level names the middleware sees for write calls. */
export const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/** One call to DynamoDB. */
export interface DynamoCall {
  command: string;
  start: number;
  end: number;
  /** Capacity units DynamoDB (Local) reported. */
  capacity: number;
  /** Write units AWS would charge (0 for a read). */
  wcu: number;
  /** Read units AWS would charge (0 for a write). */
  rcu: number;
  /** Refused by its condition (or a transaction cancelled). */
  refused: boolean;
  /** Items the call read (a Query's scanned items, a batch's found ones). */
  items: number;
  /** Who made it (see {@link meterDynamo}'s `label`). */
  label: string;
  /** What it touched: the sort key (or key prefix) of its first item. */
  target: string;
  /**
   * The items a write wrote (`PK` and `SK` joined by a space), with the
   * write units each was charged: per-partition and per-item load.
   */
  written: { key: string; wcu: number }[];
}

/** The items a write call wrote, and the units each was charged. */
export const writtenItems = (
  command: string,
  input: Record<string, unknown>,
  wcu: number,
): { key: string; wcu: number }[] => {
  const keyOf = (body: unknown) => {
    const { PK, SK } = (body ?? {}) as { PK?: unknown; SK?: unknown };
    return `${String(PK)} ${String(SK)}`;
  };
  if (command === 'TransactWriteItemsCommand') {
    const items = (input.TransactItems ?? []) as Record<
      string,
      { Key?: unknown; Item?: unknown }
    >[];
    const bodies = items.flatMap((entry) =>
      Object.entries(entry)
        .filter(([kind]) => kind !== 'ConditionCheck')
        .map(([, body]) => keyOf(body?.Key ?? body?.Item)),
    );
    return bodies.map((key) => ({ key, wcu: wcu / Math.max(1, items.length) }));
  }
  if (command === 'BatchWriteItemCommand') {
    const requests = Object.values(
      (input.RequestItems ?? {}) as Record<
        string,
        { PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }[]
      >,
    ).flat();
    return requests.map((request) => ({
      key: keyOf(request.PutRequest?.Item ?? request.DeleteRequest?.Key),
      wcu: wcu / Math.max(1, requests.length),
    }));
  }
  if (!WRITE_COMMANDS.has(command)) return [];
  return [{ key: keyOf(input.Key ?? input.Item), wcu }];
};

/** DynamoDB's item size: attribute names plus values, in bytes. */
export const sizeOf = (value: unknown): number => {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Set) {
    return [...value].reduce((sum: number, v) => sum + sizeOf(v), 0);
  }
  if (Array.isArray(value)) {
    return 3 + value.reduce((sum: number, v) => sum + 1 + sizeOf(v), 0);
  }
  if (typeof value === 'object') {
    return Object.entries(value).reduce(
      (sum, [name, v]) => sum + Buffer.byteLength(name) + sizeOf(v),
      3,
    );
  }
  return 0;
};

/**
 * What AWS charges for a TransactWriteItems: 2 WCU per item per started KB
 * (a Put by its new item; an Update or a check by at least one KB).
 */
export const transactionWcu = (input: Record<string, unknown>): number => {
  const items = (input.TransactItems ?? []) as Record<
    string,
    { Item?: unknown }
  >[];
  return items.reduce((sum, entry) => {
    const put = entry.Put?.Item;
    const kb = put ? Math.max(1, Math.ceil((sizeOf(put) - 3) / 1024)) : 1;
    return sum + 2 * kb;
  }, 0);
};

/** Sums the capacity units of a response (one object, or one per table). */
export const capacityOf = (consumed: unknown): number => {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce(
    (sum: number, c: { CapacityUnits?: number }) =>
      sum + (c.CapacityUnits ?? 0),
    0,
  );
};

/**
 * The read units of keys a BatchGetItem asked for and did not find. AWS
 * reads each key of a batch as one GetItem, which costs its minimum (1
 * unit strongly consistent, 0.5 eventually) even when nothing is there;
 * DynamoDB Local reports only what it found.
 */
export const batchGetMisses = (
  input: Record<string, unknown>,
  output: Record<string, unknown>,
): number => {
  const asked = (input.RequestItems ?? {}) as Record<
    string,
    { Keys?: unknown[]; ConsistentRead?: boolean }
  >;
  const found = (output.Responses ?? {}) as Record<string, unknown[]>;
  const left = (output.UnprocessedKeys ?? {}) as Record<
    string,
    { Keys?: unknown[] }
  >;
  return Object.entries(asked).reduce((sum, [table, request]) => {
    const missing =
      (request.Keys?.length ?? 0) -
      (found[table]?.length ?? 0) -
      (left[table]?.Keys?.length ?? 0);
    return sum + Math.max(0, missing) * (request.ConsistentRead ? 1 : 0.5);
  }, 0);
};

/** How many items a read's answer says it read. */
const itemsOf = (output: Record<string, unknown>): number => {
  if (typeof output.ScannedCount === 'number') return output.ScannedCount;
  if ('Item' in output) return output.Item ? 1 : 0;
  const found = output.Responses;
  if (found && typeof found === 'object' && !Array.isArray(found)) {
    return Object.values(found as Record<string, unknown[]>).reduce(
      (sum, items) => sum + items.length,
      0,
    );
  }
  return 0;
};

/** A short name of what a call touched, for the detail listing. */
const targetOf = (input: Record<string, unknown>): string => {
  const shorten = (key: unknown) => {
    const { PK, SK } = (key ?? {}) as { PK?: unknown; SK?: unknown };
    const part = (value: unknown) =>
      String(value ?? '').replace(/[0-9A-Z]{26}|[0-9a-f-]{36}/g, '…');
    return SK === undefined ? part(PK) : `${part(PK)} ${part(SK)}`;
  };
  if (input.Key) return shorten(input.Key);
  const values = input.ExpressionAttributeValues as
    | Record<string, unknown>
    | undefined;
  if (input.KeyConditionExpression && values) {
    return `query ${Object.values(values)
      .slice(0, 2)
      .map((value) => shorten({ PK: value }))
      .join(' ')}`;
  }
  const requested = input.RequestItems as
    | Record<string, { Keys?: unknown[] }>
    | undefined;
  if (requested) {
    return Object.values(requested)
      .flatMap((request) => (request.Keys ?? []).map(shorten))
      .join(', ');
  }
  const transacted = input.TransactItems as
    | Record<string, { Key?: unknown; Item?: unknown }>[]
    | undefined;
  if (transacted) {
    return transacted
      .map((entry) => {
        const [kind, body] = Object.entries(entry)[0] ?? [];
        return `${kind} ${shorten(body?.Key ?? body?.Item)}`;
      })
      .join(', ');
  }
  return '';
};

const isRefusal = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'ConditionalCheckFailedException' ||
    error.name === 'TransactionCanceledException');

/**
 * Records every call of `client` into `calls`, labelled by `label()` at
 * the time of the call (e.g. the consumer running it).
 */
export const meterDynamo = (
  client: DynamoDBDocumentClient,
  calls: DynamoCall[],
  label: () => string = () => '',
): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const command = String(context.commandName);
      const write = WRITE_COMMANDS.has(command);
      const who = label();
      const start = performance.now();
      const record = (capacity: number, refused: boolean, items = 0) => {
        const charged =
          command === 'TransactWriteItemsCommand'
            ? transactionWcu(input)
            : Math.max(capacity, write ? 1 : 0);
        calls.push({
          command,
          start,
          end: performance.now(),
          capacity,
          wcu: write ? charged : 0,
          rcu: write ? 0 : capacity,
          refused,
          items,
          label: who,
          target: targetOf(input),
          written: writtenItems(command, input, write ? charged : 0),
        });
      };
      try {
        const result = await next(args);
        const output = result.output as Record<string, unknown>;
        record(
          capacityOf(output.ConsumedCapacity) +
            (command === 'BatchGetItemCommand'
              ? batchGetMisses(input, output)
              : 0),
          false,
          itemsOf(output),
        );
        return result;
      } catch (error) {
        if (isRefusal(error)) record(0, true);
        throw error;
      }
    },
    { step: 'initialize', name: 'benchDynamoMeter' },
  );
};

/** Milliseconds covered by at least one in-flight call. */
export const busyTime = (spans: readonly { start: number; end: number }[]) => {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let total = 0;
  let [from, to] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const { start, end } of sorted) {
    if (start > to) {
      if (to > from) total += to - from;
      [from, to] = [start, end];
    } else {
      to = Math.max(to, end);
    }
  }
  if (to > from) total += to - from;
  return total;
};

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[
      Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))
    ] ?? 0
  );
};
