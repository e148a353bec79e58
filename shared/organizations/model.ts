/**
 * Organization model: the tenant. Every resource belongs to exactly one.
 */
import slugifyText from '@sindresorhus/slugify';
import type { Guardrail } from '../reputation/model.ts';

/** A tenant of the service. */
export interface Organization {
  id: string;
  name: string;
  slug: string;
  /** On the sending allowlist (set by the operator). */
  sendingAllowed: boolean;
  createdAt: string;
  /** Legal mention shown in emails ({{postalAddress}}). */
  postalAddress?: string;
  /** The last known state of its sending isolation, once attempted. */
  isolation?: IsolationState;
  /**
   * How many emails it may send in any 24 hours, set by the operator;
   * unset: DEFAULT_SEND_QUOTA_24H (read it with `sendQuotaOf`).
   */
  sendQuota24h?: number;
  /**
   * The IANA time zone its sending times are read in (a step's time of
   * day); unset: DEFAULT_TIMEZONE (read it with `timeZoneOf`).
   */
  timezone?: string;
  /**
   * How many sequences it may keep (paused ones count), set by the
   * operator; unset: DEFAULT_SEQUENCE_CAP (read it with `sequenceCapOf`).
   */
  sequenceCap?: number;
  /**
   * Its sending stopped by its own reputation (bounce or complaint rate
   * past our thresholds), until the operator lifts it.
   */
  guardrail?: Guardrail;
}

/** The time zone of an organization that did not choose one. */
export const DEFAULT_TIMEZONE = 'UTC';

/** The time zone an organization's sending times are read in. */
export const timeZoneOf = (org: Pick<Organization, 'timezone'>): string =>
  org.timezone ?? DEFAULT_TIMEZONE;

/**
 * The 24-hour sending quota of an organization whose quota the operator did
 * not set.
 */
export const DEFAULT_SEND_QUOTA_24H = 10_000;

/**
 * Sequences an organization may keep when the operator set no cap (paused
 * ones count; series do not).
 */
export const DEFAULT_SEQUENCE_CAP = 20;

/** What is known of an organization's sending isolation (SES tenant). */
export interface IsolationState {
  provisioning: 'none' | 'provisioned' | 'incomplete';
  /** DISABLED: the provider suspended the organization. */
  sendingStatus: 'ENABLED' | 'DISABLED';
  checkedAt: string;
}

/**
 * Turns a name into a URL slug (lowercase ASCII words and dashes) of at
 * most `maxLength` characters; `fallback` when the name has no letter or
 * digit to make one from.
 */
export const slugFrom = (
  name: string,
  fallback: string,
  maxLength: number,
): string =>
  slugifyText(name).slice(0, maxLength).replace(/-+$/, '') || fallback;

/** Turns a display name into an organization's slug (`org` for a name without letters). */
export const slugify = (name: string): string => slugFrom(name, 'org', 48);
