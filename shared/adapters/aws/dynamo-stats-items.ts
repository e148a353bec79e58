/**
 * Driven adapter helper: the items of mail statistics on the table — the
 * counter shards of a campaign, a sequence step and an organization month,
 * the clicked links, the fates of batches of events, and the recipient
 * items the events record on — and the sums a reader makes of them. The
 * tally (`dynamo-stats-tally.ts`) writes them; the campaign statistics and
 * the statistics reader read them.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { type ItemSchema, itemSchema } from '../../db/items.ts';
import {
  COUNTER_NAMES,
  type CounterName,
  MAILBOX_PROVIDERS,
  type MailCounters,
  noCounters,
} from '../../statistics/counters.ts';
import { Counter } from './dynamo-table.ts';

/** Counter shards per campaign, sequence step and organization month. */
export const CAMPAIGN_STATS_SHARDS = 8;

/**
 * The counter shard of an id (a recipient's contact id, a batch's id): its
 * hash, modulo 8.
 */
export const shardOf = (id: string): number =>
  createHash('sha256').update(id).digest().readUInt8(0) % CAMPAIGN_STATS_SHARDS;

/** The id of a link: 16 characters of its URL's SHA-256 (base64url). */
export const linkIdOf = (url: string): string =>
  createHash('sha256').update(url).digest('base64url').slice(0, 16);

/** Each counter of a shard: absent until first counted, so 0. */
const COUNTERS = Object.fromEntries(
  COUNTER_NAMES.map((name) => [name, Counter]),
) as Record<CounterName, typeof Counter>;

/** A shard of a campaign's counters. */
export const CampaignStatsItem = itemSchema('CampaignStats', COUNTERS);

/** A shard of the counters of one step of a sequence. */
export const StepStatsItem = itemSchema('SequenceStepStats', {
  step: v.number(),
  ...COUNTERS,
});

/** A shard of an organization's counters of one month. */
export const OrganizationStatsItem = itemSchema('OrganizationStats', {
  month: v.string(),
  ...COUNTERS,
});

const linkEntries = {
  url: v.string(),
  clicksTotal: Counter,
  clicksUnique: Counter,
};

/** A clicked link of a campaign: its URL and clicks. */
export const LinkItem = itemSchema('CampaignLink', linkEntries);

/** A clicked link of a sequence step. */
export const StepLinkItem = itemSchema('SequenceStepLink', {
  step: v.number(),
  ...linkEntries,
});

const batchEntries = { state: v.picklist(['counted', 'void']) };

/** The fate of a batch of a campaign's events. */
export const CampaignBatchItem = itemSchema('CampaignStatsBatch', batchEntries);

/** The fate of a batch of a sequence's events. */
export const StepBatchItem = itemSchema('SequenceStatsBatch', batchEntries);

/**
 * What a recipient's item says of the events counted so far: the dedupe,
 * the firsts, the verdicts' firsts, its clicks, its provider.
 */
export const recipientStateEntries = {
  seen: v.optional(v.set(v.string()), () => new Set<string>()),
  links: v.optional(v.set(v.string()), () => new Set<string>()),
  openedAt: v.optional(v.string()),
  clickedAt: v.optional(v.string()),
  deliveredAt: v.optional(v.string()),
  humanOpenedAt: v.optional(v.string()),
  machineOpenedAt: v.optional(v.string()),
  /** Its recent clicks (`click-bursts.ts`), oldest first. */
  clicks: v.optional(v.array(v.string()), () => []),
  /** Its clicks counted a person's, and a scanner's: absent before one. */
  humanClicks: v.optional(v.number()),
  scannerClicks: v.optional(v.number()),
  /** Its mailbox provider, set by its first event recorded. */
  provider: v.optional(v.picklist(MAILBOX_PROVIDERS)),
};

const recipientEntries = {
  ...recipientStateEntries,
  messageId: v.optional(v.string()),
  contactId: v.optional(v.string()),
  bouncedAt: v.optional(v.string()),
  complainedAt: v.optional(v.string()),
  rejectedAt: v.optional(v.string()),
  unsubscribedAt: v.optional(v.string()),
};

/**
 * A campaign's recipient as the events write it (the sender's claim writes
 * the rest). Each counted event adds its marker, an attribute named by the
 * event (`c#<hash>`): the attributes' type of the tally names those.
 */
export const CampaignRecipientItem = itemSchema(
  'CampaignRecipient',
  recipientEntries,
);

/** The recipient of a sequence step's message, as the events write it. */
export const StepMessageItem = itemSchema(
  'SequenceStepMessage',
  recipientEntries,
);

/**
 * What a recipient says so far, and the marker of the event asked about:
 * loose, so that marker is read by its name.
 */
export const recipientStateOf = (
  type: 'CampaignRecipient' | 'SequenceStepMessage',
) =>
  ({
    type,
    schema: v.looseObject(recipientStateEntries),
  }) satisfies ItemSchema<unknown>;

/** The sum of counter shards (none: every counter 0). */
export const sumCounters = (
  shards: readonly Partial<Record<CounterName, number>>[],
): MailCounters => {
  const sum = noCounters();
  for (const shard of shards) {
    for (const name of COUNTER_NAMES) sum[name] += shard[name] ?? 0;
  }
  return sum;
};
