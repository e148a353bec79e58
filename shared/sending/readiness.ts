/**
 * Application logic: can this organization send now, and if not, why? One
 * computation serves GET /me (data.sending) and GET /settings (data.readiness).
 */
import type { Deps } from '../ports.ts';

/** Stable machine codes of what stops a send (spec, Blocker codes). */
export type Blocker =
  | 'sending_disabled'
  | 'organization_not_allowed'
  | 'sending_paused'
  | 'domain_not_verified'
  | 'domain_ownership_unproven'
  | 'sender_not_on_verified_domain'
  | 'no_sender_identity';

/** One-word account state (spec, setup.status), informational only. */
export type SetupStatus =
  | 'suspended'
  | 'sending_disabled'
  | 'not_allowed'
  | 'verification_failed'
  | 'dns_pending'
  | 'ownership_pending'
  | 'sender_mismatch'
  | 'incomplete'
  | 'active';

/** Whether the per-organization sending isolation is in place. */
export type Provisioning = 'none' | 'provisioned' | 'incomplete';

/** The readiness object of the spec. */
export interface Readiness {
  ready: boolean;
  blockers: Blocker[];
  setup: { status: SetupStatus; provisioning: Provisioning };
}

/** The facts readiness is derived from. */
export interface SendingFacts {
  /** The application-wide switch. */
  appSendingEnabled: boolean;
  /** The organization is on the sending allowlist. */
  organizationAllowed: boolean;
  /** The email provider suspended the organization's sending. */
  providerSuspended: boolean;
  provisioning: Provisioning;
}

/**
 * Derives the readiness object from the facts: blockers in the spec's table
 * order, then setup.status by the first matching row of its table.
 */
export const computeReadiness = (facts: SendingFacts): Readiness => {
  const blockers: Blocker[] = [];
  if (!facts.appSendingEnabled) blockers.push('sending_disabled');
  if (!facts.organizationAllowed) blockers.push('organization_not_allowed');
  if (facts.providerSuspended) blockers.push('sending_paused');

  const status: SetupStatus = facts.providerSuspended
    ? 'suspended'
    : !facts.appSendingEnabled
      ? 'sending_disabled'
      : !facts.organizationAllowed
        ? 'not_allowed'
        : facts.provisioning === 'provisioned'
          ? 'active'
          : 'incomplete';

  return {
    ready: blockers.length === 0,
    blockers,
    setup: { status, provisioning: facts.provisioning },
  };
};

/** Gathers the facts of one organization and computes its readiness. */
export const readinessOf = async (
  deps: Pick<Deps, 'appSettings'>,
  organization: { sendingAllowed: boolean },
): Promise<Readiness> => {
  const app = await deps.appSettings.get();
  return computeReadiness({
    appSendingEnabled: app.sendingEnabled,
    organizationAllowed: organization.sendingAllowed,
    // The provider stand-in and SES tenants arrive with the sending-setup work.
    providerSuspended: false,
    provisioning: 'none',
  });
};
