/**
 * Sends many messages to a queue: ten to a request (SQS's batch limit, and
 * at most 256 KB together) where the sender can batch, one by one where it
 * cannot.
 */
import { messageBytes } from '../message-body.ts';
import {
  MessagesRefusedError,
  type QueueMessage,
  type QueueSender,
} from '../ports.ts';

/** Messages of one SendMessageBatch request at most. */
const BATCH_COUNT = 10;

/** Bytes of one SendMessageBatch request at most (the bodies together). */
const BATCH_BYTES = 256 * 1024;

/**
 * The messages in batches of at most ten and 256 KB, each measured as the
 * body it is sent as.
 */
export const batchesOf = (
  messages: readonly QueueMessage[],
): QueueMessage[][] => {
  const batches: QueueMessage[][] = [];
  let batch: QueueMessage[] = [];
  let bytes = 0;
  for (const entry of messages) {
    const size = messageBytes(entry.message);
    if (
      batch.length === BATCH_COUNT ||
      (batch.length > 0 && bytes + size > BATCH_BYTES)
    ) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
};

/**
 * Sends every message, each batch whatever became of the others. Rejects
 * if one was not taken: with the first error that a retry may cure (all
 * may be sent again), else with one `MessagesRefusedError` naming every
 * message the queue refused (every other was sent).
 */
export const sendAll = async (
  queue: QueueSender,
  messages: readonly QueueMessage[],
): Promise<void> => {
  if (messages.length === 0) return;
  const { sendBatch } = queue;
  const results = await Promise.allSettled(
    sendBatch
      ? batchesOf(messages).map((batch) => sendBatch.call(queue, batch))
      : messages.map(({ message, options }) => queue.send(message, options)),
  );
  const errors = results.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const refusals = errors.filter(
    (error): error is MessagesRefusedError =>
      error instanceof MessagesRefusedError,
  );
  const [other] = errors.filter(
    (error) => !(error instanceof MessagesRefusedError),
  );
  if (refusals.length < errors.length) throw other;
  if (refusals.length > 0) {
    throw new MessagesRefusedError(refusals.flatMap(({ refused }) => refused));
  }
};
