/**
 * Application logic: a campaign's statistics, from its send's progress and
 * the counters SES's events and its unsubscribe links feed. Agnostic to
 * how it is called and where data is stored. What Mailchimp, Kit and Brevo
 * report, and a little more: hard and soft bounces apart, the unique
 * clickers of each link, click-to-open, opens and clicks of a person and of
 * a machine apart (the rates count a person's), and the figures of each
 * mailbox provider (`statistics/figures.ts`).
 */
import * as v from 'valibot';
import {
  BouncesView,
  ByProviderView,
  bouncesOf,
  byProviderOf,
  ClicksView,
  clicksOf,
  counted,
  OpensView,
  opensOf,
  Rate,
  rate,
  ratesEntries,
  ratesOf,
} from '../statistics/figures.ts';
import { ViewId } from '../validation.ts';
import type { Progress } from './model.ts';
import type {
  CampaignCounters,
  CampaignStatsDeps,
  LinkClicks,
} from './stats-ports.ts';

export { rate } from '../statistics/figures.ts';

/** The statistics of a campaign as the API shows them. */
export const CampaignStatsView = v.pipe(
  v.object({
    campaignId: v.pipe(ViewId, v.description('The campaign')),
    recipients: counted(
      'Recipients of the send: the audience counted when it started, then, once every batch is done, sent + failed + skipped',
    ),
    sent: counted('Messages the email provider accepted'),
    failed: counted('Messages the email provider refused for the recipient'),
    skipped: counted(
      'Recipients left out when their turn came: unsubscribed, suppressed, opted out of the topic or removed from the list after the send started',
    ),
    delivered: counted(
      "Messages the recipient's mail server accepted (SES delivery events)",
    ),
    bounces: BouncesView,
    complaints: counted(
      'Recipients who marked the message as spam (feedback loops): the address is suppressed',
    ),
    rejected: counted(
      'Messages the email provider took but did not send (a virus found)',
    ),
    unsubscribes: counted(
      "Recipients who unsubscribed through this campaign's unsubscribe link (one-click or the page), each once",
    ),
    opens: OpensView,
    clicks: v.pipe(
      ClicksView,
      v.description('Clicks on the tracked links of the message'),
    ),
    rates: v.pipe(
      v.object({
        ...ratesEntries,
        unsubscribe: Rate('Unsubscribes over delivered'),
      }),
      v.description(
        "The usual rates, each a share of its denominator. Open, click and click-to-open count a person's opens and clicks (`basis`)",
      ),
    ),
    byProvider: ByProviderView,
  }),
  v.title('CampaignStats'),
);
export type CampaignStatsView = v.InferOutput<typeof CampaignStatsView>;

/** The view of a campaign's statistics, from its progress and counters. */
export const campaignStatsView = (
  campaign: { id: string; progress: Progress },
  read: { counters: CampaignCounters; links: LinkClicks[] },
): CampaignStatsView => {
  const { progress } = campaign;
  const { counters: c } = read;
  return {
    campaignId: campaign.id,
    recipients: progress.total,
    sent: progress.sent,
    failed: progress.failed,
    skipped: progress.skipped,
    delivered: c.delivered,
    bounces: bouncesOf(c),
    complaints: c.complaints,
    rejected: c.rejected,
    unsubscribes: c.unsubscribes,
    opens: opensOf(c),
    clicks: clicksOf(c, read.links),
    rates: {
      ...ratesOf(c, progress.sent),
      unsubscribe: rate(c.unsubscribes, c.delivered),
    },
    byProvider: byProviderOf(c),
  };
};

/** The statistics of a campaign (GET /campaigns/{campaignId}/stats). */
export const readCampaignStats = async (
  deps: CampaignStatsDeps,
  orgId: string,
  campaign: { id: string; progress: Progress },
): Promise<CampaignStatsView> =>
  campaignStatsView(
    campaign,
    await deps.campaignStats.read(orgId, campaign.id),
  );
