/**
 * The send pacer on the embedded engine: runs of a lane follow one
 * another, an idle lane starts now, lanes are timelines of their own,
 * senders reserving at once are never refused and never overlap, and an
 * unused end of a run goes back to its lane only while it is the lane's end;
 * sends that start take blocks of lanes in turn, each once.
 */
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../support/dynamo.ts';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');

describe('DynamoSendPacer', () => {
  it('starts an idle lane now, and the next run where the last one ends', async () => {
    // Arrange
    const { deps } = await createTestDeps();

    // Act
    const first = await deps.pacer.reserve(0, 10, 20, new Date(NOW));
    const second = await deps.pacer.reserve(0, 4, 20, new Date(NOW + 100));

    // Assert
    expect(first).toBe(NOW);
    expect(second).toBe(NOW + 500);
  });

  it('lends nothing from the past: a lane idle again starts its run now', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    await deps.pacer.reserve(0, 10, 20, new Date(NOW));

    // Act
    const later = await deps.pacer.reserve(0, 10, 20, new Date(NOW + 60_000));

    // Assert
    expect(later).toBe(NOW + 60_000);
  });

  it('keeps each lane a timeline of its own: a busy lane does not delay another', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    await deps.pacer.reserve(0, 100, 20, new Date(NOW));

    // Act
    const other = await deps.pacer.reserve(1, 10, 20, new Date(NOW + 10));
    const same = await deps.pacer.reserve(0, 10, 20, new Date(NOW + 10));

    // Assert
    expect(other).toBe(NOW + 10);
    expect(same).toBe(NOW + 5_000);
  });

  it('serves senders reserving at once, idle or busy, without refusing one: their runs never overlap', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const reserveAll = (at: number) =>
      Promise.all(
        Array.from({ length: 40 }, () =>
          deps.pacer.reserve(3, 2, 10, new Date(at)),
        ),
      );

    // Act
    const fromIdle = await reserveAll(NOW);
    const whileBusy = await reserveAll(NOW + 1_000);

    // Assert
    const starts = [...fromIdle, ...whileBusy].sort((a, b) => a - b);
    expect(starts).toEqual(starts.map((_, i) => NOW + i * 200));
  });

  it('takes back the unused end of a run while nobody reserved after it, and not once somebody did', async () => {
    // Arrange: a run of 10 at 20/s (500 ms), 4 of them used.
    const { deps } = await createTestDeps();
    const start = await deps.pacer.reserve(0, 10, 20, new Date(NOW));

    // Act
    const givenBack = await deps.pacer.giveBack(0, start + 200, start + 500);
    const next = await deps.pacer.reserve(0, 2, 20, new Date(NOW + 10));
    const again = await deps.pacer.giveBack(0, start + 100, start + 500);

    // Assert
    expect(givenBack).toBe(true);
    expect(next).toBe(start + 200);
    expect(again).toBe(false);
    expect(await deps.pacer.reserve(0, 1, 20, new Date(NOW + 20))).toBe(
      start + 300,
    );
  });

  it('hands out blocks of lanes in turn, each once, to sends starting at once', async () => {
    // Arrange
    const { deps } = await createTestDeps();

    // Act
    const blocks = await Promise.all(
      Array.from({ length: 12 }, () => deps.pacer.nextBlock()),
    );

    // Assert
    expect(blocks.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, i) => i),
    );
  });
});
