/**
 * Many messages to a queue: batches of at most ten and 256 KB where the
 * sender can batch, one by one where it cannot.
 */
import { describe, expect, it } from 'vitest';
import {
  MessagesRefusedError,
  type QueueMessage,
} from '../../../shared/ports.ts';
import { batchesOf, sendAll } from '../../../shared/webhooks/send-all.ts';

/** What a call rejected with. */
const rejectionOf = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

/** A refusal of the messages of a batch. */
const refusalOf = (messages: readonly QueueMessage[]) =>
  new MessagesRefusedError(
    messages.map(({ message }) => ({
      message,
      code: 'InvalidParameterValue',
      reason: 'too long',
    })),
  );

describe('sending many messages', () => {
  it('cuts batches at ten messages and at 256 KB of bodies', () => {
    // Arrange
    const small = Array.from({ length: 23 }, (_, n) => ({ message: { n } }));
    const big = Array.from({ length: 3 }, () => ({
      message: 'x'.repeat(100 * 1024),
    }));

    // Act
    const bySize = batchesOf(small).map((batch) => batch.length);
    const byBytes = batchesOf(big).map((batch) => batch.length);

    // Assert
    expect(bySize).toEqual([10, 10, 3]);
    expect(byBytes).toEqual([2, 1]);
  });

  it('sends one by one through a sender that cannot batch', async () => {
    // Arrange
    const sent: unknown[] = [];
    const queue = { send: async (message: unknown) => void sent.push(message) };

    // Act
    await sendAll(queue, [{ message: 1 }, { message: 2 }]);

    // Assert
    expect(sent).toEqual([1, 2]);
  });

  it('measures a message as the body it is sent as, escapes included', () => {
    // Arrange: 25,000 emoji are 100 KB of JSON, 300 KB once escaped.
    const emoji = Array.from({ length: 3 }, () => ({
      message: '🎉'.repeat(25_000),
    }));

    // Act
    const batches = batchesOf(emoji).map((batch) => batch.length);

    // Assert
    expect(batches).toEqual([1, 1, 1]);
  });

  it('sends every batch and names every refused message in one refusal', async () => {
    // Arrange: three batches; the first and the last each refuse a message.
    const sent: unknown[] = [];
    const queue = {
      send: async () => {},
      sendBatch: async (batch: readonly QueueMessage[]) => {
        const refused = batch.filter(
          ({ message }) => message === 0 || message === 29,
        );
        sent.push(
          ...batch.filter((m) => !refused.includes(m)).map((m) => m.message),
        );
        if (refused.length > 0) throw refusalOf(refused);
      },
    };
    const messages = Array.from({ length: 30 }, (_, n) => ({ message: n }));

    // Act
    const error = await rejectionOf(sendAll(queue, messages));

    // Assert
    expect(error).toBeInstanceOf(MessagesRefusedError);
    expect(
      (error as MessagesRefusedError).refused.map(({ message }) => message),
    ).toEqual([0, 29]);
    expect(sent).toHaveLength(28);
  });

  it('rejects with an error a retry may cure rather than a refusal beside it', async () => {
    // Arrange: one by one; one message refused, one throttled.
    const throttled = new Error('throttled');
    const queue = {
      send: async (message: unknown) => {
        if (message === 1) throw refusalOf([{ message }]);
        if (message === 2) throw throttled;
      },
    };

    // Act
    const error = await rejectionOf(
      sendAll(queue, [{ message: 1 }, { message: 2 }, { message: 3 }]),
    );

    // Assert
    expect(error).toBe(throttled);
  });
});
