/**
 * The reputation guardrail at work on the send path: an organization's SES
 * events counted per batch into its hourly counters (`reputation/`); after
 * a batch that counted a hard bounce or a complaint, its window read (one
 * Query) and judged; past a threshold, its guardrail stored once
 * (conditionally) and its sending campaigns paused (reason `reputation`).
 * The readiness blocker `reputation_paused` then refuses new sends, the
 * senders hold (never fail) and sequence steps wait (decision 0061).
 */
import { logger } from '../observability.ts';
import type { OrganizationsDeps } from '../organizations/ports.ts';
import {
  type Guardrail,
  hourOf,
  NO_COUNTS,
  type ReputationCounts,
  verdictOf,
} from '../reputation/model.ts';
import type { ReputationSettings } from '../reputation/ports.ts';
import {
  currentWindow,
  reputationCounterOf,
} from '../reputation/reputation.ts';
import { pauseSending } from './control.ts';
import type { CampaignsDeps } from './ports.ts';

/** What the guardrail needs on the send path. */
export type GuardrailDeps = Pick<OrganizationsDeps, 'organizations'> &
  Pick<CampaignsDeps, 'campaigns' | 'clock'> &
  ReputationSettings;

type Deps = GuardrailDeps;

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

  count(type: string, bounceType?: string): void {
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
