/**
 * Ports: the small capability interfaces the domain needs. Adapters in
 * `shared/adapters/*` implement them; `shared/runtime/*` wires them up.
 */
import type { ApiKeyRecord, Member, User } from './access/model.ts';
import type { List } from './lists/model.ts';
import type { Organization } from './organizations/model.ts';

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

/** Fixed-window request counters, shared by every container. */
export interface RateLimitCounter {
  /**
   * Counts one request of `keyId` in the window starting at `windowStart`
   * (epoch ms) and returns the window's count including this request.
   */
  hit(keyId: string, windowStart: number, expiresAt: Date): Promise<number>;
}

/** The API key registration of the edge (API Gateway usage plan). */
export interface GatewayKeyRegistry {
  register(keyId: string, value: string): Promise<void>;
  disable(keyIds: string[]): Promise<void>;
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

/** Everything the domain and the pipeline need, built once per container. */
export interface Deps {
  clock: Clock;
  ids: Ids;
  organizations: OrganizationRepository;
  access: AccessRepository;
  rateLimits: RateLimitCounter;
  appSettings: AppSettingsRepository;
  lists: ListRepository;
  /** Seconds a warm container trusts a resolved key. */
  apiKeyCacheTtlSeconds: number;
}

/**
 * The operator's dependencies (admin CLI, local demo seed): the API's, plus
 * the edge key registry that only key creation and revocation touch.
 */
export interface AdminDeps extends Deps {
  gatewayKeys: GatewayKeyRegistry;
}
