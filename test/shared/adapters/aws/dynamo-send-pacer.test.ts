/**
 * The send pacer on the embedded engine: runs of the account's rate follow
 * one another, an idle account starts now, and senders reserving at once
 * are never refused and never overlap.
 */
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../support/dynamo.ts';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');

describe('DynamoSendPacer', () => {
  it('starts an idle account now, and the next run where the last one ends', async () => {
    // Arrange
    const { deps } = await createTestDeps();

    // Act
    const first = await deps.pacer.reserve(10, 20, new Date(NOW));
    const second = await deps.pacer.reserve(4, 20, new Date(NOW + 100));

    // Assert
    expect(first).toBe(NOW);
    expect(second).toBe(NOW + 500);
  });

  it('lends nothing from the past: an account idle again starts its run now', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    await deps.pacer.reserve(10, 20, new Date(NOW));

    // Act
    const later = await deps.pacer.reserve(10, 20, new Date(NOW + 60_000));

    // Assert
    expect(later).toBe(NOW + 60_000);
  });

  it('serves senders reserving at once, idle or busy, without refusing one: their runs never overlap', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const reserveAll = (at: number) =>
      Promise.all(
        Array.from({ length: 40 }, () =>
          deps.pacer.reserve(2, 10, new Date(at)),
        ),
      );

    // Act
    const fromIdle = await reserveAll(NOW);
    const whileBusy = await reserveAll(NOW + 1_000);

    // Assert
    const starts = [...fromIdle, ...whileBusy].sort((a, b) => a - b);
    expect(starts).toEqual(starts.map((_, i) => NOW + i * 200));
  });
});
