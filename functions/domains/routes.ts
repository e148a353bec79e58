/**
 * Routes of the `domains` group: sending domains on the email provider.
 */

import * as v from 'valibot';
import {
  type DepsOf,
  endpoints,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  sendingSetup,
  table,
} from '../../shared/bindings.ts';
import { created, ok } from '../../shared/http/responses.ts';
import { json, routeFor } from '../../shared/http/route.ts';
import {
  DeclareDomainBody,
  DeletedDomain,
  DomainView,
  declareDomain,
  deleteDomain,
  getDomain,
  listDomains,
  verifyDomain,
} from '../../shared/sending/domains.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `domains` group's function may use. */
export const domainBindings = [
  table({
    stores: [...PIPELINE_STORES, 'domains'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
  sendingSetup,
  endpoints,
] as const;

/** The deps of the `domains` group's function. */
export type DomainDeps = DepsOf<typeof domainBindings>;

const route = routeFor<DomainDeps>({ scope: 'settings' });

const DomainParams = idParams('domainId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** How a read behaves when the provider cannot be reached. */
const READS_SURVIVE_OUTAGES =
  'Reads never fail on a provider outage: they answer the last known state with `providerUnavailable` true, and only the records that come from our own data (the ownership challenge and DMARC). Statuses are refreshed from the provider on each read (an answer up to `PROVIDER_STATUS_TTL_SECONDS` old may serve, 60 s on AWS) and stored only when they changed; there is no background job.';

/** Every route of the domains group. */
export const domainRoutes = [
  route({
    method: 'POST',
    path: '/domains',
    role: 'admin',
    summary:
      'Declare a domain: provider identity (Easy DKIM, MAIL FROM), isolation; 503 on a provider outage',
    description: md(
      "Declares the domain and creates its identity at the email provider (Easy DKIM with RSA 2048 keys, a custom MAIL FROM `bounce.<domain>`), then makes sure the organization's sending isolation (its own provider tenant) exists; the identity joins it once the organization proves ownership. Answers 201 with the domain object and its DNS records to publish.",
      "Our decisions where the spec is silent: a second declaration of the domain by the same organization is 409 `domain.alreadyDeclared`; a provider outage is 503 `provider.unavailable` and nothing is written; a name the provider refuses is 400 `domain.refusedByProvider`; the application's own sending domain, its subdomains and its parents are refused with 400 `domain.applicationDomain` naming `domain`.",
      'Several organizations may declare the same name. A declaration that finds the identity already there (another organization declared it first, or it was made outside the service) reveals nothing of it: its DKIM and MAIL FROM statuses read PENDING until this organization proves ownership.',
    ),
    body: DeclareDomainBody,
    responses: { 201: json(DomainView, 'The domain, declared') },
    errors: [
      'organization.notFound',
      'domain.applicationDomain',
      'domain.refusedByProvider',
      'domain.alreadyDeclared',
      'domain.notFound',
      'provider.unavailable',
      'provider.resourceMissing',
    ],
    handle: async (deps, { caller, body }) =>
      created(await declareDomain(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/domains',
    role: 'member',
    summary:
      'Declared domains with their DNS records; last known state on a provider outage',
    description: md(
      'Every domain the organization declared, by name, each with its DNS records; an empty array when there is none.',
      READS_SURVIVE_OUTAGES,
      'The DNS records other than the ownership challenge are read back from the provider and never stored: clients must not cache them.',
    ),
    responses: {
      200: json(v.array(DomainView), 'The declared domains, by name'),
    },
    errors: ['domain.refusedByProvider', 'domain.notFound'],
    handle: async (deps, { caller }) =>
      ok(await listDomains(deps, caller.orgId)),
  }),
  route({
    method: 'GET',
    path: '/domains/{domainId}',
    role: 'member',
    summary: 'One domain with its seven DNS records',
    description: md(
      'One domain with its seven DNS records, the ownership challenge first:',
      [
        '1. one TXT ownership challenge, named `_service-challenge.<domain>`, whose value is a per-organization token (served even when the provider is unreachable);',
        '2. three CNAME records for DKIM;',
        '3. one MX record for the custom MAIL FROM (priority 10);',
        '4. one TXT record for the custom MAIL FROM (SPF);',
        '5. one TXT record for DMARC (`v=DMARC1; p=none;`, a monitoring start).',
      ].join('\n'),
      READS_SURVIVE_OUTAGES,
      'A domain of another organization answers 404, as one that does not exist.',
    ),
    params: DomainParams,
    responses: { 200: json(DomainView, 'The domain') },
    errors: ['domain.notFound', 'domain.refusedByProvider'],
    handle: async (deps, { caller, params }) =>
      ok(await getDomain(deps, caller.orgId, params.domainId)),
  }),
  route({
    method: 'DELETE',
    path: '/domains/{domainId}',
    role: 'admin',
    summary: 'Remove the declaration',
    description: md(
      "Removes the declaration and takes the domain out of the organization's sending isolation; answers its id.",
      "The provider's identity goes too, unless another organization still declares the domain, or the identity was there before any declaration (made outside the service) and nobody proved the domain since. A provider outage does not fail the removal: the identity is then left at the provider.",
    ),
    params: DomainParams,
    responses: { 200: json(DeletedDomain, 'The domain, removed') },
    errors: ['domain.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteDomain(deps, caller.orgId, params.domainId)),
  }),
  route({
    method: 'POST',
    path: '/domains/{domainId}/verify',
    role: 'admin',
    summary:
      'Ask the provider, check the ownership TXT through DNS, store the answer; 503 on a provider outage',
    description: md(
      'Asks the provider for the DKIM and MAIL FROM statuses, looks up the ownership challenge TXT through DNS, and stores the answer; answers the domain object after the check. On a provider outage it answers an error instead of a stale state: 503 `provider.unavailable` (our status). Propagation takes from minutes up to 72 hours: poll with back-off.',
      '`verified` is true only when `dkimStatus` is SUCCESS and `ownershipProved` is true. Ownership is proved once, by publishing the challenge TXT and calling verify, and never revoked afterwards, even if the TXT is removed, except when another organization publishes its own challenge and verifies: the domain then transfers (a proved domain belongs to exactly one organization at a time), and the previous owner reads `ownershipProved` false. 409 `domain.ownershipChanged` when another organization proved the domain while the request ran.',
      "Verify also completes the organization's sending isolation: its tenant holds exactly the domains it proved.",
    ),
    params: DomainParams,
    responses: { 200: json(DomainView, 'The domain, after the check') },
    errors: [
      'organization.notFound',
      'domain.notFound',
      'domain.refusedByProvider',
      'domain.ownershipChanged',
      'provider.unavailable',
      'provider.resourceMissing',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await verifyDomain(deps, caller.orgId, params.domainId)),
  }),
];
