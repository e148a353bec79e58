/**
 * Access model: users, their memberships in organizations, and API keys.
 */
import type { Scope } from './scopes.ts';

/** Roles in an organization, from least to most powerful. */
export const ROLES = ['member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** True when `role` is at least `required`. */
export const roleAtLeast = (role: Role, required: Role): boolean =>
  ROLES.indexOf(role) >= ROLES.indexOf(required);

/** A person known to the application, by normalized email. */
export interface User {
  id: string;
  email: string;
}

/** A user's membership in one organization. */
export interface Member {
  orgId: string;
  userId: string;
  email: string;
  role: Role;
}

/**
 * Live keys one member may hold: a membership change touches each of them
 * in one transaction (100 items at most).
 */
export const MAX_KEYS_PER_MEMBER = 50;

/** A stored API key: never the value, only its hash. */
export interface ApiKeyRecord {
  keyId: string;
  orgId: string;
  userId: string;
  /** The creator's current role in the organization, kept in step by `putMember`. */
  role: Role;
  /** SHA-256 of the whole key value, hex. */
  secretHash: string;
  createdAt: string;
  revokedAt?: string;
  /** What the key is for, as its creator named it (absent on older keys). */
  name?: string;
  /** The creator's email when the key was made (absent on older keys). */
  email?: string;
  /** The scopes the key is narrowed to; absent: full access. */
  scopes?: Scope[];
}

/** A key as its organization's listing shows it: with its last use. */
export interface ListedApiKey extends ApiKeyRecord {
  /** When it was last used, to the hour; absent: never since recorded. */
  lastUsedAt?: string;
}

/** Who is calling: resolved from the API key on every request. */
export interface Caller {
  keyId: string;
  orgId: string;
  userId: string;
  role: Role;
  /** The key's scopes; absent: full access. */
  scopes?: readonly Scope[];
}
