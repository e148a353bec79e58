/**
 * Driven adapter: an organization's double opt-in settings. An organization
 * that never changed them reads the defaults.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import {
  DEFAULT_OPTIN_CONTENT,
  DEFAULT_OPTIN_SUBJECT,
  type OptinSettings,
} from '../../settings/optin.ts';
import type { OptinSettingsRepository } from '../../settings/ports.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** Settings never changed read as the defaults: '' stands for the default. */
const OptinSettingsItem = itemSchema('OptinSettings', {
  required: v.optional(v.boolean(), false),
  subject: v.optional(v.string(), ''),
  content: v.optional(v.string(), ''),
});

/** Reads the opt-in settings item of an organization. */
export class DynamoOptinSettingsRepository implements OptinSettingsRepository {
  constructor(private readonly table: DynamoTable) {}

  async get(orgId: string): Promise<OptinSettings> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.optinSettings(orgId),
      }),
    );
    const { required, subject, content } = parseItem(
      OptinSettingsItem,
      Item ?? {},
      keys.optinSettings(orgId),
    );
    return {
      required,
      subject: subject || DEFAULT_OPTIN_SUBJECT,
      content: content || DEFAULT_OPTIN_CONTENT,
      customized: content !== '',
    };
  }

  async save(
    orgId: string,
    settings: Pick<OptinSettings, 'required' | 'subject' | 'content'>,
  ): Promise<void> {
    await this.table.client.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: {
          ...keys.optinSettings(orgId),
          ...entityType('OptinSettings'),
          required: settings.required,
          subject: settings.subject,
          content: settings.content,
        },
      }),
    );
  }
}
