/**
 * The application settings item as this container last read it, shared by
 * the adapters that read it: the settings repository, and the key lookup,
 * which reads the item beside the key in the same request (a cold container
 * learns the application switch without a request of its own, and the
 * switch a GET shows is as old as the key it authenticated with).
 */
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { AppSettings } from '../../organizations/ports.ts';
import type { DynamoTable } from './dynamo-table.ts';

export const AppSettingsItem = itemSchema('AppSettings', {
  // Sending is on until the operator switches it off.
  sendingEnabled: v.optional(v.boolean(), true),
});

/** The settings an item holds; a missing item is the defaults. */
export const appSettingsOf = (
  item: Record<string, unknown> | undefined,
): AppSettings => parseItem(AppSettingsItem, item ?? {}, keys.appSettings());

interface Memo {
  settings: AppSettings;
  /** Monotonic milliseconds. */
  readAt: number;
}

/** Per client and table: adapters over the same table share the memo. */
const memos = new WeakMap<object, Map<string, Memo>>();

const memosOf = (table: DynamoTable) => {
  let byTable = memos.get(table.client);
  if (!byTable) {
    byTable = new Map();
    memos.set(table.client, byTable);
  }
  return byTable;
};

/** Remembers settings read at `readAt` (a read started then). */
export const rememberAppSettings = (
  table: DynamoTable,
  settings: AppSettings,
  readAt: number,
): void => {
  const byTable = memosOf(table);
  const known = byTable.get(table.tableName);
  // An older read finishing late never replaces a newer one.
  if (known && known.readAt > readAt) return;
  byTable.set(table.tableName, { settings, readAt });
};

/** The settings last read, if read within `maxAgeMs`. */
export const recentAppSettings = (
  table: DynamoTable,
  maxAgeMs: number,
): AppSettings | undefined => {
  const known = memosOf(table).get(table.tableName);
  return known && performance.now() - known.readAt <= maxAgeMs
    ? known.settings
    : undefined;
};

/** Forgets the settings (they are being changed). */
export const forgetAppSettings = (table: DynamoTable): void => {
  memosOf(table).delete(table.tableName);
};
