/**
 * Application logic of each organization's reputation guardrail: its SES
 * events counted per batch into hourly counters; after a batch that
 * counted a hard bounce or a complaint, its window read (one Query) and
 * judged; past a threshold, the organization's guardrail stored once
 * (conditionally) and its sending campaigns paused. The readiness blocker
 * `reputation_paused` then refuses new sends, the senders hold (never
 * fail) and sequence steps wait. The operator lifts it after review; the
 * campaigns it paused are left for the tenant to resume (decision 0060-g).
 */
import * as v from 'valibot';
import { pauseSending } from '../campaigns/control.ts';
import type { SesEventType } from '../delivery/ses-event.ts';
import { NotFoundError } from '../errors.ts';
import { logger } from '../observability.ts';
import type { Organization } from '../organizations/model.ts';
import { Count, parse, Timestamp } from '../validation.ts';
import {
  GUARDRAIL_CAUSES,
  type Guardrail,
  guardrailText,
  hourOf,
  hoursBefore,
  NO_COUNTS,
  PROVIDER_THRESHOLDS,
  type ReputationCounts,
  type ReputationThresholds,
  type ReputationWindow,
  verdictOf,
  windowOf,
} from './model.ts';
import type { ReputationDeps as Deps } from './ports.ts';

/** The operator's input: the organization. */
const OrgInput = v.object({
  orgId: v.pipe(v.string(), v.uuid('must be an organization id')),
});

/** The reputation counter an SES event moves, if any. */
export const reputationCounterOf = (
  type: SesEventType,
  bounceType?: string,
): keyof ReputationCounts | undefined => {
  if (type === 'Send') return 'sends';
  if (type === 'Complaint') return 'complaints';
  if (type === 'Bounce' && bounceType === 'Permanent') return 'hardBounces';
  return undefined;
};

/**
 * One organization's counts of one batch of SES events: `count` for each
 * event the batch counted (recorded for the first time), `commit` once the
 * batch is handled: one ADD to the hour's counters, then, if the batch
 * counted a hard bounce or a complaint, the window judged.
 */
export class ReputationTally {
  private readonly counts: ReputationCounts = { ...NO_COUNTS };

  constructor(
    private readonly deps: Deps,
    private readonly orgId: string,
  ) {}

  count(type: SesEventType, bounceType?: string): void {
    const counter = reputationCounterOf(type, bounceType);
    if (counter) this.counts[counter]++;
  }

  async commit(): Promise<void> {
    const { sends, hardBounces, complaints } = this.counts;
    if (sends + hardBounces + complaints === 0) return;
    await this.deps.reputation.add(
      this.orgId,
      hourOf(this.deps.clock.now()),
      this.counts,
    );
    // Only a bounce or a complaint can raise a rate past its threshold.
    if (hardBounces + complaints > 0) {
      await checkReputation(this.deps, this.orgId);
    }
  }
}

/** The window of an organization now: one Query of its last hours. */
export const currentWindow = async (
  deps: Pick<Deps, 'reputation' | 'clock' | 'reputationThresholds'>,
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

/**
 * Judges an organization's window and trips its guardrail past a
 * threshold. Nothing to do for one already paused.
 */
export const checkReputation = async (
  deps: Deps,
  orgId: string,
): Promise<Guardrail | undefined> => {
  const org = await deps.organizations.get(orgId);
  if (!org || org.guardrail) return undefined;
  const window = await currentWindow(deps, orgId);
  const cause = verdictOf(window, deps.reputationThresholds);
  if (!cause) return undefined;
  const guardrail: Guardrail = {
    cause,
    at: deps.clock.now().toISOString(),
    window,
    threshold:
      cause === 'bounces'
        ? deps.reputationThresholds.bounceRate
        : deps.reputationThresholds.complaintRate,
  };
  await tripGuardrail(deps, orgId, guardrail);
  return guardrail;
};

/**
 * Stores the guardrail (once: a concurrent batch's finds it there) and
 * pauses every sending campaign of the organization. A crash between the
 * two leaves campaigns running until their next batch, whose sender reads
 * the blocker and pauses them itself.
 */
export const tripGuardrail = async (
  deps: Pick<Deps, 'organizations' | 'campaigns' | 'clock'>,
  orgId: string,
  guardrail: Guardrail,
): Promise<void> => {
  const stored = await deps.organizations.setGuardrail(orgId, guardrail);
  if (!stored) return;
  logger.warn('Reputation guardrail tripped: the organization is paused', {
    orgId,
    cause: guardrail.cause,
    window: guardrail.window,
  });
  const paused = await pauseSendingCampaigns(deps, orgId);
  logger.info('Campaigns paused by the reputation guardrail', {
    orgId,
    paused,
  });
};

/** Pauses each sending campaign of the organization; how many it paused. */
const pauseSendingCampaigns = async (
  deps: Pick<Deps, 'campaigns' | 'clock'>,
  orgId: string,
): Promise<number> => {
  let paused = 0;
  for (let page = 1; ; page++) {
    const found = await deps.campaigns.page(
      orgId,
      { status: 'sending' },
      { page, limit: 100 },
    );
    for (const campaign of found.items) {
      if (await pauseSending(deps, orgId, campaign.id, 'reputation')) {
        paused++;
      }
    }
    if (found.items.length < 100 || page * 100 >= found.total) return paused;
  }
};

/**
 * The operator lifts an organization's guardrail after review: the state
 * cleared, new sends allowed again. The campaigns it paused stay paused
 * (reason `reputation`): the tenant, told by the blocker's end, resumes
 * each once its list is cleaned. Lifting when nothing is set changes
 * nothing and answers `lifted: null`.
 */
export const liftOrganizationGuardrail = async (
  deps: Pick<Deps, 'organizations'>,
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

/** The reputation of the caller's organization (GET /reputation). */
export const reputationOf = async (
  deps: Pick<
    Deps,
    'organizations' | 'reputation' | 'clock' | 'reputationThresholds'
  >,
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
  deps: Pick<Deps, 'reputation' | 'clock' | 'reputationThresholds'>,
  org: Organization,
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
