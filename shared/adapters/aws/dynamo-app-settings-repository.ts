/**
 * Driven adapter: the application-wide settings item.
 */
import { performance } from 'node:perf_hooks';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ENTITY_TYPE } from '../../db/items.ts';
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
import type { DynamoTable } from './dynamo-table.ts';

/**
 * Application settings; sending is on until the operator switches it off.
 * A read with `maxAgeMs` may be answered by the value this container last
 * read (here, or beside an API key: see `app-settings-memo.ts`).
 */
export class DynamoAppSettingsRepository implements AppSettingsRepository {
  constructor(private readonly table: DynamoTable) {}

  async get(options: { maxAgeMs?: number } = {}): Promise<AppSettings> {
    const { maxAgeMs } = options;
    if (maxAgeMs !== undefined) {
      const recent = recentAppSettings(this.table, maxAgeMs);
      if (recent) return recent;
    }
    const readAt = performance.now();
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.appSettings(),
      }),
    );
    const settings = appSettingsOf(Item);
    rememberAppSettings(this.table, settings, readAt);
    return settings;
  }

  async setSendingEnabled(enabled: boolean): Promise<void> {
    forgetAppSettings(this.table);
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.appSettings(),
        UpdateExpression: 'SET sendingEnabled = :enabled, #type = :type',
        ExpressionAttributeNames: { '#type': ENTITY_TYPE },
        ExpressionAttributeValues: {
          ':enabled': enabled,
          ':type': AppSettingsItem.type,
        },
      }),
    );
    // A read that raced the write may have remembered the old value.
    forgetAppSettings(this.table);
  }
}
