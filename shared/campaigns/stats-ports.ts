/**
 * Ports of campaign statistics: the counters SES's events feed (recorded
 * once per event, unique opens and clicks by first occurrence per
 * recipient) and the unsubscribes its signed links bring. Delivery and the
 * audience declare the half each of them feeds; this store is both.
 */
import type { CampaignUnsubscribeCounter } from '../audience/ports.ts';
import type { CampaignEventCounter } from '../delivery/ports.ts';

/** A campaign's counters, summed over their shards. */
export interface CampaignCounters {
  delivered: number;
  bouncesHard: number;
  bouncesSoft: number;
  complaints: number;
  rejected: number;
  opensTotal: number;
  opensUnique: number;
  clicksTotal: number;
  clicksUnique: number;
  unsubscribes: number;
}

/** The clicks of one link of a campaign. */
export interface LinkClicks {
  url: string;
  clicksTotal: number;
  clicksUnique: number;
}

/** The delivery counters of campaigns. */
export interface CampaignStatsRepository
  extends CampaignEventCounter,
    CampaignUnsubscribeCounter {
  /**
   * Counts one SES event of a campaign's message to a contact, at most
   * once (a duplicate changes nothing), in the campaign's counters (a
   * tally of one event, committed at once; the events consumer counts per
   * batch with `tally`), and records on the recipient what first happened
   * (its message id first of all: the sender's evidence that an earlier
   * attempt reached SES). False for a duplicate.
   */
  recordEvent(
    orgId: string,
    event: Parameters<CampaignEventCounter['recordEvent']>[1],
    link?: string,
  ): Promise<boolean>;
  /** The counters of a campaign and the clicks of each of its links. */
  read(
    orgId: string,
    campaignId: string,
  ): Promise<{ counters: CampaignCounters; links: LinkClicks[] }>;
}

/** What campaign statistics need: their store. */
export interface CampaignStatsDeps {
  campaignStats: CampaignStatsRepository;
}
