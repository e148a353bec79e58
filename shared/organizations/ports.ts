/**
 * Ports of organizations: the store of organizations (with what is known
 * of their sending isolation) and the operator's application-wide settings.
 */
import type { CoreDeps } from '../ports.ts';
import type { Guardrail } from '../reputation/model.ts';
import type { IsolationState, Organization } from './model.ts';

/** Organizations and their application-level flags. */
export interface OrganizationRepository {
  /** Creates the organization; `ConflictError` when the slug is taken. */
  create(organization: Organization): Promise<void>;
  get(orgId: string): Promise<Organization | undefined>;
  /** Puts the organization on or off the sending allowlist; `NotFoundError` if unknown. */
  setSendingAllowed(orgId: string, allowed: boolean): Promise<void>;
  /** Sets (or, with null, clears) the organization's postal address. */
  setPostalAddress(orgId: string, postalAddress: string | null): Promise<void>;
  /** Sets (or, with null, clears back to UTC) the organization's time zone. */
  setTimezone(orgId: string, timezone: string | null): Promise<void>;
  /**
   * The organization's domain challenge token, stored on first use and
   * never changed afterwards (an adapter may keep it in memory).
   */
  challengeToken(orgId: string, candidate: string): Promise<string>;
  /** Stores what is known of the organization's sending isolation. */
  saveIsolation(orgId: string, isolation: IsolationState): Promise<void>;
  /** Sets the organization's 24-hour sending quota; `NotFoundError` if unknown. */
  setSendQuota(orgId: string, max24h: number): Promise<void>;
  /** Sets how many sequences the organization may keep; `NotFoundError` if unknown. */
  setSequenceCap(orgId: string, cap: number): Promise<void>;
  /**
   * Stores the organization's guardrail unless one is there: true when
   * this call stored it, false when one was already there.
   */
  setGuardrail(orgId: string, guardrail: Guardrail): Promise<boolean>;
  /**
   * Clears the organization's guardrail: the one cleared, or undefined
   * when there was none; `NotFoundError` if unknown.
   */
  clearGuardrail(orgId: string): Promise<Guardrail | undefined>;
}

/** What a recount found (and set) for one organization. */
export interface RecountReport {
  orgId: string;
  /** Items per counted collection (campaigns: all statuses). */
  collections: Record<string, number>;
  /** Per list: its contacts, per status, and per tag carried in it. */
  lists: {
    listId: string;
    contacts: number;
    statuses: Record<string, number>;
    tags: Record<string, number>;
    /** Per tag: its subscribed carriers in the list (a tagged send). */
    subscribedWithTag: Record<string, number>;
    /** Per topic: the list's subscribed contacts whose address declined it. */
    declinedTopics: Record<string, number>;
  }[];
  /** Addresses whose declined topics were written (opt-outs by address). */
  declinedAddresses: number;
  /** Tag index entries put back and removed. */
  tagIndex: { written: number; removed: number };
}

/**
 * The operator's repair: sets every counter of an organization to what its
 * items say and rebuilds its tag index.
 */
export interface Recounter {
  recount(orgId: string): Promise<RecountReport>;
}

/** What the rekey of an organization's suppressions did. */
export interface RekeyReport {
  orgId: string;
  /** Suppressions moved from their address to their address key. */
  moved: number;
  /**
   * Suppressions stored by address whose address key held one already
   * (written meanwhile): the old item removed, the newer one kept.
   */
  dropped: number;
}

/**
 * The operator's migration of an organization's suppressions to their
 * address keys (`admin suppressions rekey`): idempotent and resumable, each
 * suppression moved with its log entry in one transaction; once none is
 * left, marks the organization so lookups read one key per address.
 */
export interface SuppressionRekeyer {
  /** `at`: when it runs, kept on the marker. */
  rekey(orgId: string, at: string): Promise<RekeyReport>;
}

/** Application-wide settings, set by the operator. */
export interface AppSettingsRepository {
  /**
   * The settings; with `maxAgeMs`, a value this container read at most
   * that long ago may answer without a read (what a GET shows). Without
   * it, always read (what a send decides on).
   */
  get(options?: { maxAgeMs?: number }): Promise<AppSettings>;
  setSendingEnabled(enabled: boolean): Promise<void>;
}

/** Application-wide settings. */
export interface AppSettings {
  /** The application-wide sending switch. */
  sendingEnabled: boolean;
}

/** What the organizations area needs. */
export interface OrganizationsDeps extends CoreDeps {
  organizations: OrganizationRepository;
  appSettings: AppSettingsRepository;
}
