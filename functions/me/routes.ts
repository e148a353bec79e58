/**
 * Routes of the `me` group: discovery of the caller's context.
 */

import { CallerContext, describeCaller } from '../../shared/access/caller.ts';
import {
  type DepsOf,
  endpoints,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import { ok } from '../../shared/http/responses.ts';
import { json, routeFor } from '../../shared/http/route.ts';
import {
  ReputationView,
  reputationOf,
} from '../../shared/reputation/reputation.ts';

/** What the `me` group's function may use. */
export const meBindings = [
  // Readiness reads the domains and the address book, and the tenant.
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'identities',
      'domains',
      // GET /reputation reads the organization's hourly counters.
      'reputation',
    ],
    actions: [...PIPELINE_ACTIONS, 'dynamodb:Query'],
  }),
  sendingStatus,
  endpoints,
] as const;

/** The deps of the `me` group's function. */
export type MeDeps = DepsOf<typeof meBindings>;

const route = routeFor<MeDeps>({ scope: 'none' });

/** GET /me. */
export const meRoutes = [
  route({
    method: 'GET',
    path: '/me',
    role: 'member',
    summary:
      'The organization, role and key of the caller, and whether it can send',
    description: [
      "The organization the key belongs to (the whole scope of the key), the role the key's creator holds in it, the key's id, and the readiness object: whether a campaign can leave now and, if not, why (`blockers`, stable machine codes to branch on, never message text). The key's value is never returned by any endpoint but once, by `POST /api-keys`, in the answer that creates it.",
      'Also the scopes the key is narrowed to (`scopes`; null: full access, as every key made without scopes). Every key may call this route, whatever its scopes.',
      "`setup.status` is informational only: it never enters `blockers` and never changes `ready`. Our reading of the spec: an organization with no domain declared reads `dns_pending` while still ready (mail goes out under the application's address); new organizations start off the sending allowlist (`organization_not_allowed`) until the operator allows them.",
      'A key whose organization no longer exists answers 401, as a revoked key.',
    ].join('\n\n'),
    responses: {
      200: json(CallerContext, 'The organization context and its readiness'),
    },
    errors: ['organization.notFound'],
    handle: async (deps, { caller }) => ok(await describeCaller(deps, caller)),
  }),
  route({
    method: 'GET',
    path: '/reputation',
    role: 'member',
    summary: "The organization's reputation: bounce and complaint rates",
    description: [
      "An extension. The organization's hard bounce and complaint rates over its rolling window (the last 24 hours, stretched back up to 7 days while it holds fewer sends than the minimum volume), our thresholds beside the email provider's, and the state of our guardrail.",
      "Past a threshold (with at least the minimum sends, bounces or complaints in the window), the guardrail pauses the organization's sending before the provider would: new sends answer 409 `sending.blocked` with the blocker `reputation_paused`, sending campaigns pause (`paused.reason: reputation`), sequence steps wait. The operator lifts it after review; the campaigns it paused are then resumed by the organization (POST /campaigns/{campaignId}/resume).",
    ].join('\n\n'),
    responses: {
      200: json(ReputationView, 'The rates, window, thresholds and state'),
    },
    errors: ['organization.notFound'],
    handle: async (deps, { caller }) =>
      ok(await reputationOf(deps, caller.orgId)),
  }),
];
