/**
 * Access model: users, their memberships in organizations, and API keys.
 */

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
}

/** Who is calling: resolved from the API key on every request. */
export interface Caller {
  keyId: string;
  orgId: string;
  userId: string;
  role: Role;
}
