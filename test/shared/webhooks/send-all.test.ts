/**
 * Many messages to a queue: batches of at most ten and 256 KB where the
 * sender can batch, one by one where it cannot.
 */
import { describe, expect, it } from 'vitest';
import { batchesOf, sendAll } from '../../../shared/webhooks/send-all.ts';

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
});
