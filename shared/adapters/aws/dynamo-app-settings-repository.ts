/**
 * Driven adapter: the application-wide settings item.
 */
import { performance } from 'node:perf_hooks';
import { keys } from '../../db/keys.ts';
import type {
  AppSettings,
  AppSettingsRepository,
} from '../../organizations/ports.ts';
import {
  AppSettingsItem,
  appSettingsOf,
  forgetAppSettings,
  recentAppSettings,
  rememberAppSettings,
} from './app-settings-memo.ts';
import { entity } from './dynamo-entity.ts';
import type { DynamoTable } from './dynamo-table.ts';

/**
 * Application settings; sending is on until the operator switches it off.
 * A read with `maxAgeMs` may be answered by the value this container last
 * read (here, or beside an API key: see `app-settings-memo.ts`).
 */
export class DynamoAppSettingsRepository implements AppSettingsRepository {
  private readonly settings;

  constructor(private readonly table: DynamoTable) {
    this.settings = entity(table, AppSettingsItem);
  }

  async get(options: { maxAgeMs?: number } = {}): Promise<AppSettings> {
    const { maxAgeMs } = options;
    if (maxAgeMs !== undefined) {
      const recent = recentAppSettings(this.table, maxAgeMs);
      if (recent) return recent;
    }
    const readAt = performance.now();
    const settings =
      (await this.settings.get(keys.appSettings())) ?? appSettingsOf(undefined);
    rememberAppSettings(this.table, settings, readAt);
    return settings;
  }

  async setSendingEnabled(enabled: boolean): Promise<void> {
    forgetAppSettings(this.table);
    await this.settings.update(keys.appSettings(), {
      set: { sendingEnabled: enabled },
    });
    // A read that raced the write may have remembered the old value.
    forgetAppSettings(this.table);
  }
}
