/**
 * Driven adapter: the application-wide settings item.
 */
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
  constructor(private readonly table: DynamoTable) {}

  async get(): Promise<AppSettings> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.appSettings(),
      }),
    );
    return parseItem(AppSettingsItem, Item ?? {}, keys.appSettings());
  }

  async setSendingEnabled(enabled: boolean): Promise<void> {
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
