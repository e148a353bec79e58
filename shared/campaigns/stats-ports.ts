/**
 * Ports of campaign statistics: the counters SES's events feed (recorded
 * once per event, unique opens and clicks by first occurrence per
 * recipient, a person's and a machine's apart, by mailbox provider) and
 * the unsubscribes its signed links bring. Delivery and the audience
 * declare the half each of them feeds; this store is both.
 */
import type { CampaignUnsubscribeCounter } from '../audience/ports.ts';
import type { MailEventCounter } from '../delivery/ports.ts';
import type { MailCounters } from '../statistics/counters.ts';
import type { LinkClicks } from '../statistics/ports.ts';

export type { MailCounters as CampaignCounters } from '../statistics/counters.ts';
export type { LinkClicks } from '../statistics/ports.ts';

/** The delivery counters of campaigns (and of sequence steps). */
export interface CampaignStatsRepository
  extends MailEventCounter,
    CampaignUnsubscribeCounter {
  /** The counters of a campaign and the clicks of each of its links. */
  read(
    orgId: string,
    campaignId: string,
  ): Promise<{ counters: MailCounters; links: LinkClicks[] }>;
}

/** What campaign statistics need: their store. */
export interface CampaignStatsDeps {
  campaignStats: CampaignStatsRepository;
}
