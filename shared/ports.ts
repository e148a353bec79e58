/**
 * Ports: the small capability interfaces the domain needs. Adapters in
 * `shared/adapters/*` implement them; `shared/runtime/*` wires them up.
 */
import type { ApiKeyRecord, Member, User } from './access/model.ts';
import type { AudienceEvent } from './audience/events.ts';
import type { Contact, ContactStatus, Tag, TagRef } from './audience/model.ts';
import type { List } from './lists/model.ts';
import type { OutgoingMessage } from './messaging/message.ts';
import type { Organization } from './organizations/model.ts';
import type { DnsResolver, EmailProvider } from './sending/provider.ts';
import type { IdentityBook, SendingDomain } from './settings/model.ts';
import type { OptinSettings } from './settings/optin.ts';
import type { Template, TemplateSummary } from './templates/model.ts';
import type { Topic, TopicOptOut } from './topics/model.ts';

/** The current time; fixed in tests. */
export interface Clock {
  now(): Date;
}

/** Identifier and secret generation; deterministic in tests if needed. */
export interface Ids {
  /** A new time-ordered UUID (v7): sorting ids sorts by creation time. */
  id(): string;
  /** A new random secret of `bytes` bytes, base64url encoded. */
  secret(bytes: number): string;
}

/** Organizations and their application-level flags. */
export interface OrganizationRepository {
  /** Creates the organization; `ConflictError` when the slug is taken. */
  create(organization: Organization): Promise<void>;
  get(orgId: string): Promise<Organization | undefined>;
  /** Puts the organization on or off the sending allowlist; `NotFoundError` if unknown. */
  setSendingAllowed(orgId: string, allowed: boolean): Promise<void>;
  /** Sets (or, with null, clears) the organization's postal address. */
  setPostalAddress(orgId: string, postalAddress: string | null): Promise<void>;
  /** The organization's domain challenge token, stored on first use. */
  challengeToken(orgId: string, candidate: string): Promise<string>;
  /** Stores what is known of the organization's sending isolation. */
  saveIsolation(orgId: string, isolation: IsolationState): Promise<void>;
}

/** Users, memberships and API keys: who may call the API, with which role. */
export interface AccessRepository {
  /** Returns the user with this (normalized) email, creating it with `newId` if missing. */
  getOrCreateUser(email: string, newId: string): Promise<User>;
  findUserByEmail(email: string): Promise<User | undefined>;
  getMember(orgId: string, userId: string): Promise<Member | undefined>;
  /**
   * Adds the member or changes its role; the role change reaches every live
   * key of the member in the same transaction.
   */
  putMember(member: Member): Promise<void>;
  /**
   * Removes the member and revokes all of its keys in one transaction.
   * Returns the ids of the keys revoked, or undefined when not a member.
   */
  removeMember(
    orgId: string,
    userId: string,
    at: Date,
  ): Promise<string[] | undefined>;
  /** Stores a new key; `NotFoundError` when its creator is not a member. */
  createKey(key: ApiKeyRecord): Promise<void>;
  findKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes the key; false when it does not exist. Revoking twice is harmless. */
  revokeKey(keyId: string, at: Date): Promise<boolean>;
}

/**
 * Rolling-window request admission, shared by every container: a request
 * is admitted only if fewer than `limit` requests of the key were admitted
 * in the `windowMs` before it (exact across containers).
 */
export interface RateLimitCounter {
  /**
   * Admits one request of `keyId` at `now` (epoch ms) or refuses it; a
   * refused request consumes nothing. Returns the decision and the instants
   * (epoch ms, ascending) of the key's admitted requests still in the window
   * ending at `now`, this one included when admitted.
   */
  admit(
    keyId: string,
    now: number,
    windowMs: number,
    limit: number,
  ): Promise<{ admitted: boolean; inWindow: number[] }>;
}

/** The API key registration of the edge (API Gateway usage plan). */
export interface GatewayKeyRegistry {
  register(keyId: string, value: string): Promise<void>;
  disable(keyIds: string[]): Promise<void>;
}

/** What is known of an organization's sending isolation (SES tenant). */
export interface IsolationState {
  provisioning: 'none' | 'provisioned' | 'incomplete';
  /** DISABLED: the provider suspended the organization. */
  sendingStatus: 'ENABLED' | 'DISABLED';
  checkedAt: string;
}

/** Application-wide settings, set by the operator. */
export interface AppSettingsRepository {
  get(): Promise<AppSettings>;
  setSendingEnabled(enabled: boolean): Promise<void>;
}

/** Application-wide settings. */
export interface AppSettings {
  /** The application-wide sending switch. */
  sendingEnabled: boolean;
}

/** One page of a collection and the collection's total size. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Page number (from 1) and page size. */
export interface PageRequest {
  page: number;
  limit: number;
}

/** Lists of contacts. */
export interface ListRepository {
  /** Creates the list; `ConflictError` when the name is taken in the organization. */
  create(orgId: string, list: List): Promise<void>;
  get(orgId: string, listId: string): Promise<List | undefined>;
  /** Newest first. */
  page(orgId: string, request: PageRequest): Promise<Page<List>>;
}

/** A change of one contact: `before` undefined for a new contact. */
export interface ContactChange {
  before?: Contact;
  after: Contact;
}

/** Filters of a contact listing. */
export interface ContactFilter {
  status?: ContactStatus;
  tagId?: string;
  /** Case-insensitive substring of the email, first or last name. */
  search?: string;
}

/** Contacts of lists, with the list and tag counters they move. */
export interface ContactRepository {
  /** The contact of a list with this normalized email (strongly consistent). */
  get(
    orgId: string,
    listId: string,
    email: string,
  ): Promise<Contact | undefined>;
  /** Several contacts of one list by email, keyed by email. */
  getMany(
    orgId: string,
    listId: string,
    emails: string[],
  ): Promise<Map<string, Contact>>;
  findById(orgId: string, contactId: string): Promise<Contact | undefined>;
  /**
   * Stores a few changes and moves every counter they imply (list totals
   * per status, tag carriers) in one transaction; each write is conditional
   * on the version read. `ConflictError` when a contact changed meanwhile.
   */
  save(orgId: string, changes: ContactChange[]): Promise<void>;
  /**
   * Stores many changes in as few transactions as fit, each as `save` does.
   * Returns the changes that conflicted: those, and only those, were not
   * written (re-read them and try again).
   */
  saveMany(orgId: string, changes: ContactChange[]): Promise<ContactChange[]>;
  /**
   * A page of a list's contacts, by email. With `knownTotal` (from the
   * list's counters) it reads only up to the page's end; without, it counts
   * every match for the total.
   */
  page(
    orgId: string,
    listId: string,
    filter: ContactFilter,
    request: PageRequest,
    knownTotal?: number,
  ): Promise<Page<Contact>>;
}

/** The organization's tags. */
export interface TagRepository {
  /** Creates a tag; `ConflictError` when the name is taken, case-insensitively. */
  create(orgId: string, tag: Tag): Promise<void>;
  get(orgId: string, tagId: string): Promise<Tag | undefined>;
  /** Tags by id; unknown ids are left out. */
  getMany(orgId: string, tagIds: string[]): Promise<Tag[]>;
  /** Tags by name, keyed by the normalized name; unknown names are left out. */
  findByNames(orgId: string, names: string[]): Promise<Map<string, TagRef>>;
  /** Newest first, with contact counts. */
  page(orgId: string, request: PageRequest): Promise<Page<Tag>>;
}

/** Templates of an organization. */
export interface TemplateRepository {
  create(orgId: string, template: Template): Promise<void>;
  get(orgId: string, templateId: string): Promise<Template | undefined>;
  /** Replaces the template; `NotFoundError` when it does not exist. */
  update(orgId: string, template: Template): Promise<void>;
  /** `NotFoundError` when it does not exist. */
  delete(orgId: string, templateId: string): Promise<void>;
  /** Newest first, without HTML. */
  page(orgId: string, request: PageRequest): Promise<Page<TemplateSummary>>;
}

/** Topics of an organization and the addresses that declined them. */
export interface TopicRepository {
  /** `ConflictError` when the name is taken, case-insensitively. */
  create(orgId: string, topic: Topic): Promise<void>;
  get(orgId: string, topicId: string): Promise<Topic | undefined>;
  /** Newest first, with opt-out counts. */
  page(orgId: string, request: PageRequest): Promise<Page<Topic>>;
  /**
   * Replaces name and description (moving the name reservation when the
   * name changes); `ConflictError` when the new name is taken.
   */
  update(orgId: string, before: Topic, after: Topic): Promise<void>;
  /** Deletes the topic and its opt-outs; `NotFoundError` when missing. */
  delete(orgId: string, topic: Topic): Promise<void>;
  /** Records an opt-out; false when the address had already declined. */
  addOptOut(
    orgId: string,
    topicId: string,
    optOut: TopicOptOut,
  ): Promise<boolean>;
  /** Removes an opt-out; false when there was none. */
  removeOptOut(orgId: string, topicId: string, email: string): Promise<boolean>;
  /** Which of these addresses declined the topic. */
  optedOut(
    orgId: string,
    topicId: string,
    emails: string[],
  ): Promise<Set<string>>;
  /** The opt-outs of a topic, by email. */
  pageOptOuts(
    orgId: string,
    topicId: string,
    total: number,
    request: PageRequest,
  ): Promise<Page<TopicOptOut>>;
}

/** The organization's double opt-in settings. */
export interface OptinSettingsRepository {
  get(orgId: string): Promise<OptinSettings>;
  /** Stores the settings; an empty content means the default. */
  save(
    orgId: string,
    settings: Pick<OptinSettings, 'required' | 'subject' | 'content'>,
  ): Promise<void>;
}

/** The address book of sender identities. */
export interface IdentityRepository {
  getBook(orgId: string): Promise<IdentityBook>;
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

/** Sends one email. */
export interface Mailer {
  send(message: OutgoingMessage): Promise<{ messageId: string }>;
}

/** Signs and checks the claims of public links (confirm, unsubscribe…). */
export interface LinkSigner {
  /** A compact, URL-safe token for `purpose`, valid for `ttlSeconds`. */
  sign(
    purpose: string,
    claims: Record<string, string>,
    ttlSeconds: number,
  ): Promise<string>;
  /**
   * The claims of a valid token of `purpose`; `InvalidLinkError` for a
   * tampered or foreign token, `ExpiredLinkError` for an expired one.
   */
  verify(purpose: string, token: string): Promise<Record<string, string>>;
}

/** Where audience events go: the hooks automation plugs into. */
export interface AudienceEvents {
  publish(events: AudienceEvent[]): Promise<void>;
}

/** Addresses and URLs of this deployment. */
export interface Endpoints {
  /** Base URL of the API as the public sees it, ending in `/api/v1`. */
  publicApiUrl: string;
  /** The application's own sender address (the fallback `From`). */
  appFromAddress: string;
}

export type { DnsResolver, EmailProvider };

/** Everything the domain and the pipeline need, built once per container. */
export interface Deps {
  clock: Clock;
  ids: Ids;
  organizations: OrganizationRepository;
  access: AccessRepository;
  rateLimits: RateLimitCounter;
  appSettings: AppSettingsRepository;
  lists: ListRepository;
  contacts: ContactRepository;
  tags: TagRepository;
  optinSettings: OptinSettingsRepository;
  templates: TemplateRepository;
  topics: TopicRepository;
  identities: IdentityRepository;
  domains: DomainRepository;
  campaignReferences: CampaignReferences;
  mailer: Mailer;
  links: LinkSigner;
  audienceEvents: AudienceEvents;
  endpoints: Endpoints;
  provider: EmailProvider;
  dns: DnsResolver;
  /** Seconds the stored tenant status is trusted before asking the provider again. */
  providerStatusTtlSeconds: number;
  /** Seconds a warm container trusts a resolved key. */
  apiKeyCacheTtlSeconds: number;
}

/**
 * The operator's dependencies (admin CLI, local demo seed): the stores of
 * organizations and access, and the edge key registry that only key
 * creation and revocation touch.
 */
export type AdminDeps = Pick<
  Deps,
  'clock' | 'ids' | 'organizations' | 'access' | 'appSettings'
> & { gatewayKeys: GatewayKeyRegistry };
