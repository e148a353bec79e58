/**
 * Application logic of sending domains (spec, "Sending domains", "Domain"
 * states): declare, read, verify, delete. DNS records other than the
 * ownership challenge are read back from the provider on every call and never
 * stored; on a provider outage, reads answer the last known state
 * (providerUnavailable true) and verify answers 503.
 */
import * as v from 'valibot';
import {
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors.ts';
import { logger } from '../observability.ts';
import { requireOrganization } from '../organizations/organizations.ts';
import { inJsonSchema } from '../schema-notes.ts';
import { Timestamp, ViewId } from '../validation.ts';
import {
  mailFromDomainOf,
  provisionIsolation,
  tenantNameOf,
} from './isolation.ts';
import {
  hostOf,
  isVerified,
  type SendingDomain,
  selfAndParents,
} from './model.ts';
import type { SendingDeps as Deps } from './ports.ts';
import {
  DKIM_STATUSES,
  DnsRecord,
  MAIL_FROM_STATUSES,
  type ProviderDomain,
} from './provider.ts';

const DOMAIN_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Body of POST /domains: a domain name, lower-cased. */
export const DeclareDomainBody = v.object({
  domain: v.pipe(
    v.string('must be a string'),
    // What a client sends is read before the transform below: the
    // document states the name as stored (trimmed, lower-case, no dot).
    inJsonSchema({ pattern: DOMAIN_NAME.source }),
    v.trim(),
    v.toLowerCase(),
    v.transform((name) => name.replace(/\.$/, '')),
    v.maxLength(253, 'must be at most 253 characters'),
    v.regex(DOMAIN_NAME, 'must be a domain name such as example.com'),
  ),
});

/** A domain as the API shows it. */
export const DomainView = v.pipe(
  v.object({
    id: ViewId,
    domain: v.pipe(v.string(), v.description('The domain name, lower-cased')),
    dkimStatus: v.pipe(
      v.picklist(DKIM_STATUSES),
      v.description(
        "Status of the DKIM signing keys. A declaration that found the provider's identity already there (another organization declared the domain first, or it was made outside the service) reads PENDING until this organization proves ownership, whatever the provider's status",
      ),
    ),
    mailFromStatus: v.pipe(
      v.nullable(v.picklist(MAIL_FROM_STATUSES)),
      v.description(
        'Status of the custom MAIL FROM domain (a temporary failure at the provider reads PENDING); null while the domain has no custom MAIL FROM domain. It reads PENDING as dkimStatus does until a found identity is proved',
      ),
    ),
    mailFromDomain: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The custom MAIL FROM domain (`bounce.<domain>` when the service set it up); null while there is none',
      ),
    ),
    verified: v.pipe(
      v.boolean(),
      v.description(
        'True only when dkimStatus is SUCCESS and ownershipProved is true: the one field that decides whether the domain can sign mail',
      ),
    ),
    ownershipProved: v.pipe(
      v.boolean(),
      v.description(
        'Whether the organization proved the ownership challenge; never revoked, except by another organization proving it (the domain transfers)',
      ),
    ),
    lastCheckedAt: v.pipe(
      v.nullable(Timestamp),
      v.description(
        'When the stored state was last written (declaration, verify, or a status change seen by a read)',
      ),
    ),
    providerIdentityMissing: v.pipe(
      v.boolean(),
      v.description(
        "True when the provider answered but holds no identity for the domain (it was deleted outside the service): the domain cannot sign mail, its statuses read FAILED and dnsRecords hold only the challenge and DMARC. An admin's POST /domains/{domainId}/verify creates the identity again (new DKIM records to publish); a read never does",
      ),
    ),
    providerUnavailable: v.pipe(
      v.boolean(),
      v.description(
        'True when the email provider could not be reached: the statuses are the last known state and dnsRecords hold only the ownership challenge and DMARC',
      ),
    ),
    dnsRecords: v.pipe(
      v.array(DnsRecord),
      v.description(
        "Records to publish, the ownership challenge first: the challenge TXT, three DKIM CNAMEs, the MAIL FROM MX and TXT, and a DMARC TXT. All but the challenge and DMARC come from the provider and are never stored: don't cache them",
      ),
    ),
  }),
  v.title('Domain'),
);
export type DomainView = v.InferOutput<typeof DomainView>;

/** The answer of DELETE /domains/{domainId}. */
export const DeletedDomain = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the domain removed')),
  }),
  v.title('DeletedDomain'),
);
export type DeletedDomain = v.InferOutput<typeof DeletedDomain>;

/** The challenge record's name. */
export const challengeName = (domain: string) => `_service-challenge.${domain}`;

/** The DMARC policy we suggest: monitor first (p=none). */
export const dmarcRecord = (domain: string): DnsRecord => ({
  type: 'TXT',
  name: `_dmarc.${domain}`,
  value: 'v=DMARC1; p=none;',
  purpose: 'dmarc',
});

type DomainDeps = Pick<
  Deps,
  | 'domains'
  | 'provider'
  | 'dns'
  | 'organizations'
  | 'clock'
  | 'ids'
  | 'providerStatusTtlSeconds'
  | 'endpoints'
>;

const requireDomain = async (
  deps: Pick<Deps, 'domains'>,
  orgId: string,
  domainId: string,
) => {
  const domain = await deps.domains.get(orgId, domainId);
  if (!domain)
    throw new NotFoundError('domain.notFound', `No domain ${domainId}`);
  return domain;
};

/** The organization's challenge value (a per-organization token). */
const challengeValue = async (deps: DomainDeps, orgId: string) =>
  `service-challenge=${await deps.organizations.challengeToken(orgId, deps.ids.secret(24))}`;

/** What a read learnt from the provider. */
type ProviderRead = ProviderDomain | 'missing' | undefined;

const view = (
  domain: SendingDomain,
  challenge: string,
  read: ProviderRead,
): DomainView => {
  const provider = read === 'missing' ? undefined : read;
  return {
    id: domain.id,
    domain: domain.domain,
    dkimStatus: domain.dkimStatus,
    mailFromStatus: domain.mailFromStatus,
    mailFromDomain: domain.mailFromDomain,
    verified: isVerified(domain),
    ownershipProved: domain.ownershipProved,
    lastCheckedAt: domain.lastCheckedAt,
    providerIdentityMissing: read === 'missing',
    providerUnavailable: read === undefined,
    // The challenge first; the provider's records only when it answered.
    dnsRecords: [
      {
        type: 'TXT',
        name: challengeName(domain.domain),
        value: challenge,
        purpose: 'ownership',
      },
      ...(provider?.records ?? []),
      dmarcRecord(domain.domain),
    ],
  };
};

/**
 * The provider's statuses, merged into the stored declaration. A
 * declaration that found the identity already there (another organization
 * declared the name first, or it was made outside the service) shares it:
 * until this organization proves ownership, its statuses stay PENDING, so
 * declaring reveals nothing of another's setup.
 */
const withProviderState = (
  domain: SendingDomain,
  provider: ProviderDomain,
  at: string,
): SendingDomain => {
  const hidden = domain.declaredAfterAnother && !domain.ownershipProved;
  return {
    ...domain,
    dkimStatus: hidden ? 'PENDING' : provider.dkimStatus,
    mailFromDomain: provider.mailFromDomain,
    mailFromStatus:
      hidden && provider.mailFromStatus ? 'PENDING' : provider.mailFromStatus,
    lastCheckedAt: at,
  };
};

/** True when the provider's statuses differ from the stored ones. */
const changed = (before: SendingDomain, after: SendingDomain) =>
  before.dkimStatus !== after.dkimStatus ||
  before.mailFromDomain !== after.mailFromDomain ||
  before.mailFromStatus !== after.mailFromStatus;

/**
 * Reads a domain at the provider: `missing` when it holds no identity for
 * it (deleted outside the service), undefined on an outage. With
 * `recreate` (an admin's verify), a missing identity is created again; a
 * read never writes to the provider. With `maxAgeSeconds`, a recent answer
 * may serve.
 */
const readProvider = async (
  deps: DomainDeps,
  domain: SendingDomain,
  options: { maxAgeSeconds?: number; recreate?: boolean } = {},
): Promise<ProviderRead> => {
  try {
    const found = await deps.provider.getDomain(domain.domain, {
      ...(options.maxAgeSeconds !== undefined
        ? { maxAgeSeconds: options.maxAgeSeconds }
        : {}),
    });
    if (found) return found;
    if (!options.recreate) return 'missing';
    return await deps.provider.createDomain(
      domain.domain,
      mailFromDomainOf(domain.domain),
    );
  } catch (error) {
    if (error instanceof ServiceUnavailableError) return undefined;
    throw error;
  }
};

/** A domain whose identity is gone: it cannot sign, whatever it could. */
const withIdentityMissing = (
  domain: SendingDomain,
  at: string,
): SendingDomain => ({
  ...domain,
  dkimStatus: 'FAILED',
  mailFromStatus: domain.mailFromStatus === null ? null : 'FAILED',
  lastCheckedAt: at,
});

/**
 * Refreshes one declaration for a read: the provider's answer (a recent one
 * within `providerStatusTtlSeconds`), stored only when a status really
 * changed; the last known state on an outage.
 */
const refreshed = async (
  deps: DomainDeps,
  orgId: string,
  domain: SendingDomain,
) => {
  const provider = await readProvider(deps, domain, {
    maxAgeSeconds: deps.providerStatusTtlSeconds,
  });
  if (!provider) return { domain, provider };
  const at = deps.clock.now().toISOString();
  const fresh =
    provider === 'missing'
      ? withIdentityMissing(domain, at)
      : withProviderState(domain, provider, at);
  if (!changed(domain, fresh)) return { domain, provider };
  await deps.domains.saveState(orgId, fresh);
  return { domain: fresh, provider };
};

/**
 * The application's own sending domain (that of `appFromAddress`), its
 * subdomains and its parents are nobody's to declare: the provider's
 * identity there is the application's, and deleting a declaration may
 * delete the identity it found.
 */
const refuseApplicationDomain = (
  deps: Pick<Deps, 'endpoints'>,
  name: string,
) => {
  const appDomain = hostOf(deps.endpoints.appFromAddress);
  const taken =
    name === appDomain ||
    name.endsWith(`.${appDomain}`) ||
    selfAndParents(appDomain).includes(name);
  if (!taken) return;
  const message = `${name} is the application's own domain ${appDomain}, one of its subdomains or parents: declare a domain of your organization`;
  throw new ValidationError(message, [{ field: 'domain', message }], {
    code: 'domain.applicationDomain',
  });
};

/**
 * Declares a domain: creates its identity at the provider (Easy DKIM, a
 * custom MAIL FROM), stores the declaration and associates the identity with
 * the organization's sending isolation. A provider outage answers 503 and
 * writes nothing.
 */
export const declareDomain = async (
  deps: DomainDeps,
  orgId: string,
  input: { domain: string },
): Promise<DomainView> => {
  const org = await requireOrganization(deps, orgId);
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) declared it: that
  // one, once the step that run may not have reached is done.
  if (deps.ids.rerun && (await deps.domains.get(orgId, id))) {
    await provisionIsolation(deps, org, await provedNames(deps, orgId));
    return getDomain(deps, orgId, id);
  }
  const name = input.domain;
  refuseApplicationDomain(deps, name);
  // 1. The provider first: nothing is stored if it is unreachable. An
  // identity already there (another organization's, or one made outside
  // the service) is not this organization's to see or delete.
  const found = await deps.provider.getDomain(name);
  const provider = await deps.provider.createDomain(
    name,
    mailFromDomainOf(name),
  );
  // 2. The declaration, stored with hidden (pending) statuses; the
  // provider's own are shown, and stored, only if this declaration created
  // the identity.
  const now = deps.clock.now().toISOString();
  const declared = await deps.domains.declare(
    orgId,
    withProviderState(
      {
        id,
        domain: name,
        createdAt: now,
        ownershipProved: false,
        declaredAfterAnother: true,
        dkimStatus: 'PENDING',
        mailFromDomain: null,
        mailFromStatus: null,
        lastCheckedAt: now,
      },
      provider,
      now,
    ),
    { foundIdentity: found !== undefined },
  );
  const shown = withProviderState(declared, provider, now);
  if (changed(declared, shown)) await deps.domains.saveState(orgId, shown);
  // 3. The isolation: the tenant, and only the domains this organization
  // proved (an outage leaves it incomplete).
  await provisionIsolation(deps, org, await provedNames(deps, orgId));
  return view(shown, await challengeValue(deps, orgId), provider);
};

/**
 * The domains the organization proved: the only ones associated with its
 * tenant, so no identity another organization holds is ever attached to it.
 */
export const provedNames = async (deps: Pick<Deps, 'domains'>, orgId: string) =>
  (await deps.domains.list(orgId))
    .filter((d) => d.ownershipProved)
    .map((d) => d.domain);

/**
 * Every declared domain, refreshed from the provider when it answers. With
 * none declared it reads one Query and writes nothing (the challenge token
 * is created by the first declaration, not by a read).
 */
export const listDomains = async (
  deps: DomainDeps,
  orgId: string,
): Promise<DomainView[]> => {
  const domains = await deps.domains.list(orgId);
  if (domains.length === 0) return [];
  const challenge = await challengeValue(deps, orgId);
  const results = await Promise.all(
    domains.map((d) => refreshed(deps, orgId, d)),
  );
  return results
    .map(({ domain, provider }) => view(domain, challenge, provider))
    .sort((a, b) => a.domain.localeCompare(b.domain));
};

/** One domain with its DNS records; the last known state on an outage. */
export const getDomain = async (
  deps: DomainDeps,
  orgId: string,
  domainId: string,
): Promise<DomainView> => {
  const { domain, provider } = await refreshed(
    deps,
    orgId,
    await requireDomain(deps, orgId, domainId),
  );
  return view(domain, await challengeValue(deps, orgId), provider);
};

/**
 * Verifies a domain: asks the provider (503 on an outage), checks the
 * ownership challenge through DNS, and stores the answer. Ownership, once
 * proved, is never revoked — except by another organization proving it,
 * which transfers the domain.
 */
export const verifyDomain = async (
  deps: DomainDeps,
  orgId: string,
  domainId: string,
): Promise<DomainView> => {
  // 1. The provider's answer, fresh, or 503.
  const org = await requireOrganization(deps, orgId);
  const stored = await requireDomain(deps, orgId, domainId);
  const provider = await readProvider(deps, stored, { recreate: true });
  if (!provider || provider === 'missing') {
    throw new ServiceUnavailableError(
      'provider.unavailable',
      'The email provider cannot be reached right now; try again in a few minutes',
    );
  }
  const now = deps.clock.now().toISOString();
  let domain = stored;

  // 2. The ownership challenge, through DNS.
  const challenge = await challengeValue(deps, orgId);
  if (!domain.ownershipProved) {
    const published = await deps.dns.resolveTxt(challengeName(domain.domain));
    if (published.includes(challenge)) {
      const owner = await deps.domains.owner(domain.domain);
      const previous = owner && owner.orgId !== orgId ? owner : undefined;
      await deps.domains.proveOwnership(orgId, domain, now, previous);
      domain = { ...domain, ownershipProved: true };
      if (previous) await leaveTenant(deps, previous.orgId, domain.domain);
    }
  }

  // 3. The statuses, once ownership is settled (a proof reveals them).
  domain = withProviderState(domain, provider, now);
  await deps.domains.saveState(orgId, domain);

  // 4. Keep the isolation complete (associations may have failed before).
  await provisionIsolation(deps, org, await provedNames(deps, orgId));
  return view(domain, challenge, provider);
};

/** Takes a domain out of an organization's tenant; an outage is only logged. */
const leaveTenant = async (deps: DomainDeps, orgId: string, domain: string) => {
  try {
    await deps.provider.dissociateDomain(tenantNameOf(orgId), domain);
  } catch (error) {
    if (!(error instanceof ServiceUnavailableError)) throw error;
    logger.warn('Could not dissociate a domain from a tenant', {
      orgId,
      domain,
    });
  }
};

/**
 * Removes the declaration. The provider's identity goes too, unless another
 * organization still declares the domain, or the identity was there before
 * any declaration (made outside the service) and nobody proved the domain.
 */
export const deleteDomain = async (
  deps: DomainDeps,
  orgId: string,
  domainId: string,
): Promise<DeletedDomain> => {
  const domain = await requireDomain(deps, orgId, domainId);
  const { keepIdentity } = await deps.domains.remove(orgId, domain);
  await leaveTenant(deps, orgId, domain.domain);
  if (!keepIdentity) {
    try {
      await deps.provider.deleteDomain(domain.domain);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error;
      logger.warn('Could not delete a domain identity', {
        orgId,
        domain: domain.domain,
      });
    }
  }
  return { id: domainId };
};
