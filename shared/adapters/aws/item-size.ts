/**
 * DynamoDB refuses a record over 400 KB (`ValidationException: Item size
 * has exceeded the maximum allowed size`, or a transaction cancelled for
 * it). Every input limit is set so that this never happens; should one be
 * missed, the caller still gets a 413 naming the cause, never a 500. The
 * guard sits on the client, so every store of every function has it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PayloadTooLargeError } from '../../errors.ts';

const ITEM_SIZE = /item size.*exceeded|exceeded.*item size/i;

interface ProviderError {
  name?: unknown;
  message?: unknown;
  CancellationReasons?: { Code?: string; Message?: string }[];
}

/** True when DynamoDB refused a write for the size of a record. */
export const isItemSizeRefusal = (error: unknown): boolean => {
  if (!error || typeof error !== 'object') return false;
  const { name, message, CancellationReasons } = error as ProviderError;
  if (name === 'ValidationException') {
    return typeof message === 'string' && ITEM_SIZE.test(message);
  }
  if (name === 'TransactionCanceledException') {
    return (CancellationReasons ?? []).some(
      (reason) =>
        reason.Code === 'ValidationError' &&
        ITEM_SIZE.test(reason.Message ?? ''),
    );
  }
  return false;
};

/**
 * Adds the guard to a DynamoDB client (a document client made from it
 * shares its middleware): an item-size refusal becomes a
 * `PayloadTooLargeError` (413 `request.tooLarge`), its cause kept.
 */
export const refuseOversizedItems = <C extends DynamoDBClient>(
  client: C,
): C => {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (!isItemSizeRefusal(error)) throw error;
        throw new PayloadTooLargeError(
          'request.tooLarge',
          'What this request would store is over the 400 KB one record holds: send a shorter text or fewer values',
          { cause: error },
        );
      }
    },
    { step: 'initialize', name: 'refuseOversizedItems' },
  );
  return client;
};
