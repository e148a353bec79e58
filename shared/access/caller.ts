/**
 * Application logic of GET /me: who is calling — the caller's
 * organization, role and key — and whether its organization can send.
 */
import { UnauthorizedError } from '../errors.ts';
import {
  type OrganizationView,
  organizationView,
} from '../organizations/organizations.ts';
import {
  type Readiness,
  type ReadinessDeps,
  readinessOf,
} from '../sending/readiness.ts';
import type { Caller, Role } from './model.ts';

/** The data of GET /me. */
export interface CallerContext {
  organization: OrganizationView;
  organizationRole: Role;
  keyId: string;
  sending: Readiness;
}

/** Describes the caller: its organization, role, key id and readiness. */
export const describeCaller = async (
  deps: ReadinessDeps,
  caller: Caller,
): Promise<CallerContext> => {
  const org = await deps.organizations.get(caller.orgId);
  // A key whose organization vanished is as good as revoked.
  if (!org) {
    throw new UnauthorizedError('auth.invalidKey', 'Invalid API key');
  }
  return {
    organization: organizationView(org),
    organizationRole: caller.role,
    keyId: caller.keyId,
    sending: await readinessOf(deps, org),
  };
};
