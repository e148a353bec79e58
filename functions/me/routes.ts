/**
 * Routes of the `me` group: discovery of the caller's context, and the
 * organization's own statistics.
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
import {
  OrganizationStatsQuery,
  OrganizationStatsView,
  readOrganizationStats,
} from '../../shared/statistics/reports.ts';

/** What the `me` group's function may use. */
export const meBindings = [
  // Readiness reads the domains and the address book, and the tenant.
  // GET /stats reads the organization's monthly counters.
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'identities',
      'domains',
      // GET /reputation reads the organization's hourly counters.
      'reputation',
      'mailStats',
    ],
    actions: [...PIPELINE_ACTIONS, 'dynamodb:Query'],
  }),
  sendingStatus,
  endpoints,
] as const;

/** The deps of the `me` group's function. */
export type MeDeps = DepsOf<typeof meBindings>;

const route = routeFor<MeDeps>({ scope: 'none' });

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** GET /me, GET /stats. */
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
  route({
    method: 'GET',
    path: '/stats',
    role: 'member',
    // The statistics of the organization's campaigns and steps.
    scope: 'campaigns',
    summary:
      "The organization's statistics by month range: delivery, bounces, complaints, opens and clicks, by mailbox provider",
    description: md(
      "An extension. The figures of a campaign's statistics over all the organization's campaigns and sequence steps, counted in the months of `from` to `to` (UTC, `YYYY-MM`, both included; left out: from the first, to the last): sent, delivered, bounces (hard and soft), complaints, rejections, unsubscribes, opens and clicks (`human` and `machine`/`scanner` apart), the rates (over the human opens and clicks: `rates.basis`) and `byProvider`. An event counts in the month it was counted in (seconds after it happened, as a rule).",
      'Unique opens and clicks are recipients of each message: a person who opened two campaigns counts twice. Confirmations and test sends count nothing. Counted from the events recorded since organization statistics exist. `from` after `to` is a 400 naming `from`.',
    ),
    query: OrganizationStatsQuery,
    responses: { 200: json(OrganizationStatsView, 'The statistics') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      ok(await readOrganizationStats(deps, caller.orgId, query)),
  }),
];
