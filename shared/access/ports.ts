/**
 * Ports of access: users, members and API keys, the rate-limit counter,
 * and the edge's key registry. Describing the caller (GET /me) also needs
 * the sending setup.
 */
import type { Recounter, SuppressionRekeyer } from '../organizations/ports.ts';
import type { Page, PageRequest } from '../ports.ts';
import type { SendingDeps } from '../sending/ports.ts';
import type { ApiKeyRecord, ListedApiKey, Member, User } from './model.ts';

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
  /**
   * Stores a new key and enters it in its organization's keys;
   * `NotFoundError` when its creator is not a member, `ConflictError`
   * `apiKey.limit` when the creator holds the most live keys allowed.
   */
  createKey(key: ApiKeyRecord): Promise<void>;
  findKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes the key; false when it does not exist. Revoking twice is harmless. */
  revokeKey(keyId: string, at: Date): Promise<boolean>;
  /** The organization's keys, live and revoked, newest first, with their last use. */
  pageKeys(orgId: string, request: PageRequest): Promise<Page<ListedApiKey>>;
  /** One key with its last use, whatever its organization (the caller checks). */
  getKey(keyId: string): Promise<ListedApiKey | undefined>;
  /**
   * Marks the key used at `at`, unless a mark at or after `since` is
   * stored already; returns the mark stored now (`at`, or that one).
   */
  markUsed(keyId: string, at: Date, since: Date): Promise<Date>;
  /**
   * Enters in the organization's keys the live keys of its members that
   * are not there yet (keys made before the listing existed); returns
   * their ids. Running it again enters nothing.
   */
  indexKeys(orgId: string): Promise<string[]>;
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

/** What access needs on the request path (authentication, rate, GET /me). */
export interface AccessDeps extends SendingDeps {
  access: AccessRepository;
  rateLimits: RateLimitCounter;
  /** Seconds a warm container trusts a resolved key. */
  apiKeyCacheTtlSeconds: number;
}

/**
 * The operator's dependencies (admin CLI, local demo seed): the stores of
 * organizations and access, the edge key registry that only key creation
 * and revocation touch, and the repairs and migrations (recount, the rekey
 * of suppressions).
 */
export type AdminDeps = Pick<
  AccessDeps,
  'clock' | 'ids' | 'organizations' | 'access' | 'appSettings'
> & {
  gatewayKeys: GatewayKeyRegistry;
  recounter: Recounter;
  suppressionKeys: SuppressionRekeyer;
};
