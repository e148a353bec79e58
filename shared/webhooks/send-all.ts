/**
 * Sends many messages to a queue: ten to a request (SQS's batch limit, and
 * at most 256 KB together) where the sender can batch, one by one where it
 * cannot.
 */
import type { QueueMessage, QueueSender } from '../ports.ts';

/** Messages of one SendMessageBatch request at most. */
const BATCH_COUNT = 10;

/** Bytes of one SendMessageBatch request at most (the bodies together). */
const BATCH_BYTES = 256 * 1024;

/** The messages in batches of at most ten and 256 KB. */
export const batchesOf = (
  messages: readonly QueueMessage[],
): QueueMessage[][] => {
  const batches: QueueMessage[][] = [];
  let batch: QueueMessage[] = [];
  let bytes = 0;
  for (const entry of messages) {
    const size = Buffer.byteLength(JSON.stringify(entry.message) ?? '');
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

/** Sends every message; rejects if one was not taken (all may be sent again). */
export const sendAll = async (
  queue: QueueSender,
  messages: readonly QueueMessage[],
): Promise<void> => {
  if (messages.length === 0) return;
  const { sendBatch } = queue;
  if (!sendBatch) {
    await Promise.all(
      messages.map(({ message, options }) => queue.send(message, options)),
    );
    return;
  }
  await Promise.all(
    batchesOf(messages).map((batch) => sendBatch.call(queue, batch)),
  );
};
