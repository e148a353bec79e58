/**
 * Application logic: can this organization send now, and if not, why? One
 * computation serves GET /me (data.sending) and GET /settings (data.readiness).
 */
import type { Organization } from '../organizations/model.ts';
import { currentIsolation } from './isolation.ts';
import { type IdentityBook, isOnDomain, isVerified } from './model.ts';
import type { SendingDeps as Deps } from './ports.ts';
import type { DkimStatus } from './provider.ts';
import { defaultIdentityOf, type Sender, senderOf } from './sender.ts';

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
  /** The declared sending domains, as last known. */
  domains: {
    domain: string;
    dkimStatus: DkimStatus;
    ownershipProved: boolean;
  }[];
  /** The default sender address; undefined when the address book is empty. */
  defaultSender?: string;
}

/**
 * Derives the readiness object from the facts.
 *
 * Domain blockers apply while no declared domain is verified: DKIM not
 * SUCCESS on a domain → domain_not_verified; DKIM SUCCESS but ownership
 * unproved → domain_ownership_unproven. Once a domain is verified, the
 * default sender must be on a verified domain (or a subdomain of one);
 * without a default, mail goes out under the application address.
 * no_sender_identity is reported only next to a real blocker.
 */
export const computeReadiness = (facts: SendingFacts): Readiness => {
  const verified = facts.domains.filter(isVerified);
  const domainBlocked = facts.domains.length > 0 && verified.length === 0;
  const dkimPending =
    domainBlocked && facts.domains.some((d) => d.dkimStatus !== 'SUCCESS');
  const ownershipPending =
    domainBlocked &&
    facts.domains.some((d) => d.dkimStatus === 'SUCCESS' && !d.ownershipProved);
  const senderMismatch =
    verified.length > 0 &&
    facts.defaultSender !== undefined &&
    !verified.some((d) => isOnDomain(facts.defaultSender ?? '', d.domain));

  const blockers: Blocker[] = [];
  if (!facts.appSendingEnabled) blockers.push('sending_disabled');
  if (!facts.organizationAllowed) blockers.push('organization_not_allowed');
  if (facts.providerSuspended) blockers.push('sending_paused');
  if (dkimPending) blockers.push('domain_not_verified');
  if (ownershipPending) blockers.push('domain_ownership_unproven');
  if (senderMismatch) blockers.push('sender_not_on_verified_domain');
  if (blockers.length > 0 && facts.defaultSender === undefined) {
    blockers.push('no_sender_identity');
  }

  // setup.status: the first matching row of the spec's table.
  const status: SetupStatus = facts.providerSuspended
    ? 'suspended'
    : !facts.appSendingEnabled
      ? 'sending_disabled'
      : !facts.organizationAllowed
        ? 'not_allowed'
        : dkimPending && facts.domains.some((d) => d.dkimStatus === 'FAILED')
          ? 'verification_failed'
          : facts.domains.length === 0 || dkimPending
            ? 'dns_pending'
            : ownershipPending
              ? 'ownership_pending'
              : senderMismatch
                ? 'sender_mismatch'
                : facts.provisioning !== 'provisioned'
                  ? 'incomplete'
                  : 'active';

  return {
    ready: blockers.length === 0,
    blockers,
    setup: { status, provisioning: facts.provisioning },
  };
};

/** What gathering the facts of readiness needs. */
export type ReadinessDeps = Pick<
  Deps,
  | 'appSettings'
  | 'provider'
  | 'organizations'
  | 'domains'
  | 'identities'
  | 'clock'
  | 'providerStatusTtlSeconds'
  | 'endpoints'
>;

/** An organization's sending state: each source read once. */
export interface SendingState {
  readiness: Readiness;
  book: IdentityBook;
  /** The From and the tenant of a send to contacts. */
  sender: Sender;
}

/**
 * Gathers the facts of one organization (application switch, isolation,
 * domains, address book) and derives its readiness and its sender.
 */
export const sendingStateOf = async (
  deps: ReadinessDeps,
  organization: Organization,
): Promise<SendingState> => {
  const [app, isolation, domains, book] = await Promise.all([
    deps.appSettings.get(),
    currentIsolation(deps, organization),
    deps.domains.list(organization.id),
    deps.identities.getBook(organization.id),
  ]);
  const defaultIdentity = defaultIdentityOf(book);
  const readiness = computeReadiness({
    appSendingEnabled: app.sendingEnabled,
    organizationAllowed: organization.sendingAllowed,
    providerSuspended: isolation?.sendingStatus === 'DISABLED',
    provisioning: isolation?.provisioning ?? 'none',
    domains,
    ...(defaultIdentity ? { defaultSender: defaultIdentity.senderEmail } : {}),
  });
  const sender = senderOf({
    orgId: organization.id,
    book,
    domains,
    provisioned: isolation?.provisioning === 'provisioned',
    paused: isolation?.sendingStatus === 'DISABLED',
    appFromAddress: deps.endpoints.appFromAddress,
  });
  return { readiness, book, sender };
};

/** The readiness object of one organization. */
export const readinessOf = async (
  deps: ReadinessDeps,
  organization: Organization,
): Promise<Readiness> => (await sendingStateOf(deps, organization)).readiness;
