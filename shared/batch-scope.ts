/**
 * Work the records of one batch share, for both kinds of consumers (queue
 * and stream): a value per key, made by the first record that asks for it,
 * handed to the others, and closed once after every record was handled —
 * one counter write for a hundred SES events, one publish for the webhook
 * events of a hundred contact writes. A value that fails to close fails
 * every record that asked for it, so each consumer retries them its way.
 */
import { logger } from './observability.ts';

/**
 * The batch a record came in, for work its records share and finish
 * together once each was handled.
 */
export interface BatchScope {
  /**
   * The batch's value under `key`: made by `open` for the first record
   * that asks, the same for the others. Once every record of the batch
   * was handled, `close` runs once per value; if it fails, every record
   * that asked for the value is retried, so `close` and the calls before
   * it must make a repeat harmless.
   */
  share<T>(key: string, open: () => T, close: (value: T) => Promise<void>): T;
}

/** A value the records of a batch share, and who asked for it. */
interface SharedValue {
  value: unknown;
  close: (value: unknown) => Promise<void>;
  records: Set<string>;
}

/** The shared values of one batch. */
export class SharedValues {
  private readonly values = new Map<string, SharedValue>();

  /** The scope of one record, named by `record` (its message id, its sequence number). */
  scopeOf(record: string): BatchScope {
    return {
      share: <T>(
        key: string,
        open: () => T,
        close: (value: T) => Promise<void>,
      ): T => {
        let entry = this.values.get(key);
        if (!entry) {
          entry = {
            value: open(),
            close: close as SharedValue['close'],
            records: new Set(),
          };
          this.values.set(key, entry);
        }
        entry.records.add(record);
        return entry.value as T;
      },
    };
  }

  /**
   * Closes every value once, in the order first asked for; returns the
   * records of the values that failed to close (each logged), to retry.
   */
  async close(consumer: string): Promise<Set<string>> {
    const failed = new Set<string>();
    for (const [key, entry] of this.values) {
      try {
        await entry.close(entry.value);
      } catch (error) {
        logger.warn(
          'A shared value of the batch failed to close: its records are retried',
          {
            consumer,
            key,
            records: entry.records.size,
            error: error instanceof Error ? error.message : String(error),
          },
        );
        for (const record of entry.records) failed.add(record);
      }
    }
    return failed;
  }
}
