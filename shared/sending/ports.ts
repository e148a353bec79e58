/**
 * Ports of the sending setup: the address book of sender identities, the
 * sending domains (and who holds each name), and the campaigns that sign
 * with an identity. The email provider and DNS are in `provider.ts`.
 */
import type { OrganizationsDeps } from '../organizations/ports.ts';
import type { IdentityBook, SendingDomain } from './model.ts';
import type { DnsResolver, EmailProvider } from './provider.ts';

/** What readiness and the sender are derived from: book and domains. */
export interface SendingProfile {
  book: IdentityBook;
  domains: SendingDomain[];
}

/** The address book of sender identities. */
export interface IdentityRepository {
  getBook(orgId: string): Promise<IdentityBook>;
  /** The book and the organization's domains, read together. */
  getProfile(orgId: string): Promise<SendingProfile>;
  /**
   * Replaces the book with `after` (puts changed identities, deletes
   * removed ones, sets the default) in one transaction conditional on the
   * version of `before`; `ConflictError` when the book changed meanwhile.
   */
  saveBook(
    orgId: string,
    before: IdentityBook,
    after: IdentityBook,
  ): Promise<void>;
}

/** Sending domains, and who holds each domain name. */
export interface DomainRepository {
  list(orgId: string): Promise<SendingDomain[]>;
  get(orgId: string, domainId: string): Promise<SendingDomain | undefined>;
  /**
   * Declares a domain, noting whether another organization declared the
   * name first or the provider's identity was already there
   * (`foundIdentity`): either sets `declaredAfterAnother`, decided
   * atomically with the claim. A found identity nobody declares is marked
   * on the claim until someone proves the domain. Returns the declaration
   * stored; `ConflictError` when the organization already did.
   */
  declare(
    orgId: string,
    domain: SendingDomain,
    options?: { foundIdentity?: boolean },
  ): Promise<SendingDomain>;
  /** Stores the last known statuses of a domain. */
  saveState(orgId: string, domain: SendingDomain): Promise<void>;
  /**
   * Removes a declaration. Returns whether another organization still
   * declares the name, and whether the provider's identity must stay: it
   * is still declared, or a declaration found it (not ours to delete) and
   * nobody proved the domain since.
   */
  remove(
    orgId: string,
    domain: SendingDomain,
  ): Promise<{ stillDeclared: boolean; keepIdentity: boolean }>;
  /** Which organization (and declaration) holds the proved domain, if any. */
  owner(
    domain: string,
  ): Promise<{ orgId: string; domainId: string } | undefined>;
  /**
   * Records the proof of ownership for an organization's declaration; a
   * previous owner's declaration loses it in the same transaction.
   */
  proveOwnership(
    orgId: string,
    domain: SendingDomain,
    at: string,
    previous?: { orgId: string; domainId: string },
  ): Promise<void>;
}

/** Read-only view of campaigns, for the address book's rule 4. */
export interface CampaignReferences {
  /** Campaigns (any status) signed by this identity. */
  usingIdentity(
    orgId: string,
    identityId: string,
  ): Promise<{ id: string; name: string }[]>;
}

/** What the sending setup needs: its stores, the provider and DNS. */
export interface SendingDeps extends OrganizationsDeps {
  identities: IdentityRepository;
  domains: DomainRepository;
  campaignReferences: CampaignReferences;
  provider: EmailProvider;
  dns: DnsResolver;
  /** Seconds the stored tenant status is trusted before asking the provider again. */
  providerStatusTtlSeconds: number;
}
