/**
 * Driven adapter: the application-wide settings item.
 */
import { performance } from 'node:perf_hooks';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { ENTITY_TYPE, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type {
  AppSettings,
  AppSettingsRepository,
} from '../../organizations/ports.ts';
import type { DynamoTable } from './dynamo-table.ts';

const AppSettingsItem = itemSchema('AppSettings', {
  // Sending is on until the operator switches it off.
  sendingEnabled: v.optional(v.boolean(), true),
});

/** Application settings; sending is on until the operator switches it off. */
export class DynamoAppSettingsRepository implements AppSettingsRepository {
  /** The last value this container read, and when (monotonic ms). */
  private last: { settings: AppSettings; readAt: number } | undefined;

  constructor(private readonly table: DynamoTable) {}

  async get(options: { maxAgeMs?: number } = {}): Promise<AppSettings> {
    const { maxAgeMs } = options;
    if (
      maxAgeMs !== undefined &&
      this.last &&
      performance.now() - this.last.readAt <= maxAgeMs
    ) {
      return this.last.settings;
    }
    const readAt = performance.now();
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.appSettings(),
      }),
    );
    const settings = parseItem(AppSettingsItem, Item ?? {}, keys.appSettings());
    this.last = { settings, readAt };
    return settings;
  }

  async setSendingEnabled(enabled: boolean): Promise<void> {
    this.last = undefined;
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
  }
}
