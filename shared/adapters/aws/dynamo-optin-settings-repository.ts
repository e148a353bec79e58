/**
 * Driven adapter: an organization's double opt-in settings. An organization
 * that never changed them reads the defaults.
 */
import * as v from 'valibot';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import type { Organization } from '../../organizations/model.ts';
import {
  DEFAULT_OPTIN_CONTENT,
  DEFAULT_OPTIN_SUBJECT,
  type OptinSettings,
} from '../../settings/optin.ts';
import type { OptinSettingsRepository } from '../../settings/ports.ts';
import { entity } from './dynamo-entity.ts';
import { organizationFromItem } from './dynamo-organization-repository.ts';
import { batchGet, type DynamoTable } from './dynamo-table.ts';

/** Settings never changed read as the defaults: '' stands for the default. */
const OptinSettingsItem = itemSchema('OptinSettings', {
  required: v.optional(v.boolean(), false),
  subject: v.optional(v.string(), ''),
  content: v.optional(v.string(), ''),
});

/** The settings an item holds, the defaults where it holds none. */
const settingsOf = ({
  required,
  subject,
  content,
}: ItemOf<typeof OptinSettingsItem>): OptinSettings => ({
  required,
  subject: subject || DEFAULT_OPTIN_SUBJECT,
  content: content || DEFAULT_OPTIN_CONTENT,
  customized: content !== '',
});

/** Reads the opt-in settings item of an organization. */
export class DynamoOptinSettingsRepository implements OptinSettingsRepository {
  private readonly settings;

  constructor(private readonly table: DynamoTable) {
    this.settings = entity(table, OptinSettingsItem);
  }

  async get(orgId: string): Promise<OptinSettings> {
    const key = keys.optinSettings(orgId);
    return settingsOf(
      (await this.settings.get(key)) ?? this.settings.parse({}, key),
    );
  }

  async getWithOrganization(orgId: string): Promise<{
    organization: Organization | undefined;
    optin: OptinSettings;
  }> {
    const [settingsKey, orgKey] = [
      keys.optinSettings(orgId),
      keys.organization(orgId),
    ];
    const items = await batchGet(this.table, [orgKey, settingsKey], {
      consistent: false,
    });
    const find = (key: Key) =>
      items.find((item) => item.PK === key.PK && item.SK === key.SK);
    const org = find(orgKey);
    return {
      organization: org ? organizationFromItem(org) : undefined,
      optin: settingsOf(
        this.settings.parse(find(settingsKey) ?? {}, settingsKey),
      ),
    };
  }

  async save(
    orgId: string,
    settings: Pick<OptinSettings, 'required' | 'subject' | 'content'>,
  ): Promise<void> {
    await this.settings.put(keys.optinSettings(orgId), {
      required: settings.required,
      subject: settings.subject,
      content: settings.content,
    });
  }
}
