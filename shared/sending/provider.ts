/**
 * What the domain needs of the email provider (Amazon SES v2): domain
 * identities with Easy DKIM and a custom MAIL FROM, one tenant per
 * organization (sending isolation), and the account's quota. Adapters:
 * `adapters/aws/ses-email-provider.ts` (SES v2) and
 * `adapters/local/local-email-provider.ts` (the local stand-in).
 *
 * Every method throws `ServiceUnavailableError` (code `provider.unavailable`)
 * when the provider cannot be reached, and nothing else for that case.
 */

import * as v from 'valibot';

/** Types of the DNS records a domain needs. */
export const DNS_RECORD_TYPES = ['TXT', 'CNAME', 'MX'] as const;

/** What each DNS record of a domain is for. */
export const DNS_RECORD_PURPOSES = [
  'ownership',
  'dkim',
  'mail_from',
  'dmarc',
] as const;

/** A DNS record to publish. */
export const DnsRecord = v.pipe(
  v.object({
    type: v.picklist(DNS_RECORD_TYPES),
    name: v.pipe(
      v.string(),
      v.description('The record name (fully qualified)'),
    ),
    value: v.string(),
    priority: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.description('MX records only'),
      ),
    ),
    purpose: v.pipe(
      v.picklist(DNS_RECORD_PURPOSES),
      v.description(
        '`ownership`: the challenge TXT proving the organization holds the domain; `dkim`: a DKIM CNAME; `mail_from`: the MX or SPF TXT of the custom MAIL FROM domain; `dmarc`: the suggested DMARC policy',
      ),
    ),
  }),
  v.title('DnsRecord'),
);
export type DnsRecord = v.InferOutput<typeof DnsRecord>;

/** Statuses of the DKIM signing keys of a domain. */
export const DKIM_STATUSES = ['PENDING', 'SUCCESS', 'FAILED'] as const;
/** Status of the DKIM signing keys of a domain. */
export type DkimStatus = (typeof DKIM_STATUSES)[number];

/** Statuses of a custom MAIL FROM domain. */
export const MAIL_FROM_STATUSES = ['PENDING', 'SUCCESS', 'FAILED'] as const;
/** Status of a custom MAIL FROM domain. */
export type MailFromStatus = (typeof MAIL_FROM_STATUSES)[number];

/** What the provider knows of a domain identity, read fresh on every call. */
export interface ProviderDomain {
  dkimStatus: DkimStatus;
  mailFromDomain: string | null;
  mailFromStatus: MailFromStatus | null;
  /** Three DKIM CNAMEs, then the MAIL FROM MX and TXT: in that order. */
  records: DnsRecord[];
}

/** Sending status of a tenant: DISABLED means the provider suspended it. */
export type TenantSendingStatus = 'ENABLED' | 'DISABLED';

/** A tenant (an organization's sending isolation) as the provider sees it. */
export interface ProviderTenant {
  sendingStatus: TenantSendingStatus;
  /** Whether the tenant's configuration set is associated with it. */
  configurationSetAssociated: boolean;
  /** Domains whose identities are associated with the tenant. */
  domains: string[];
}

/** The account's sending quota. */
export interface ProviderAccount {
  max24HourSend: number;
  maxSendRate: number;
  sentLast24Hours: number;
}

/** The email provider's identity, tenant and account operations. */
export interface EmailProvider {
  /**
   * Creates the domain identity (Easy DKIM, RSA 2048) and sets its custom
   * MAIL FROM domain; when it exists already, only reads it (its MAIL FROM
   * stays; only one missing after an interrupted creation is set).
   * Idempotent.
   * A name the provider refuses: `RuleViolationError`.
   */
  createDomain(domain: string, mailFromDomain: string): Promise<ProviderDomain>;
  /**
   * The identity of a domain; undefined when the provider has none. With
   * `maxAgeSeconds`, an answer that old may be served from memory
   * (`RecentDomainAnswers`); adapters always ask the provider.
   */
  getDomain(
    domain: string,
    options?: { maxAgeSeconds?: number },
  ): Promise<ProviderDomain | undefined>;
  /** Deletes the identity of a domain; idempotent. */
  deleteDomain(domain: string): Promise<void>;
  /**
   * Creates the tenant and a configuration set of the same name if missing,
   * and associates the set with the tenant. Idempotent.
   */
  ensureTenant(tenantName: string): Promise<void>;
  /** The tenant; undefined when the provider has none. */
  getTenant(tenantName: string): Promise<ProviderTenant | undefined>;
  /**
   * Associates a domain's identity with a tenant; idempotent. A missing
   * tenant or identity: `NotFoundError` (code `provider.resourceMissing`).
   */
  associateDomain(tenantName: string, domain: string): Promise<void>;
  /** Removes that association; idempotent. */
  dissociateDomain(tenantName: string, domain: string): Promise<void>;
  getAccount(): Promise<ProviderAccount>;
}

/** The part of the provider that reads a tenant's status (readiness). */
export type TenantStatusReader = Pick<EmailProvider, 'getTenant'>;

/** The part of the provider that reads the account's quota and rate. */
export type AccountReader = Pick<EmailProvider, 'getAccount'>;

/**
 * DNS lookups. Names are fully qualified; a missing name or record type
 * answers an empty array. An unreachable DNS server answers an empty array
 * too (a check then simply fails), after logging.
 */
export interface DnsResolver {
  /** TXT values at a name, each record's strings joined. */
  resolveTxt(name: string): Promise<string[]>;
  resolveCname(name: string): Promise<string[]>;
  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]>;
}
