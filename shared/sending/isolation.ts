/**
 * The sending isolation of an organization: one SES tenant (and a
 * configuration set of the same name) per organization, with the
 * organization's domain identities associated. Reputation, sending status
 * and suppression are then the organization's own.
 */
import { ServiceUnavailableError } from '../errors.ts';
import type { IsolationState, Organization } from '../organizations/model.ts';
import type { SendingDeps as Deps } from './ports.ts';
import type { ProviderTenant, TenantStatusReader } from './provider.ts';

/** The tenant (and configuration set) name of an organization. */
export const tenantNameOf = (orgId: string): string => `org-${orgId}`;

/** The custom MAIL FROM domain we set up for a sending domain. */
export const mailFromDomainOf = (domain: string): string => `bounce.${domain}`;

/**
 * Makes sure the organization's tenant exists with its configuration set and
 * exactly the given domains associated, then stores what the provider
 * reports:
 * 1. the tenant and its configuration set;
 * 2. each given domain associated;
 * 3. any other domain taken out (one transferred to another organization
 *    while the provider was unreachable), so the tenant holds no identity
 *    its organization has not proved.
 * A provider outage leaves the isolation `incomplete`, never an error: a
 * later declaration or verification completes it.
 */
export const provisionIsolation = async (
  deps: Pick<Deps, 'provider' | 'organizations' | 'clock'>,
  org: Organization,
  domains: string[],
): Promise<IsolationState> => {
  const tenantName = tenantNameOf(org.id);
  let state: IsolationState;
  try {
    await deps.provider.ensureTenant(tenantName);
    for (const domain of domains) {
      await deps.provider.associateDomain(tenantName, domain);
    }
    const tenant = await deps.provider.getTenant(tenantName);
    const others = (tenant?.domains ?? []).filter((d) => !domains.includes(d));
    for (const domain of others) {
      await deps.provider.dissociateDomain(tenantName, domain);
    }
    state = stateOf(
      tenant && {
        ...tenant,
        domains: tenant.domains.filter((d) => domains.includes(d)),
      },
      domains,
      deps,
    );
  } catch (error) {
    if (!(error instanceof ServiceUnavailableError)) throw error;
    state = {
      provisioning: 'incomplete',
      sendingStatus: org.isolation?.sendingStatus ?? 'ENABLED',
      checkedAt: deps.clock.now().toISOString(),
    };
  }
  await deps.organizations.saveIsolation(org.id, state);
  return state;
};

const stateOf = (
  tenant: ProviderTenant | undefined,
  domains: string[],
  deps: Pick<Deps, 'clock'>,
): IsolationState => ({
  // Exactly the proved domains: one too many is as incomplete as one missing.
  provisioning:
    tenant?.configurationSetAssociated &&
    domains.every((domain) => tenant.domains.includes(domain)) &&
    tenant.domains.every((domain) => domains.includes(domain))
      ? 'provisioned'
      : 'incomplete',
  sendingStatus: tenant?.sendingStatus ?? 'ENABLED',
  checkedAt: deps.clock.now().toISOString(),
});

/**
 * The organization's isolation as of now: the stored state while it is
 * fresh (`providerStatusTtlSeconds`), otherwise re-read from the provider
 * (a suspension shows up there). On an outage, the last known state.
 * Undefined when isolation was never attempted.
 */
export const currentIsolation = async (
  deps: Pick<
    Deps,
    'organizations' | 'domains' | 'clock' | 'providerStatusTtlSeconds'
  > & { provider: TenantStatusReader },
  org: Organization,
  /**
   * Whether a state read again is stored for the next reads (the default);
   * a request that may be refused stores nothing.
   */
  options: { remember?: boolean } = {},
): Promise<IsolationState | undefined> => {
  const known = org.isolation;
  if (!known) return undefined;
  const age = deps.clock.now().getTime() - Date.parse(known.checkedAt);
  if (age < deps.providerStatusTtlSeconds * 1000) return known;
  try {
    const [tenant, domains] = await Promise.all([
      deps.provider.getTenant(tenantNameOf(org.id)),
      deps.domains.list(org.id),
    ]);
    // Only proved domains are associated with the tenant (see provedNames).
    const state = stateOf(
      tenant,
      domains.filter((d) => d.ownershipProved).map((d) => d.domain),
      deps,
    );
    if (options.remember !== false) {
      await deps.organizations.saveIsolation(org.id, state);
    }
    return state;
  } catch (error) {
    if (error instanceof ServiceUnavailableError) return known;
    throw error;
  }
};
