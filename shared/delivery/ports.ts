/**
 * Ports of delivery: what SES tells us about the mail we sent. Events are
 * recorded once each, and an address that bounced for good or complained
 * is suppressed for its organization.
 */
import type { AudienceDeps, SuppressionLookup } from '../audience/ports.ts';
import type { OrganizationsDeps } from '../organizations/ports.ts';
import type { ReadOptions } from '../ports.ts';
import type { SesEventType } from './ses-event.ts';

/** Why an address is suppressed. */
export type SuppressionReason = 'bounce' | 'complaint';

/** An address nothing is sent to again, in one organization. */
export interface Suppression {
  /** Normalized (trimmed, lower-cased). */
  email: string;
  reason: SuppressionReason;
  /** When SES reported it. */
  at: string;
  /** The message that bounced or was complained about. */
  messageId: string;
}

/** One event about one recipient of one message. */
export interface DeliveryEventRecord {
  messageId: string;
  type: SesEventType;
  /** Normalized; the message's first destination when SES names none. */
  recipient: string;
  /** When it happened, as SES says. */
  at: string;
  /** Our tags on the message, where present. */
  kind?: string;
  contactId?: string;
  campaignId?: string;
  /** Transient, Permanent or Undetermined, for a bounce. */
  bounceType?: string;
}

/**
 * Where the events of a campaign's mail are counted (the campaign's
 * statistics, kept by campaigns). It records such an event for the
 * organization as well, so campaign mail is recorded there only.
 */
export interface CampaignEventCounter {
  /**
   * Counts one event of a campaign's message to one contact, at most once,
   * in the campaign's counters and the organization's: false (and no
   * change) for a duplicate. `link` is the clicked URL of a click.
   */
  recordEvent(
    orgId: string,
    event: DeliveryEventRecord & { campaignId: string; contactId: string },
    link?: string,
  ): Promise<boolean>;
}

/** Delivery events and suppressions of the organizations. */
export interface DeliveryRepository extends SuppressionLookup {
  /**
   * Records an event and counts it, both at most once: `false` (and no
   * change) when this very event was recorded before.
   */
  recordEvent(orgId: string, event: DeliveryEventRecord): Promise<boolean>;
  /**
   * Suppresses an address; an address already suppressed keeps its first
   * reason. Idempotent.
   */
  suppress(orgId: string, suppression: Suppression): Promise<void>;
  /**
   * The suppressions among these addresses, by email; strongly consistent
   * unless `consistent` is false (half the read units).
   */
  suppressions(
    orgId: string,
    emails: readonly string[],
    options?: ReadOptions,
  ): Promise<Map<string, Suppression>>;
}

/** What delivery needs: its store, the organizations, the audience. */
export interface DeliveryDeps extends OrganizationsDeps {
  delivery: DeliveryRepository;
  lists: AudienceDeps['lists'];
  contacts: AudienceDeps['contacts'];
}
