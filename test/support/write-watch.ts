/**
 * Counts the writes a DynamoDB client sends, so a test that proves "this
 * call wrote nothing" scans the table only when a write was sent at all:
 * no write request, no change. Writes to the rate-limit logs (`RATE#…`)
 * are not counted, as `scanTable` leaves those logs out too.
 *
 * It also reports every item a request writes, logs included, to an
 * optional tally: each is a record of the table's change stream, which
 * wears the engine (see `renewEngineIfWorn` in dynamo.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/** A key attribute as the document client or the plain client holds it. */
const text = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : String((value as { S?: unknown } | undefined)?.S ?? '');

type Keyed = { PK?: unknown } | undefined;

/** The partition keys a write request names (items put, keys updated). */
const writtenKeys = (command: string, input: Record<string, unknown>) => {
  const keyOf = (item: Keyed) => text(item?.PK);
  switch (command) {
    case 'PutItemCommand':
      return [keyOf(input.Item as Keyed)];
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return [keyOf(input.Key as Keyed)];
    case 'BatchWriteItemCommand':
      return Object.values(
        (input.RequestItems ?? {}) as Record<
          string,
          { PutRequest?: { Item: Keyed }; DeleteRequest?: { Key: Keyed } }[]
        >,
      ).flatMap((requests) =>
        requests.map((request) =>
          keyOf(request.PutRequest?.Item ?? request.DeleteRequest?.Key),
        ),
      );
    default:
      return (
        (input.TransactItems ?? []) as {
          Put?: { Item: Keyed };
          Update?: { Key: Keyed };
          Delete?: { Key: Keyed };
        }[]
      ).flatMap((item) =>
        item.Put
          ? [keyOf(item.Put.Item)]
          : item.Update
            ? [keyOf(item.Update.Key)]
            : item.Delete
              ? [keyOf(item.Delete.Key)]
              : [],
      );
  }
};

/** A client's count of writes sent, rate-limit logs aside. */
export interface WriteWatch {
  readonly count: number;
}

/**
 * Adds the count to a client (and to the plain client it was made from);
 * `onItemsWritten` hears how many items each write request names.
 */
export const watchWrites = (
  client: DynamoDBDocumentClient,
  onItemsWritten: (items: number) => void = () => {},
): { client: DynamoDBDocumentClient; writes: WriteWatch } => {
  const writes = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      if (WRITES.has(command)) {
        const keys = writtenKeys(
          command,
          args.input as Record<string, unknown>,
        );
        if (keys.some((key) => !key.startsWith('RATE#'))) writes.count++;
        onItemsWritten(keys.length);
      }
      return next(args);
    },
    { step: 'initialize', name: 'watchWrites' },
  );
  return { client, writes };
};
