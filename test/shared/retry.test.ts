import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../shared/errors.ts';
import { CONFLICT_ATTEMPTS, retryOnConflict } from '../../shared/retry.ts';

const raced = () =>
  new ConflictError('contact.changed', 'The thing changed meanwhile');

describe('retryOnConflict', () => {
  it('runs a step that keeps losing races CONFLICT_ATTEMPTS times, then surfaces its last conflict', async () => {
    // Arrange
    const thrown: ConflictError[] = [];
    // Act
    const error = await retryOnConflict(async (retryable) => {
      const conflict = raced();
      thrown.push(conflict);
      return Promise.reject(conflict).catch(retryable);
    }).catch((e: unknown) => e);
    // Assert
    expect(CONFLICT_ATTEMPTS).toBe(5);
    expect(thrown).toHaveLength(CONFLICT_ATTEMPTS);
    expect(error).toBe(thrown.at(-1));
  });

  it('answers the result of the first attempt that wins', async () => {
    // Arrange
    const attempts: number[] = [];
    // Act
    const result = await retryOnConflict(async (retryable, attempt) => {
      attempts.push(attempt);
      if (attempt < 3) retryable(raced());
      return 'saved';
    });
    // Assert
    expect(result).toBe('saved');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('does not retry a conflict the step did not mark (a rule refusing)', async () => {
    // Arrange
    let runs = 0;
    const refusal = new ConflictError('contact.cannotResubscribe', 'No');
    // Act
    const error = await retryOnConflict(async () => {
      runs++;
      throw refusal;
    }).catch((e: unknown) => e);
    // Assert
    expect(error).toBe(refusal);
    expect(runs).toBe(1);
  });

  it('does not retry any other error, even one passed through retryable', async () => {
    // Arrange
    let runs = 0;
    const gone = new NotFoundError('contact.notFound', 'No thing');
    // Act
    const error = await retryOnConflict(async (retryable) => {
      runs++;
      return Promise.reject(gone).catch(retryable);
    }).catch((e: unknown) => e);
    // Assert
    expect(error).toBe(gone);
    expect(runs).toBe(1);
  });

  it('waits between attempts with a bounded, jittered backoff', async () => {
    // Arrange
    const started = performance.now();
    // Act
    await retryOnConflict(async (retryable) => retryable(raced())).catch(
      () => {},
    );
    // Assert: 4 waits of at least 10, 20, 40 and 80 ms, at most twice that.
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(150);
    expect(waited).toBeLessThan(1000);
  });
});
