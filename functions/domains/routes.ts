/**
 * Routes of the `domains` group: sending domains on the email provider.
 */
import { created, ok } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import {
  DeclareDomainBody,
  declareDomain,
  deleteDomain,
  getDomain,
  listDomains,
  verifyDomain,
} from '../../shared/sending/domains.ts';
import { idParams } from '../../shared/validation.ts';

const DomainParams = idParams('domainId');

/** Every route of the domains group. */
export const domainRoutes = [
  route({
    method: 'POST',
    path: '/domains',
    role: 'admin',
    summary:
      'Declare a domain: provider identity (Easy DKIM, MAIL FROM), isolation; 503 on a provider outage',
    body: DeclareDomainBody,
    handle: async (deps, { caller, body }) =>
      created(await declareDomain(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/domains',
    role: 'member',
    summary:
      'Declared domains with their DNS records; last known state on a provider outage',
    handle: async (deps, { caller }) =>
      ok(await listDomains(deps, caller.orgId)),
  }),
  route({
    method: 'GET',
    path: '/domains/{domainId}',
    role: 'member',
    summary: 'One domain with its seven DNS records',
    params: DomainParams,
    handle: async (deps, { caller, params }) =>
      ok(await getDomain(deps, caller.orgId, params.domainId)),
  }),
  route({
    method: 'DELETE',
    path: '/domains/{domainId}',
    role: 'admin',
    summary: 'Remove the declaration',
    params: DomainParams,
    handle: async (deps, { caller, params }) =>
      ok(await deleteDomain(deps, caller.orgId, params.domainId)),
  }),
  route({
    method: 'POST',
    path: '/domains/{domainId}/verify',
    role: 'admin',
    summary:
      'Ask the provider, check the ownership TXT through DNS, store the answer; 503 on a provider outage',
    params: DomainParams,
    handle: async (deps, { caller, params }) =>
      ok(await verifyDomain(deps, caller.orgId, params.domainId)),
  }),
];
