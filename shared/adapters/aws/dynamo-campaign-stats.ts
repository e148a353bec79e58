/**
 * Driven adapter: the statistics of campaigns, from SES's events and the
 * unsubscribe links, exact whatever SES's delivery does (a duplicate, any
 * order, a redelivery after a crash).
 *
 * One partition per campaign (`ORG#o#CAMPAIGN#c`) holds:
 * - `RECIPIENT#<contactId>`: the sender's claim, which events only update
 *   (never put: the claim stays) with the message id of the first event
 *   (never replaced: the sender's evidence that SES took the message),
 *   `seen` (a string set with a 12-character hash of each event counted:
 *   the dedupe), the instant each kind of event first happened (`openedAt`,
 *   `clickedAt`…: what is first for the unique counts), `links` (the ids of
 *   the links it clicked) and `unsubscribedAt`;
 * - `STATS#0`…`STATS#7`: the counters in 8 shards, so that the events of a
 *   big campaign spread over 8 items (a recipient's always go to the shard
 *   of its contact id's hash); `read` sums them;
 * - `LINK#<linkId>`: a clicked link's URL and clicks; its id is 16
 *   characters of the URL's SHA-256 (base64url).
 *
 * An event is one TransactWriteItems of updates, all or nothing: the
 * recipient, on condition that the event is not in `seen` (and, for an
 * open or a click, that what the counters take as a first is one); the
 * recipient's counter shard, for the types a campaign counts; the link, for
 * a click. An event that moves no counter (Send, DeliveryDelay, Rendering
 * Failure, Subscription) is the recipient's update alone, a plain one.
 * After a crash a redelivery finds the event in `seen`. Campaign mail
 * moves no organization-wide counter (`DELIVERYSTATS`): one item taking
 * every event of every campaign of an organization would be the table's
 * hottest key, and the campaigns' shards already hold the figures.
 *
 * Write units, items under 1 KB (a transaction bills 2 per item and KB):
 * - Send, DeliveryDelay, Rendering Failure, Subscription: 1 (recipient);
 * - Delivery, Bounce, Complaint, Reject, Open: 4 (and the shard);
 * - Click: 6 (and the link);
 * - an unsubscribe: 4 (recipient, shard).
 * An open or a click first reads the recipient (1 read unit), so a repeat
 * is written right away, without a unique count, and a duplicate is not
 * written at all. A duplicate of another type, or a lost race, costs one
 * refused write and that read before the right write (or none).
 * A recipient is about 600 bytes after a claim and a usual history (send,
 * delivery, a few opens and clicks); `seen` grows by 12 bytes per event,
 * so past some 35 more events (a scanner clicking every link) its part
 * costs 2 units more per KB.
 */
import { createHash } from 'node:crypto';
import {
  GetCommand,
  paginateQuery,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type {
  CampaignCounters,
  CampaignStatsRepository,
  LinkClicks,
} from '../../campaigns/stats-ports.ts';
import { type EntityType, itemSchema, parseItem } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import type { SesEventType } from '../../delivery/ses-event.ts';
import { ConflictError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import {
  Counter,
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

/** Counter shards per campaign. */
export const CAMPAIGN_STATS_SHARDS = 8;

const hash = (text: string, chars: number): string =>
  createHash('sha256').update(text).digest('base64url').slice(0, chars);

/** The id of a campaign's link: 16 characters of its URL's SHA-256. */
export const linkIdOf = (url: string): string => hash(url, 16);

/** The counter shard of a recipient: its contact id's hash, modulo 8. */
export const shardOf = (contactId: string): number =>
  createHash('sha256').update(contactId).digest().readUInt8(0) %
  CAMPAIGN_STATS_SHARDS;

/** Each counter of a shard: absent until first counted, so 0. */
const COUNTERS = {
  delivered: Counter,
  bouncesHard: Counter,
  bouncesSoft: Counter,
  complaints: Counter,
  rejected: Counter,
  opensTotal: Counter,
  opensUnique: Counter,
  clicksTotal: Counter,
  clicksUnique: Counter,
  unsubscribes: Counter,
} satisfies Record<keyof CampaignCounters, typeof Counter>;
const COUNTER_NAMES = Object.keys(COUNTERS) as (keyof CampaignCounters)[];

const StatsItem = itemSchema('CampaignStats', COUNTERS);

const LinkItem = itemSchema('CampaignLink', {
  url: v.string(),
  clicksTotal: Counter,
  clicksUnique: Counter,
});

/** What a recipient's item says of the events counted so far. */
const RecipientItem = itemSchema('CampaignRecipient', {
  seen: v.optional(v.set(v.string()), () => new Set<string>()),
  links: v.optional(v.set(v.string()), () => new Set<string>()),
  openedAt: v.optional(v.string()),
  clickedAt: v.optional(v.string()),
});
type RecipientState = v.InferOutput<typeof RecipientItem.schema>;

/** Nothing counted yet: what an event assumes until it reads otherwise. */
const NOTHING_SEEN: RecipientState = { seen: new Set(), links: new Set() };

/** The campaign counter each counted type moves (none for the others). */
const counterOf = (
  type: SesEventType,
  bounceType: string | undefined,
): keyof CampaignCounters | undefined => {
  switch (type) {
    case 'Delivery':
      return 'delivered';
    case 'Bounce':
      return bounceType === 'Permanent' ? 'bouncesHard' : 'bouncesSoft';
    case 'Complaint':
      return 'complaints';
    case 'Reject':
      return 'rejected';
    case 'Open':
      return 'opensTotal';
    case 'Click':
      return 'clicksTotal';
    default:
      return undefined;
  }
};

/** The recipient's attribute of when each kind of event first happened. */
const FIRST_AT: Partial<Record<SesEventType, string>> = {
  Delivery: 'deliveredAt',
  Bounce: 'bouncedAt',
  Complaint: 'complainedAt',
  Reject: 'rejectedAt',
  Open: 'openedAt',
  Click: 'clickedAt',
};

type CampaignEvent = Parameters<CampaignStatsRepository['recordEvent']>[1];

/** What an event counts as a first: a unique open, click, link click. */
interface Firsts {
  open: boolean;
  click: boolean;
  link: boolean;
}

/** Campaign statistics on DynamoDB. */
export class DynamoCampaignStats implements CampaignStatsRepository {
  constructor(private readonly table: DynamoTable) {}

  async recordEvent(
    orgId: string,
    event: CampaignEvent,
    link?: string,
  ): Promise<boolean> {
    const recipient = keys.campaignRecipient(
      orgId,
      event.campaignId,
      event.contactId,
    );
    const seen = hash(
      [event.messageId, event.type, event.recipient, event.at].join('#'),
      12,
    );
    const clicked = event.type === 'Click' ? link : undefined;
    const linkId = clicked === undefined ? undefined : linkIdOf(clicked);
    // Only opens and clicks have firsts to know; others assume nothing.
    const knowFirsts = event.type === 'Open' || event.type === 'Click';
    return retryOnConflict(async (retryable, attempt) => {
      const state =
        knowFirsts || attempt > 1
          ? await this.recipientState(recipient)
          : NOTHING_SEEN;
      if (state.seen.has(seen)) return false;
      const firsts: Firsts = {
        open: event.type === 'Open' && state.openedAt === undefined,
        click: event.type === 'Click' && state.clickedAt === undefined,
        link: linkId !== undefined && !state.links.has(linkId),
      };
      const update = this.recipientUpdate(
        recipient,
        event,
        seen,
        linkId,
        firsts,
      );
      const others = [
        ...this.countersUpdate(orgId, event, firsts),
        ...(clicked !== undefined && linkId !== undefined
          ? [this.linkUpdate(orgId, event, clicked, linkId, firsts)]
          : []),
      ];
      try {
        // An event that moves no counter (a Send…) is one plain update.
        if (others.length === 0 && update.Update) {
          await this.table.client.send(new UpdateCommand(update.Update));
        } else {
          await transactWrite(this.table, [update, ...others]);
        }
        return true;
      } catch (error) {
        // The recipient changed since it was read (or never was): a
        // duplicate, or a first that is not one. Read it, and write again.
        if (isConditionFailure(error) || failedConditions(error)?.includes(0)) {
          retryable(
            new ConflictError(
              'write.contended',
              `The recipient ${event.contactId} of campaign ${event.campaignId} changed while its event was counted`,
              { cause: error },
            ),
          );
        }
        throw error;
      }
    });
  }

  async recordUnsubscribe(
    orgId: string,
    campaignId: string,
    contactId: string,
    at: string,
  ): Promise<boolean> {
    try {
      await transactWrite(this.table, [
        {
          Update: {
            TableName: this.table.tableName,
            Key: keys.campaignRecipient(orgId, campaignId, contactId),
            UpdateExpression: 'SET unsubscribedAt = :at',
            // Only a recipient of the campaign, and once.
            ConditionExpression:
              'attribute_exists(PK) AND attribute_not_exists(unsubscribedAt)',
            ExpressionAttributeValues: { ':at': at },
          },
        },
        this.shardUpdate(orgId, campaignId, contactId, ['unsubscribes']),
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
    const shards = keys.campaignStatsShards(orgId, campaignId);
    const [{ Items = [] }, links] = await Promise.all([
      this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': shards.PK,
            ':prefix': shards.skPrefix,
          },
        }),
      ),
      this.links(orgId, campaignId),
    ]);
    // No shard yet: every counter is 0.
    const counters: CampaignCounters = parseItem(StatsItem, {});
    for (const item of Items) {
      const shard = parseItem(StatsItem, item);
      for (const name of COUNTER_NAMES) counters[name] += shard[name];
    }
    return { counters, links };
  }

  private async links(orgId: string, campaignId: string) {
    const query = keys.campaignLinks(orgId, campaignId);
    const links: LinkClicks[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? [])
        links.push(parseItem(LinkItem, item));
    }
    return links;
  }

  /** What the recipient's item says so far, strongly consistent. */
  private async recipientState(key: Key): Promise<RecipientState> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: key,
        ConsistentRead: true,
        ProjectionExpression: '#seen, #links, #openedAt, #clickedAt',
        ExpressionAttributeNames: {
          '#seen': 'seen',
          '#links': 'links',
          '#openedAt': 'openedAt',
          '#clickedAt': 'clickedAt',
        },
      }),
    );
    return Item ? parseItem(RecipientItem, Item, key) : NOTHING_SEEN;
  }

  /**
   * The recipient's part: the event into `seen`, the message id if none
   * yet, the first instant of its kind, the clicked link; on condition that
   * the event is new and each first is one.
   */
  private recipientUpdate(
    key: Key,
    event: CampaignEvent,
    seen: string,
    linkId: string | undefined,
    firsts: Firsts,
  ): TransactItem {
    const first = FIRST_AT[event.type];
    const conditions = [
      'NOT contains(#seen, :seen)',
      ...(firsts.open ? ['attribute_not_exists(openedAt)'] : []),
      ...(firsts.click ? ['attribute_not_exists(clickedAt)'] : []),
      ...(firsts.link ? ['NOT contains(#links, :link)'] : []),
    ];
    return {
      Update: {
        TableName: this.table.tableName,
        Key: key,
        UpdateExpression: [
          'SET messageId = if_not_exists(messageId, :messageId)',
          '#type = if_not_exists(#type, :type)',
          'contactId = :contactId',
          ...(first ? [`${first} = if_not_exists(${first}, :at)`] : []),
        ]
          .join(', ')
          .concat(` ADD #seen :seenSet${linkId ? ', #links :linkSet' : ''}`),
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: {
          '#type': '_type',
          '#seen': 'seen',
          ...(linkId ? { '#links': 'links' } : {}),
        },
        ExpressionAttributeValues: {
          ':messageId': event.messageId,
          ':type': 'CampaignRecipient' satisfies EntityType,
          ':contactId': event.contactId,
          ':seen': seen,
          ':seenSet': new Set([seen]),
          ...(first ? { ':at': event.at } : {}),
          ...(linkId
            ? {
                ':linkSet': new Set([linkId]),
                ...(firsts.link ? { ':link': linkId } : {}),
              }
            : {}),
        },
      },
    };
  }

  /** The campaign counters an event moves: none for uncounted types. */
  private countersUpdate(
    orgId: string,
    event: CampaignEvent,
    firsts: Firsts,
  ): TransactItem[] {
    const counter = counterOf(event.type, event.bounceType);
    if (!counter) return [];
    return [
      this.shardUpdate(orgId, event.campaignId, event.contactId, [
        counter,
        ...(firsts.open ? (['opensUnique'] as const) : []),
        ...(firsts.click ? (['clicksUnique'] as const) : []),
      ]),
    ];
  }

  /** Adds 1 to each of these counters in the recipient's shard. */
  private shardUpdate(
    orgId: string,
    campaignId: string,
    contactId: string,
    counters: (keyof CampaignCounters)[],
  ): TransactItem {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.campaignStats(orgId, campaignId, shardOf(contactId)),
        UpdateExpression: `SET #type = :type ADD ${counters
          .map((_, i) => `#c${i} :one`)
          .join(', ')}`,
        ExpressionAttributeNames: {
          '#type': '_type',
          ...Object.fromEntries(
            counters.map((counter, i) => [`#c${i}`, counter]),
          ),
        },
        ExpressionAttributeValues: {
          ':type': 'CampaignStats' satisfies EntityType,
          ':one': 1,
        },
      },
    };
  }

  /** A click on a link: its URL, its clicks, a unique one if first. */
  private linkUpdate(
    orgId: string,
    event: CampaignEvent,
    url: string,
    linkId: string,
    firsts: Firsts,
  ): TransactItem {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.campaignLink(orgId, event.campaignId, linkId),
        UpdateExpression: `SET #type = :type, #url = :url ADD clicksTotal :one${
          firsts.link ? ', clicksUnique :one' : ''
        }`,
        ExpressionAttributeNames: { '#type': '_type', '#url': 'url' },
        ExpressionAttributeValues: {
          ':type': 'CampaignLink' satisfies EntityType,
          ':url': url,
          ':one': 1,
        },
      },
    };
  }
}
