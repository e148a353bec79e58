/**
 * Application logic: can this organization send now, and if not, why? One
 * computation serves GET /me (data.sending) and GET /settings (data.readiness).
 */
import * as v from 'valibot';
import type { Organization } from '../organizations/model.ts';
import { currentIsolation } from './isolation.ts';
import { type IdentityBook, isOnDomain, isVerified } from './model.ts';
import type { SendingDeps as Deps } from './ports.ts';
import type { DkimStatus, TenantStatusReader } from './provider.ts';
import { defaultIdentityOf, type Sender, senderOf } from './sender.ts';

/** Stable machine codes of what stops a send (spec, Blocker codes). */
export const BLOCKERS = [
  'sending_disabled',
  'organization_not_allowed',
  'sending_paused',
  // An extension: our guardrail paused the organization (its reputation).
  'reputation_paused',
  'domain_not_verified',
  'domain_ownership_unproven',
  'sender_not_on_verified_domain',
  'no_sender_identity',
] as const;

/** What stops a send, a stable machine code (spec, Blocker codes). */
export const Blocker = v.pipe(
  v.picklist(BLOCKERS),
  v.description(
    [
      'What stops a send; branch on it, never on message text:',
      '- `sending_disabled`: sending is off application-wide (cannot be cleared from the API);',
      '- `organization_not_allowed`: the organization is not on the sending allowlist;',
      '- `sending_paused`: the email provider suspended the organization; every send to contacts is refused, test sends go out under the application address;',
      "- `reputation_paused` (an extension): the organization's own hard bounce or complaint rate crossed our thresholds, below the provider's; its sending campaigns are paused and its sequences hold their steps until the operator lifts it after review (GET /reputation: the figures);",
      '- `domain_not_verified`: a domain is declared but its DKIM is not SUCCESS;',
      '- `domain_ownership_unproven`: DKIM is SUCCESS but ownership is not proved;',
      '- `sender_not_on_verified_domain`: a domain is verified but the default sender address is not on it or one of its subdomains;',
      '- `no_sender_identity`: the address book has no default; reported only next to a real blocker (alone, mail goes out under the application address).',
    ].join('\n'),
  ),
  v.title('Blocker'),
);
export type Blocker = v.InferOutput<typeof Blocker>;

/** One-word account states (spec, setup.status), informational only. */
export const SETUP_STATUSES = [
  'suspended',
  'sending_disabled',
  'not_allowed',
  'verification_failed',
  'dns_pending',
  'ownership_pending',
  'sender_mismatch',
  'incomplete',
  'active',
] as const;
/** One-word account state (spec, setup.status), informational only. */
export type SetupStatus = (typeof SETUP_STATUSES)[number];

/** Whether the per-organization sending isolation is in place. */
export const PROVISIONINGS = ['none', 'provisioned', 'incomplete'] as const;
/** Whether the per-organization sending isolation is in place. */
export type Provisioning = (typeof PROVISIONINGS)[number];

/** The readiness object of the spec (GET /me `sending`, GET /settings `readiness`). */
export const Readiness = v.pipe(
  v.object({
    ready: v.pipe(
      v.boolean(),
      v.description('Whether a campaign can leave now: true when no blocker'),
    ),
    blockers: v.pipe(
      v.array(Blocker),
      v.description('What stops a send now; empty when ready'),
    ),
    setup: v.object({
      status: v.pipe(
        v.picklist(SETUP_STATUSES),
        v.description(
          'One-word account state, the first that applies in this order: `suspended`, `sending_disabled`, `not_allowed`, `verification_failed`, `dns_pending` (blocked on domains for another reason, or none declared), `ownership_pending`, `sender_mismatch`, `incomplete` (nothing blocks but the isolation is not fully in place), `active`. Informational only: it never enters blockers and never changes ready',
        ),
      ),
      provisioning: v.pipe(
        v.picklist(PROVISIONINGS),
        v.description(
          "The sending isolation (the organization's own provider tenant): `none` (nothing attempted yet, not a fault, it stops no send), `provisioned`, or `incomplete` (attempted, something missing; the next domain declaration or verify completes it)",
        ),
      ),
    }),
  }),
  v.title('Readiness'),
);
export type Readiness = v.InferOutput<typeof Readiness>;

/** The facts readiness is derived from. */
export interface SendingFacts {
  /** The application-wide switch. */
  appSendingEnabled: boolean;
  /** The organization is on the sending allowlist. */
  organizationAllowed: boolean;
  /** The email provider suspended the organization's sending. */
  providerSuspended: boolean;
  /** Our reputation guardrail stopped the organization's sending. */
  reputationPaused?: boolean;
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
  if (facts.reputationPaused) blockers.push('reputation_paused');
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

/**
 * How old the application switch a GET shows may be: as old as a warm
 * container's cached key (the staleness the API already accepts for an
 * operator's action, 10 s by default).
 */
export const shownAge = (deps: { apiKeyCacheTtlSeconds: number }) => ({
  maxAgeMs: deps.apiKeyCacheTtlSeconds * 1000,
});

/** What gathering the facts of readiness needs. */
export type ReadinessDeps = Pick<
  Deps,
  | 'appSettings'
  | 'organizations'
  | 'domains'
  | 'identities'
  | 'clock'
  | 'providerStatusTtlSeconds'
  | 'endpoints'
> & {
  apiKeyCacheTtlSeconds: number;
  // Readiness only reads the tenant's status, never changes the setup.
  provider: TenantStatusReader;
};

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
  /** The identity that signs (a campaign's); the default when absent. */
  identityId?: string | null,
  options: {
    /** `false`: a tenant status read again is not stored. */
    remember?: boolean;
    /**
     * `true`: the state is only shown (a GET), so the application switch
     * may be as old as a cached key (`apiKeyCacheTtlSeconds`); a send
     * always reads it.
     */
    shown?: boolean;
  } = {},
): Promise<SendingState> => {
  const [app, isolation, { domains, book }] = await Promise.all([
    deps.appSettings.get(options.shown ? shownAge(deps) : {}),
    currentIsolation(deps, organization, options),
    deps.identities.getProfile(organization.id),
  ]);
  const defaultIdentity = defaultIdentityOf(book);
  const readiness = computeReadiness({
    appSendingEnabled: app.sendingEnabled,
    organizationAllowed: organization.sendingAllowed,
    providerSuspended: isolation?.sendingStatus === 'DISABLED',
    reputationPaused: organization.guardrail !== undefined,
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
    identityId,
  });
  return { readiness, book, sender };
};

/** The readiness object of one organization, as a GET shows it. */
export const readinessOf = async (
  deps: ReadinessDeps,
  organization: Organization,
): Promise<Readiness> =>
  (await sendingStateOf(deps, organization, undefined, { shown: true }))
    .readiness;
