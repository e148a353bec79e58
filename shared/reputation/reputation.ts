/**
 * Application logic of each organization's reputation, beside the send
 * path: its window read (one Query) and shown (GET /reputation, GET /me),
 * and its guardrail lifted by the operator. The campaigns the guardrail
 * paused are left for the tenant to resume (decision 0061). Counting
 * and tripping live on the send path: `campaigns/guardrail.ts`.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import { logger } from '../observability.ts';
import { Count, parse, Timestamp } from '../validation.ts';
import {
  GUARDRAIL_CAUSES,
  type Guardrail,
  guardrailText,
  hourOf,
  hoursBefore,
  PROVIDER_THRESHOLDS,
  type ReputationCounts,
  type ReputationThresholds,
  type ReputationWindow,
  windowOf,
} from './model.ts';
import type { ReputationSettings } from './ports.ts';

/** The organizations as reputation reads and clears their guardrail. */
interface Organizations {
  organizations: {
    get(
      orgId: string,
    ): Promise<{ id: string; guardrail?: Guardrail } | undefined>;
    clearGuardrail(orgId: string): Promise<Guardrail | undefined>;
  };
}

/** The operator's input: the organization. */
const OrgInput = v.object({
  orgId: v.pipe(v.string(), v.uuid('must be an organization id')),
});

/** The reputation counter an SES event moves, if any. */
export const reputationCounterOf = (
  type: string,
  bounceType?: string,
): keyof ReputationCounts | undefined => {
  if (type === 'Send') return 'sends';
  if (type === 'Complaint') return 'complaints';
  if (type === 'Bounce' && bounceType === 'Permanent') return 'hardBounces';
  return undefined;
};

/**
 * The operator lifts an organization's guardrail after review: the state
 * cleared, new sends allowed again. The campaigns it paused stay paused
 * (reason `reputation`): the tenant, told by the blocker's end, resumes
 * each once its list is cleaned. Lifting when nothing is set changes
 * nothing and answers `lifted: null`.
 */
export const liftOrganizationGuardrail = async (
  deps: Pick<Organizations, 'organizations'>,
  input: { orgId: string },
): Promise<{ orgId: string; lifted: GuardrailView | null }> => {
  const { orgId } = parse(OrgInput, input);
  if (!(await deps.organizations.get(orgId))) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  const lifted = await deps.organizations.clearGuardrail(orgId);
  if (lifted) {
    logger.info('Reputation guardrail lifted by the operator', { orgId });
  }
  return { orgId, lifted: lifted ? guardrailView(lifted) : null };
};

const rate = (description: string) =>
  v.pipe(
    v.number(),
    v.minValue(0),
    v.maxValue(1),
    v.description(`${description}; 0 to 1, to 4 decimals`),
  );

/** A window's figures, as the API shows them. */
const WindowView = v.pipe(
  v.object({
    hours: v.pipe(
      Count,
      v.description(
        'The hours the window spans: the last 24, stretched back up to 7 days while it holds fewer sends than the minimum volume',
      ),
    ),
    sends: v.pipe(Count, v.description('Messages the provider took')),
    hardBounces: v.pipe(Count, v.description('Permanent bounces')),
    complaints: v.pipe(Count, v.description('Complaints (spam reports)')),
    bounceRate: rate('Hard bounces over sends'),
    complaintRate: rate('Complaints over sends'),
  }),
  v.title('ReputationWindow'),
);

/** The guardrail's state, as the API shows it (GET /me, GET /reputation). */
export const GuardrailView = v.pipe(
  v.object({
    cause: v.pipe(
      v.picklist(GUARDRAIL_CAUSES),
      v.description('What crossed its threshold: hard bounces or complaints'),
    ),
    at: v.pipe(Timestamp, v.description('When the guardrail paused sending')),
    threshold: rate('The threshold crossed'),
    window: WindowView,
    message: v.pipe(
      v.string(),
      v.description('The cause and the figures, for a person'),
    ),
  }),
  v.description(
    "Our guardrail paused the organization's sending (blocker `reputation_paused`) until the operator lifts it after review",
  ),
  v.title('Guardrail'),
);
export type GuardrailView = v.InferOutput<typeof GuardrailView>;

/** The view of a guardrail. */
export const guardrailView = (guardrail: Guardrail): GuardrailView => ({
  cause: guardrail.cause,
  at: guardrail.at,
  threshold: guardrail.threshold,
  window: { ...guardrail.window },
  message: guardrailText(guardrail),
});

const ThresholdPair = (what: string) =>
  v.object({
    bounceRate: rate(`Hard bounce rate ${what}`),
    complaintRate: rate(`Complaint rate ${what}`),
  });

/** An organization's reputation (GET /reputation). */
export const ReputationView = v.pipe(
  v.object({
    state: v.pipe(
      v.picklist(['active', 'paused']),
      v.description(
        '`paused`: our guardrail stopped sending (see `guardrail`); `active` otherwise',
      ),
    ),
    window: WindowView,
    thresholds: v.pipe(
      v.object({
        ...ThresholdPair('at which sending pauses').entries,
        minSends: v.pipe(
          Count,
          v.description('Sends the window must hold before a rate counts'),
        ),
        minBounces: v.pipe(
          Count,
          v.description('Hard bounces needed before the bounce rate counts'),
        ),
        minComplaints: v.pipe(
          Count,
          v.description('Complaints needed before the complaint rate counts'),
        ),
        windowHours: v.pipe(Count, v.description('The usual window')),
        longestWindowHours: v.pipe(
          Count,
          v.description('How far the window stretches to reach minSends'),
        ),
      }),
      v.description('Our thresholds, set by the operator'),
    ),
    provider: v.pipe(
      v.object({
        review: ThresholdPair('at which the provider reviews the account'),
        pause: ThresholdPair('at which the provider pauses the account'),
      }),
      v.description("The email provider's own thresholds, for comparison"),
    ),
    guardrail: v.pipe(
      v.nullable(GuardrailView),
      v.description('The guardrail while sending is paused; null otherwise'),
    ),
  }),
  v.title('Reputation'),
);
export type ReputationView = v.InferOutput<typeof ReputationView>;

/** The window of an organization now: one Query of its last hours. */
export const currentWindow = async (
  deps: ReputationSettings,
  orgId: string,
): Promise<ReputationWindow> => {
  const now = deps.clock.now();
  const thresholds = deps.reputationThresholds;
  const read = await deps.reputation.hours(
    orgId,
    hoursBefore(now, thresholds.longestWindowHours - 1),
    hourOf(now),
  );
  return windowOf(read, now, thresholds);
};

/** The reputation of the caller's organization (GET /reputation). */
export const reputationOf = async (
  deps: Pick<Organizations, 'organizations'> & ReputationSettings,
  orgId: string,
): Promise<ReputationView> => {
  const org = await deps.organizations.get(orgId);
  if (!org) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  return readReputation(deps, org);
};

/** The reputation of an organization now: its window read, one Query. */
export const readReputation = async (
  deps: ReputationSettings,
  org: { id: string; guardrail?: Guardrail },
): Promise<ReputationView> => {
  const window = await currentWindow(deps, org.id);
  const thresholds: ReputationThresholds = deps.reputationThresholds;
  return {
    state: org.guardrail ? 'paused' : 'active',
    window,
    thresholds: { ...thresholds },
    provider: {
      review: { ...PROVIDER_THRESHOLDS.review },
      pause: { ...PROVIDER_THRESHOLDS.pause },
    },
    guardrail: org.guardrail ? guardrailView(org.guardrail) : null,
  };
};
