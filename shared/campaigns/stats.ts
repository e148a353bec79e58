/**
 * Application logic: a campaign's statistics, from its send's progress and
 * the counters SES's events and its unsubscribe links feed. Agnostic to
 * how it is called and where data is stored. What Mailchimp, Kit and Brevo
 * report, and a little more: hard and soft bounces apart, the unique
 * clickers of each link, click-to-open.
 */
import * as v from 'valibot';
import { Count, ViewId } from '../validation.ts';
import type { Progress } from './model.ts';
import type {
  CampaignCounters,
  CampaignStatsDeps,
  LinkClicks,
} from './stats-ports.ts';

const counted = (description: string) =>
  v.pipe(Count, v.description(description));

const Rate = (description: string) =>
  v.pipe(
    v.number(),
    v.minValue(0),
    v.maxValue(1),
    v.description(`${description}; 0 to 1, to 4 decimals, 0 when none`),
  );

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
    bounces: v.pipe(
      v.object({
        hard: counted(
          'Permanent bounces: the address is suppressed, nothing is sent to it again',
        ),
        soft: counted(
          'Transient and undetermined bounces (a full mailbox, a message too large…): the address stays',
        ),
        total: counted('Hard and soft bounces'),
      }),
      v.description('Messages the receiving side returned'),
    ),
    complaints: counted(
      'Recipients who marked the message as spam (feedback loops): the address is suppressed',
    ),
    rejected: counted(
      'Messages the email provider took but did not send (a virus found)',
    ),
    unsubscribes: counted(
      "Recipients who unsubscribed through this campaign's unsubscribe link (one-click or the page), each once",
    ),
    opens: v.pipe(
      v.object({
        total: counted('Every open, each recipient as often as it opened'),
        unique: counted('Recipients who opened at least once'),
      }),
      v.description(
        'Opens, as the tracking image sees them: mail clients that load images ahead (Apple Mail Privacy Protection) count, those that block images do not',
      ),
    ),
    clicks: v.pipe(
      v.object({
        total: counted('Every click on a tracked link'),
        unique: counted('Recipients who clicked at least once'),
        links: v.pipe(
          v.array(
            v.object({
              url: v.pipe(
                v.string(),
                v.description(
                  'The link (our unsubscribe and topic opt-out links without their per-recipient token)',
                ),
              ),
              total: counted('Clicks on this link'),
              unique: counted('Recipients who clicked this link'),
            }),
          ),
          v.description('Each clicked link, most clicked first'),
        ),
      }),
      v.description('Clicks on the tracked links of the message'),
    ),
    rates: v.pipe(
      v.object({
        open: Rate('Unique opens over delivered'),
        click: Rate('Unique clicks over delivered'),
        clickToOpen: Rate(
          'Unique clicks over unique opens (at most 1: a reader who blocks images clicks without an open)',
        ),
        bounce: Rate('Bounces, hard and soft, over sent'),
        complaint: Rate('Complaints over delivered'),
        unsubscribe: Rate('Unsubscribes over delivered'),
      }),
      v.description('The usual rates, each a share of its denominator'),
    ),
  }),
  v.title('CampaignStats'),
);
export type CampaignStatsView = v.InferOutput<typeof CampaignStatsView>;

/**
 * `part / whole`, rounded to 4 decimals, at most 1 (events can outrun
 * their denominator: a delivery SES never reported, a click without an
 * open), 0 when `whole` is 0.
 */
export const rate = (part: number, whole: number): number =>
  whole > 0 ? Math.round(Math.min(1, part / whole) * 10_000) / 10_000 : 0;

/** The view of a campaign's statistics, from its progress and counters. */
export const campaignStatsView = (
  campaign: { id: string; progress: Progress },
  read: { counters: CampaignCounters; links: LinkClicks[] },
): CampaignStatsView => {
  const { progress } = campaign;
  const { counters: c } = read;
  const bounces = c.bouncesHard + c.bouncesSoft;
  return {
    campaignId: campaign.id,
    recipients: progress.total,
    sent: progress.sent,
    failed: progress.failed,
    skipped: progress.skipped,
    delivered: c.delivered,
    bounces: { hard: c.bouncesHard, soft: c.bouncesSoft, total: bounces },
    complaints: c.complaints,
    rejected: c.rejected,
    unsubscribes: c.unsubscribes,
    opens: { total: c.opensTotal, unique: c.opensUnique },
    clicks: {
      total: c.clicksTotal,
      unique: c.clicksUnique,
      links: read.links
        .map((link) => ({
          url: link.url,
          total: link.clicksTotal,
          unique: link.clicksUnique,
        }))
        .sort(
          (a, b) =>
            b.total - a.total ||
            b.unique - a.unique ||
            a.url.localeCompare(b.url),
        ),
    },
    rates: {
      open: rate(c.opensUnique, c.delivered),
      click: rate(c.clicksUnique, c.delivered),
      clickToOpen: rate(c.clicksUnique, c.opensUnique),
      bounce: rate(bounces, progress.sent),
      complaint: rate(c.complaints, c.delivered),
      unsubscribe: rate(c.unsubscribes, c.delivered),
    },
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
