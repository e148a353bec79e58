/**
 * Driven adapter: the statistics of campaigns, from SES's events and the
 * unsubscribe links, exact whatever SES's delivery does (a duplicate, any
 * order, a redelivery after a crash), counted per batch of events.
 *
 * The campaign's partition (`ORG#o#CAMPAIGN#c`) holds:
 * - `STATS#0`…`STATS#7`: the counters in 8 shards (a batch adds to the
 *   shard of its id's hash, so concurrent batches rarely meet); `read`
 *   sums them;
 * - `COUNTED#<batch>`: the fate of a batch of events, `counted` or `void`
 *   (put if absent, so exactly one of the two), kept 30 days;
 * - `LINK#<linkId>`: a clicked link's URL and clicks; its id is 16
 *   characters of the URL's SHA-256 (base64url).
 * The recipient's item (`RECIPIENT#<contactId>` in one of the campaign's
 * recipient partitions, `campaign-recipient-keys.ts`: the sender's claim,
 * which events only update, never put) holds the message id of the first event
 * (never replaced: the sender's evidence that SES took the message),
 * `seen` (a string set with a 12-character hash of each event recorded:
 * the dedupe), the instant each kind of event first happened (`openedAt`,
 * `clickedAt`…: what is first for the unique counts), `links` (the ids of
 * the links it clicked), `unsubscribedAt`, and for each counted event
 * `c#<hash>`: the batch that counts it and the firsts it counts.
 *
 * Counting per batch, in two steps (see `CampaignEventTally`):
 * 1. record: one plain conditional update of the recipient per event (the
 *    event not in `seen`, each first a first): into `seen`, with its batch
 *    `X` in `c#<hash>`; its counts are kept in memory;
 * 2. commit: one TransactWriteItems per batch: put `COUNTED#X` as
 *    `counted` if absent, add the batch's counts to a shard, and each
 *    clicked link's.
 * An event found recorded already (a duplicate, a redelivery) is counted
 * by the batch its `c#` names: nothing to do if that batch is `counted` or
 * is this one. If the batch has no fate and started less than a minute ago
 * (`LIVE_BATCH_MS`) it may still commit: the message is retried later. If
 * it is older, it died between its steps: it is made `void` (put if
 * absent; a commit still on its way is refused and fails its messages back
 * to the queue) and the event is moved to this batch (a conditional update
 * of `c#<hash>` from X to this batch) and counted here. An event
 * recorded by the older code (in `seen`, no `c#`) was counted in its own
 * transaction. So each event is counted once: by the one batch that is
 * both named on its recipient and `counted`.
 *
 * Write units, items under 1 KB (a transaction bills 2 per item and KB):
 * - Send, DeliveryDelay, Rendering Failure, Subscription: 1 (recipient);
 * - Delivery, Bounce, Complaint, Reject, Open, Click: 1, plus each batch's
 *   commit (4, and 2 per link clicked) shared by its events: 1.04 for a
 *   batch of 100 events of one campaign;
 * - an unsubscribe: 4 (recipient and shard, one transaction: rare).
 * An open or a click first reads the recipient (1 read unit), so a repeat
 * is written right away, without a unique count, and a duplicate is not
 * written at all. A duplicate of another type costs one refused write, a
 * read of the recipient and one of its batch's fate.
 * A recipient is about 600 bytes after a claim and a usual history (send,
 * delivery, a few opens and clicks); each counted event adds about 35
 * bytes (`seen` and `c#`), so past some 12 more (a scanner clicking every
 * link) its writes cost 2 units instead of 1.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type {
  CampaignCounters,
  CampaignStatsRepository,
  LinkClicks,
} from '../../campaigns/stats-ports.ts';
import { ifMissing } from '../../db/expressions.ts';
import { type ItemOf, type ItemSchema, itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import type {
  CampaignEventRecord,
  CampaignEventTally,
} from '../../delivery/ports.ts';
import type { SesEventType } from '../../delivery/ses-event.ts';
import { ConflictError } from '../../errors.ts';
import { type Retryable, retryOnConflict } from '../../retry.ts';
import { CampaignRecipientKeys } from './campaign-recipient-keys.ts';
import { entity } from './dynamo-entity.ts';
import {
  Counter,
  type DynamoTable,
  epochSeconds,
  failedConditions,
  isConditionFailure,
  transactWrite,
} from './dynamo-table.ts';

/** Counter shards per campaign. */
export const CAMPAIGN_STATS_SHARDS = 8;

const hash = (text: string, chars: number): string =>
  createHash('sha256').update(text).digest('base64url').slice(0, chars);

/** The id of a campaign's link: 16 characters of its URL's SHA-256. */
export const linkIdOf = (url: string): string => hash(url, 16);

/**
 * The counter shard of an id (a recipient's contact id, a batch's id): its
 * hash, modulo 8.
 */
export const shardOf = (id: string): number =>
  createHash('sha256').update(id).digest().readUInt8(0) % CAMPAIGN_STATS_SHARDS;

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

/** A clicked link of a campaign: its URL and clicks. */
export const LinkItem = itemSchema('CampaignLink', {
  url: v.string(),
  clicksTotal: Counter,
  clicksUnique: Counter,
});

/**
 * A marker's attribute, `c#<hash>` of its event: it holds the batch that
 * counts the event and the firsts it counts.
 */
type Marker = `c#${string}`;

/** What a recipient's item says of the events counted so far. */
const stateEntries = {
  seen: v.optional(v.set(v.string()), () => new Set<string>()),
  links: v.optional(v.set(v.string()), () => new Set<string>()),
  openedAt: v.optional(v.string()),
  clickedAt: v.optional(v.string()),
};

/**
 * A recipient's item as the events write it (the sender's claim writes the
 * rest). Each counted event adds its marker, an attribute named by the
 * event: only the attributes' type, `RecipientAttributes`, names those.
 */
const RecipientItem = itemSchema('CampaignRecipient', {
  ...stateEntries,
  messageId: v.optional(v.string()),
  contactId: v.optional(v.string()),
  deliveredAt: v.optional(v.string()),
  bouncedAt: v.optional(v.string()),
  complainedAt: v.optional(v.string()),
  rejectedAt: v.optional(v.string()),
  unsubscribedAt: v.optional(v.string()),
});
type RecipientAttributes = v.InferInput<typeof RecipientItem.schema> & {
  [marker: Marker]: string;
};

/**
 * What a recipient says so far, and the marker of the event asked about:
 * loose, so that marker is read by its name.
 */
const RecipientStateItem = {
  type: 'CampaignRecipient',
  schema: v.looseObject(stateEntries),
} satisfies ItemSchema<unknown>;

type RecipientState = Pick<
  ItemOf<typeof RecipientItem>,
  keyof typeof stateEntries
> & {
  /** `c#<hash>` of the event asked about: its batch and firsts. */
  marker?: string;
};

/** The fate of a batch of events. */
const BatchItem = itemSchema('CampaignStatsBatch', {
  state: v.picklist(['counted', 'void']),
});

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

/** The recipient's attributes of when a kind of event first happened. */
type FirstAt =
  | 'deliveredAt'
  | 'bouncedAt'
  | 'complainedAt'
  | 'rejectedAt'
  | 'openedAt'
  | 'clickedAt';

/** The recipient's attribute of when each kind of event first happened. */
const FIRST_AT: Partial<Record<SesEventType, FirstAt>> = {
  Delivery: 'deliveredAt',
  Bounce: 'bouncedAt',
  Complaint: 'complainedAt',
  Reject: 'rejectedAt',
  Open: 'openedAt',
  Click: 'clickedAt',
};

/** What an event counts as a first: a unique open, click, link click. */
interface Firsts {
  open: boolean;
  click: boolean;
  link: boolean;
}

/**
 * A batch's id: when it started (epoch ms, base 36) and 12 random hex
 * digits, so a redelivery can tell a batch that may still be running.
 */
const newBatchId = (now: Date): string =>
  `${now.getTime().toString(36)}-${randomBytes(6).toString('hex')}`;

/** When a batch started, from its id (0 if unreadable: long ago). */
const startOf = (batch: string): number =>
  Number.parseInt(batch.split('-')[0] ?? '', 36) || 0;

/**
 * How long a batch may still be running: the events queue's visibility
 * timeout (60 s; the function's own timeout is 10 s). A redelivery finding
 * an event of a younger batch with no fate waits (its message is retried)
 * rather than void a batch that may still commit: voiding a live batch
 * sends all of its messages back, and a busy queue's copies would do that
 * to batch after batch.
 */
export const LIVE_BATCH_MS = 60_000;

/** How long a batch's fate is kept: past any redelivery (SQS: 14 days). */
const BATCH_RECORD_DAYS = 30;

/** Most links one commit's transaction moves (TransactWriteItems: 100). */
const LINKS_PER_COMMIT = 96;

/** The attribute naming the batch that counts an event. */
const countedBy = (seen: string): Marker => `c#${seen}`;

/** The marker of `c#<hash>`: the batch, then the firsts it counts. */
const markerOf = (batch: string, firsts: Firsts): string =>
  `${batch}.${firsts.open ? 'o' : ''}${firsts.click ? 'c' : ''}${
    firsts.link ? 'l' : ''
  }`;

const parseMarker = (marker: string): { batch: string; firsts: Firsts } => {
  const [batch = '', flags = ''] = marker.split('.');
  return {
    batch,
    firsts: {
      open: flags.includes('o'),
      click: flags.includes('c'),
      link: flags.includes('l'),
    },
  };
};

/** What one part of a tally adds, by counter and by link. */
interface Counts {
  id: string;
  counters: Partial<Record<keyof CampaignCounters, number>>;
  links: Map<string, { url: string; total: number; unique: number }>;
  events: number;
}

/** An event as a tally records it. */
interface Recorded {
  event: CampaignEventRecord;
  seen: string;
  link: { id: string; url: string } | undefined;
}

/** The items of campaigns' statistics on a table. */
const entitiesOf = (table: DynamoTable) => ({
  // Typed by its attributes' type, which names the markers too.
  recipients: entity<RecipientAttributes, ItemOf<typeof RecipientItem>>(
    table,
    RecipientItem,
  ),
  batches: entity(table, BatchItem),
  shards: entity(table, StatsItem),
  links: entity(table, LinkItem),
});
type StatsEntities = ReturnType<typeof entitiesOf>;

/** A tally of one campaign's events on DynamoDB (see the file's header). */
class DynamoCampaignTally implements CampaignEventTally {
  /** Parts, each committed in one transaction (at most 96 links each). */
  private readonly parts: Counts[] = [];

  constructor(
    private readonly table: DynamoTable,
    private readonly items: StatsEntities,
    private readonly recipientKeys: CampaignRecipientKeys,
    private readonly orgId: string,
    private readonly campaignId: string,
    private readonly now: Date,
  ) {}

  async record(event: CampaignEventRecord, link?: string): Promise<boolean> {
    const recipient = await this.recipientKeys.of(
      this.orgId,
      event.campaignId,
      event.contactId,
    );
    const seen = hash(
      [event.messageId, event.type, event.recipient, event.at].join('#'),
      12,
    );
    const url = event.type === 'Click' ? link : undefined;
    const recorded: Recorded = {
      event,
      seen,
      link: url === undefined ? undefined : { id: linkIdOf(url), url },
    };
    const counted = counterOf(event.type, event.bounceType) !== undefined;
    // Only opens and clicks have firsts to know; others assume nothing.
    const knowFirsts = event.type === 'Open' || event.type === 'Click';
    return retryOnConflict(async (retryable, attempt) => {
      const state =
        knowFirsts || attempt > 1
          ? await this.recipientState(recipient, seen)
          : NOTHING_SEEN;
      if (state.seen.has(seen)) {
        return counted
          ? this.recount(recipient, recorded, state, retryable)
          : false;
      }
      const firsts: Firsts = {
        open: event.type === 'Open' && state.openedAt === undefined,
        click: event.type === 'Click' && state.clickedAt === undefined,
        link: recorded.link !== undefined && !state.links.has(recorded.link.id),
      };
      const part = counted ? this.partFor(recorded) : undefined;
      await this.recordOn(recipient, recorded, firsts, part?.id).catch(
        retryable,
      );
      if (part) this.add(part, recorded, firsts);
      return true;
    });
  }

  async commit(): Promise<void> {
    for (const part of this.parts) {
      if (part.events > 0) await this.commitPart(part);
    }
  }

  /**
   * An event recorded before: counted already (false), or left by a batch
   * that died before its commit, and taken over by this one (true).
   */
  private async recount(
    recipient: Key,
    recorded: Recorded,
    state: RecipientState,
    retryable: Retryable,
  ): Promise<boolean> {
    // Recorded by the older code, which counted in the same transaction.
    if (state.marker === undefined) return false;
    const { batch, firsts } = parseMarker(state.marker);
    if (this.parts.some((part) => part.id === batch)) return false;
    if ((await this.settle(batch)) === 'counted') return false;
    // Voided: by this redelivery, or another one; the event is free.
    const part = this.partFor(recorded);
    const marker = countedBy(recorded.seen);
    const theirs = state.marker;
    await this.items.recipients
      .update(
        recipient,
        { set: { [marker]: markerOf(part.id, firsts) } },
        {
          if: (w) => w.eq(marker, theirs),
          // Another batch took it over first: read again, and see.
          otherwise: (cause) =>
            new ConflictError(
              'write.contended',
              `The event of recipient ${recorded.event.contactId} of campaign ${this.campaignId} was taken over meanwhile`,
              { cause },
            ),
          entityType: 'keep',
        },
      )
      .catch(retryable);
    this.add(part, recorded, firsts);
    return true;
  }

  /**
   * The fate of a batch, settled: `counted` if it committed; otherwise it
   * is made `void` now (put if absent: its commit can no longer pass).
   */
  private async settle(batch: string): Promise<'counted' | 'void'> {
    const key = keys.campaignStatsBatch(this.orgId, this.campaignId, batch);
    const found = await this.items.batches.get(key, { consistent: true });
    if (found) return found.state;
    if (startOf(batch) > this.now.getTime() - LIVE_BATCH_MS) {
      throw new ConflictError(
        'write.contended',
        `An event of campaign ${this.campaignId} is being counted by a batch that may still be running; its message comes again`,
      );
    }
    try {
      await this.items.batches.put(
        key,
        { state: 'void' },
        { if: (w) => w.missing(), housekeeping: this.batchExpiry() },
      );
      return 'void';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // It committed, or another retry voided it, meanwhile.
      return this.settle(batch);
    }
  }

  /** When a batch's fate is deleted (its TTL). */
  private batchExpiry() {
    const expires = new Date(
      this.now.getTime() + BATCH_RECORD_DAYS * 24 * 3600_000,
    );
    return { ttl: epochSeconds(expires) };
  }

  /** The part an event goes to: the last, unless its links are full. */
  private partFor(recorded: Recorded): Counts {
    const last = this.parts.at(-1);
    if (
      last &&
      (recorded.link === undefined ||
        last.links.has(recorded.link.id) ||
        last.links.size < LINKS_PER_COMMIT)
    ) {
      // Reserve the link's place now: the part's links never outgrow it.
      if (recorded.link && !last.links.has(recorded.link.id)) {
        last.links.set(recorded.link.id, {
          url: recorded.link.url,
          total: 0,
          unique: 0,
        });
      }
      return last;
    }
    this.parts.push({
      id: newBatchId(this.now),
      counters: {},
      links: new Map(),
      events: 0,
    });
    return this.partFor(recorded);
  }

  private add(part: Counts, recorded: Recorded, firsts: Firsts): void {
    const { event, link } = recorded;
    const counter = counterOf(event.type, event.bounceType);
    const names = [
      ...(counter ? [counter] : []),
      ...(firsts.open ? (['opensUnique'] as const) : []),
      ...(firsts.click ? (['clicksUnique'] as const) : []),
    ];
    for (const name of names) {
      part.counters[name] = (part.counters[name] ?? 0) + 1;
    }
    if (link) {
      const clicks = part.links.get(link.id) ?? {
        url: link.url,
        total: 0,
        unique: 0,
      };
      clicks.total++;
      if (firsts.link) clicks.unique++;
      part.links.set(link.id, clicks);
    }
    part.events++;
  }

  /** One transaction: the batch counted, its counts on a shard and links. */
  private async commitPart(part: Counts): Promise<void> {
    const batchKey = keys.campaignStatsBatch(
      this.orgId,
      this.campaignId,
      part.id,
    );
    const counters: Counts['counters'] = Object.fromEntries(
      Object.entries(part.counters).filter(([, n]) => n > 0),
    );
    const links = [...part.links].filter(([, clicks]) => clicks.total > 0);
    try {
      await transactWrite(this.table, [
        this.items.batches.putTx(
          batchKey,
          { state: 'counted' },
          { if: (w) => w.missing(), housekeeping: this.batchExpiry() },
        ),
        ...(Object.keys(counters).length > 0
          ? [
              this.items.shards.updateTx(
                keys.campaignStats(
                  this.orgId,
                  this.campaignId,
                  shardOf(part.id),
                ),
                { add: counters },
              ),
            ]
          : []),
        ...links.map(([linkId, clicks]) =>
          this.items.links.updateTx(
            keys.campaignLink(this.orgId, this.campaignId, linkId),
            {
              set: { url: clicks.url },
              add: { clicksTotal: clicks.total, clicksUnique: clicks.unique },
            },
          ),
        ),
      ]);
    } catch (error) {
      if (!failedConditions(error)?.includes(0)) throw error;
      // Its fate was settled meanwhile: by this very commit (a retry after
      // a lost answer), or voided by a redelivery that took its events.
      const found = await this.items.batches.get(batchKey, {
        consistent: true,
      });
      if (found?.state === 'counted') return;
      throw new ConflictError(
        'write.contended',
        `A batch of events of campaign ${this.campaignId} was taken over by a redelivery before it was counted; its messages come again`,
        { cause: error },
      );
    }
  }

  /** What the recipient's item says so far, strongly consistent. */
  private async recipientState(
    key: Key,
    seen: string,
  ): Promise<RecipientState> {
    const marker = countedBy(seen);
    const found = await this.items.recipients.project(
      key,
      ['seen', 'links', 'openedAt', 'clickedAt', marker],
      RecipientStateItem,
      { consistent: true },
    );
    if (!found) return NOTHING_SEEN;
    const { [marker]: counted, ...state } = found;
    return {
      ...state,
      ...(typeof counted === 'string' ? { marker: counted } : {}),
    };
  }

  /**
   * The recipient's part: the event into `seen` (with the batch counting
   * it, for a counted type), the message id if none yet, the first instant
   * of its kind, the clicked link; on condition that the event is new and
   * each first is one.
   */
  private recordOn(
    key: Key,
    { event, seen, link }: Recorded,
    firsts: Firsts,
    batch: string | undefined,
  ): Promise<undefined> {
    const first = FIRST_AT[event.type];
    return this.items.recipients.update(
      key,
      {
        set: {
          messageId: ifMissing(event.messageId),
          contactId: event.contactId,
          ...(first ? { [first]: ifMissing(event.at) } : {}),
          ...(batch ? { [countedBy(seen)]: markerOf(batch, firsts) } : {}),
        },
        add: {
          seen: new Set([seen]),
          ...(link ? { links: new Set([link.id]) } : {}),
        },
      },
      {
        if: (w) =>
          w.and(
            w.not(w.contains('seen', seen)),
            firsts.open && w.missing('openedAt'),
            firsts.click && w.missing('clickedAt'),
            firsts.link && link && w.not(w.contains('links', link.id)),
          ),
        // The recipient changed since it was read (or never was): a
        // duplicate, or a first that is not one. Read it, and write again.
        otherwise: (cause) =>
          new ConflictError(
            'write.contended',
            `The recipient ${event.contactId} of campaign ${event.campaignId} changed while its event was recorded`,
            { cause },
          ),
        // The sender's claim typed it; an event before it types it too.
        entityType: 'ifMissing',
      },
    );
  }
}

/** Campaign statistics on DynamoDB. */
export class DynamoCampaignStats implements CampaignStatsRepository {
  private readonly items: StatsEntities;
  private readonly recipientKeys: CampaignRecipientKeys;

  constructor(private readonly table: DynamoTable) {
    this.items = entitiesOf(table);
    this.recipientKeys = new CampaignRecipientKeys(table);
  }

  tally(
    orgId: string,
    campaignId: string,
    now: Date = new Date(),
  ): CampaignEventTally {
    return new DynamoCampaignTally(
      this.table,
      this.items,
      this.recipientKeys,
      orgId,
      campaignId,
      now,
    );
  }

  async recordEvent(
    orgId: string,
    event: CampaignEventRecord,
    link?: string,
  ): Promise<boolean> {
    const tally = this.tally(orgId, event.campaignId);
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
        // Counted in the recipient's shard.
        this.items.shards.updateTx(
          keys.campaignStats(orgId, campaignId, shardOf(contactId)),
          { add: { unsubscribes: 1 } },
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
      // One request: 8 shards of a few counters each.
      this.items.shards.page(keys.campaignStatsShards(orgId, campaignId)),
      this.items.links.all(keys.campaignLinks(orgId, campaignId)),
    ]);
    // No shard yet: every counter is 0.
    const counters: CampaignCounters = this.items.shards.parse({});
    for (const shard of shards.items) {
      for (const name of COUNTER_NAMES) counters[name] += shard[name];
    }
    return { counters, links };
  }
}
