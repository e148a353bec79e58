/**
 * Ports of the settings: the organization's double opt-in settings.
 */
import type { SendingDeps } from '../sending/ports.ts';
import type { OptinSettings } from './optin.ts';

/** The organization's double opt-in settings. */
export interface OptinSettingsRepository {
  get(orgId: string): Promise<OptinSettings>;
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
