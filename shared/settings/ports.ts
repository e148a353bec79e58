/**
 * Ports of the settings: the organization's double opt-in settings.
 */
import type { Organization } from '../organizations/model.ts';
import type { SendingDeps } from '../sending/ports.ts';
import type { OptinSettings } from './optin.ts';

/** The organization's double opt-in settings. */
export interface OptinSettingsRepository {
  get(orgId: string): Promise<OptinSettings>;
  /** The settings and their organization, read together. */
  getWithOrganization(orgId: string): Promise<{
    organization: Organization | undefined;
    optin: OptinSettings;
  }>;
  /** Stores the settings; an empty content means the default. */
  save(
    orgId: string,
    settings: Pick<OptinSettings, 'required' | 'subject' | 'content'>,
  ): Promise<void>;
}

/** What the settings need: the opt-in store and the sending setup. */
export interface SettingsDeps extends SendingDeps {
  optinSettings: OptinSettingsRepository;
}
