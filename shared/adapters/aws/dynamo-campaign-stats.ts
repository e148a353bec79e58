/**
 * Driven adapter: the statistics of campaigns and sequence steps, from
 * SES's events and the unsubscribe links, exact whatever SES's delivery
 * does (a duplicate, any order, a redelivery after a crash), counted per
 * batch of events (`dynamo-stats-tally.ts`); and a campaign's, read.
 *
 * A campaign's partition (`ORG#o#CAMPAIGN#c`) holds:
 * - `STATS#0`…`STATS#7`: the counters in 8 shards (a batch adds to the
 *   shard of its id's hash, so concurrent batches rarely meet); `read`
 *   sums them;
 * - `COUNTED#<batch>`: the fate of a batch of events, `counted` or `void`
 *   (put if absent, so exactly one of the two), kept 30 days;
 * - `LINK#<linkId>`: a clicked link's URL and clicks; its id is 16
 *   characters of the URL's SHA-256 (base64url).
 * A sequence's partition (`ORG#o#SEQUENCE#s`) holds the same for its steps
 * (`STEPSTATS#<step>#<shard>`, `STEPLINK#<step>#<linkId>`, `COUNTED#…`),
 * and each batch adds its counts to its organization's month too
 * (`ORG#o#STATS`, `MONTH#<yyyy-mm>#<shard>`).
 *
 * The recipient's item — a campaign's (`RECIPIENT#<contactId>` in one of
 * its recipient partitions, `campaign-recipient-keys.ts`: the sender's
 * claim, which events only update, never put), or a step message's
 * (`ORG#o#MESSAGE#m`, `STEP`) — holds the message id of the first event
 * (never replaced: the sender's evidence that SES took the message), `seen`
 * (a string set with a 12-character hash of each event recorded: the
 * dedupe), the instant each kind of event first happened (`openedAt`,
 * `clickedAt`…: what is first for the unique counts), `humanOpenedAt` and
 * `machineOpenedAt`, `links` (the ids of the links it clicked), `clicks`
 * (its 24 latest clicks: time, link, verdict) with `humanClicks` and
 * `scannerClicks`, its `provider`, `unsubscribedAt`, and for each counted
 * event `c#<hash>`: the batch that counts it and its marks.
 *
 * Write units, items under 1 KB (a transaction bills 2 per item and KB):
 * - DeliveryDelay, Rendering Failure, Subscription: 1 (recipient);
 * - Send, Delivery, Bounce, Complaint, Reject, Open, Click: 1, plus each
 *   batch's commit (6: its fate and two shards, and 2 per link clicked)
 *   shared by its events: 1.06 for a batch of 100 events of one subject;
 * - an unsubscribe: 6 (recipient and two shards, one transaction: rare).
 * An open or a click first reads the recipient (1 read unit), so a repeat
 * is written right away, without a unique count, and a duplicate is not
 * written at all. A duplicate of another type costs one refused write, a
 * read of the recipient and one of its batch's fate.
 * A recipient is about 650 bytes after a claim and a usual history (send,
 * delivery, a few opens and clicks); each counted event adds about 40
 * bytes (`seen` and `c#`), each click 20 more, so past some 8 clicks (a
 * scanner clicking every link) its writes cost 2 units instead of 1.
 */

import type {
  CampaignCounters,
  CampaignStatsRepository,
  LinkClicks,
} from '../../campaigns/stats-ports.ts';
import type { ItemOf } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type {
  MailEventRecord,
  MailEventTally,
  MailSubject,
} from '../../delivery/ports.ts';
import type { CounterDeltas } from '../../statistics/counters.ts';
import { CampaignRecipientKeys } from './campaign-recipient-keys.ts';
import { entity } from './dynamo-entity.ts';
import {
  CampaignBatchItem,
  CampaignRecipientItem,
  CampaignStatsItem,
  LinkItem,
  OrganizationStatsItem,
  recipientStateOf,
  StepBatchItem,
  StepLinkItem,
  StepMessageItem,
  StepStatsItem,
  shardOf,
  sumCounters,
} from './dynamo-stats-items.ts';
import {
  DynamoStatsTally,
  type RecipientAttributes,
  type TallySubject,
} from './dynamo-stats-tally.ts';
import {
  type DynamoTable,
  failedConditions,
  transactWrite,
} from './dynamo-table.ts';

export {
  CAMPAIGN_STATS_SHARDS,
  linkIdOf,
  shardOf,
} from './dynamo-stats-items.ts';
export { LIVE_BATCH_MS } from './dynamo-stats-tally.ts';

/** The items of mail statistics on a table. */
const entitiesOf = (table: DynamoTable) => ({
  // Typed by their attributes' type, which names the markers too.
  recipients: entity<RecipientAttributes, ItemOf<typeof CampaignRecipientItem>>(
    table,
    CampaignRecipientItem,
  ),
  stepMessages: entity<
    RecipientAttributes,
    ItemOf<typeof CampaignRecipientItem>
  >(table, StepMessageItem),
  batches: entity(table, CampaignBatchItem),
  stepBatches: entity(table, StepBatchItem),
  shards: entity(table, CampaignStatsItem),
  stepShards: entity(table, StepStatsItem),
  organization: entity(table, OrganizationStatsItem),
  links: entity(table, LinkItem),
  stepLinks: entity(table, StepLinkItem),
});
type StatsEntities = ReturnType<typeof entitiesOf>;

/** Campaign (and sequence step) statistics on DynamoDB. */
export class DynamoCampaignStats implements CampaignStatsRepository {
  private readonly items: StatsEntities;
  private readonly recipientKeys: CampaignRecipientKeys;

  constructor(private readonly table: DynamoTable) {
    this.items = entitiesOf(table);
    this.recipientKeys = new CampaignRecipientKeys(table);
  }

  tally(
    orgId: string,
    subject: MailSubject,
    now: Date = new Date(),
  ): MailEventTally {
    return new DynamoStatsTally(
      this.table,
      this.subjectOf(orgId, subject),
      now,
    );
  }

  async recordEvent(
    orgId: string,
    event: MailEventRecord,
    link?: string,
  ): Promise<boolean> {
    const tally = this.tally(orgId, event.subject);
    const recorded = await tally.record(event, link);
    await tally.commit();
    return recorded;
  }

  async recordUnsubscribe(
    orgId: string,
    campaignId: string,
    contactId: string,
    at: string,
  ): Promise<boolean> {
    const shard = shardOf(contactId);
    try {
      await transactWrite(this.table, [
        this.items.recipients.updateTx(
          await this.recipientKeys.of(orgId, campaignId, contactId),
          { set: { unsubscribedAt: at } },
          {
            // Only a recipient of the campaign, and once.
            if: (w) => w.and(w.exists(), w.missing('unsubscribedAt')),
            entityType: 'keep',
          },
        ),
        // Counted in the recipient's shard, and in its month's.
        this.items.shards.updateTx(
          keys.campaignStats(orgId, campaignId, shard),
          { add: { unsubscribes: 1 } },
        ),
        this.items.organization.updateTx(
          keys.organizationStats(orgId, at.slice(0, 7), shard),
          { set: { month: at.slice(0, 7) }, add: { unsubscribes: 1 } },
        ),
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }

  async read(
    orgId: string,
    campaignId: string,
  ): Promise<{ counters: CampaignCounters; links: LinkClicks[] }> {
    const [shards, links] = await Promise.all([
      // One request: 8 shards of a few dozen counters each.
      this.items.shards.page(keys.campaignStatsShards(orgId, campaignId)),
      this.items.links.all(keys.campaignLinks(orgId, campaignId)),
    ]);
    return { counters: sumCounters(shards.items), links };
  }

  /** Where a subject's statistics live. */
  private subjectOf(orgId: string, subject: MailSubject): TallySubject {
    const { items } = this;
    const organizationTx = (month: string, shard: number, add: CounterDeltas) =>
      items.organization.updateTx(keys.organizationStats(orgId, month, shard), {
        set: { month },
        add,
      });
    if (subject.kind === 'campaign') {
      const { campaignId } = subject;
      return {
        name: `campaign ${campaignId}`,
        recipientKey: (event) =>
          this.recipientKeys.of(orgId, campaignId, event.contactId),
        recipients: items.recipients,
        recipientState: recipientStateOf('CampaignRecipient'),
        batchKey: (batch) => keys.campaignStatsBatch(orgId, campaignId, batch),
        batches: items.batches,
        shardTx: (shard, add) =>
          items.shards.updateTx(keys.campaignStats(orgId, campaignId, shard), {
            add,
          }),
        organizationTx,
        linkTx: (linkId, clicks) =>
          items.links.updateTx(keys.campaignLink(orgId, campaignId, linkId), {
            set: { url: clicks.url },
            add: { clicksTotal: clicks.total, clicksUnique: clicks.unique },
          }),
      };
    }
    const { sequenceId, step } = subject;
    return {
      name: `step ${step} of sequence ${sequenceId}`,
      recipientKey: async (event) => keys.stepMessage(orgId, event.messageId),
      recipients: items.stepMessages,
      recipientState: recipientStateOf('SequenceStepMessage'),
      batchKey: (batch) => keys.stepStatsBatch(orgId, sequenceId, batch),
      batches: items.stepBatches,
      shardTx: (shard, add) =>
        items.stepShards.updateTx(
          keys.stepStats(orgId, sequenceId, step, shard),
          { set: { step }, add },
        ),
      organizationTx,
      linkTx: (linkId, clicks) =>
        items.stepLinks.updateTx(
          keys.stepLink(orgId, sequenceId, step, linkId),
          {
            set: { url: clicks.url, step },
            add: { clicksTotal: clicks.total, clicksUnique: clicks.unique },
          },
        ),
    };
  }
}
