/**
 * Driven adapter: a tally of the events of one campaign or one sequence
 * step, counted per batch of events and exact whatever SES's delivery does
 * (a duplicate, any order, a redelivery after a crash).
 *
 * Counting per batch, in two steps:
 * 1. record: one plain conditional update of the recipient per event (the
 *    event not in `seen`, each first a first, its clicks and provider as
 *    read): into `seen`, with its batch `X` and its marks in `c#<hash>`;
 *    its counts are kept in memory;
 * 2. commit: one TransactWriteItems per batch: put `COUNTED#X` as
 *    `counted` if absent, add the batch's counts to a shard of the
 *    subject and to one of its organization's month, and each clicked
 *    link's.
 * An event found recorded already (a duplicate, a redelivery) is counted
 * by the batch its `c#` names: nothing to do if that batch is `counted` or
 * is this one. If the batch has no fate and started less than a minute ago
 * (`LIVE_BATCH_MS`) it may still commit: the message is retried later. If
 * it is older, it died between its steps: it is made `void` (put if
 * absent; a commit still on its way is refused and fails its messages back
 * to the queue) and the event is moved to this batch (a conditional update
 * of `c#<hash>` from X to this batch) and counted here, from the marks its
 * recording kept (so a recount adds exactly what the first count would
 * have). An event recorded by the older code (in `seen`, no `c#`) was
 * counted in its own transaction. So each event is counted once: by the
 * one batch that is both named on its recipient and `counted`.
 *
 * What an event counts is decided as it is recorded, from what its
 * recipient says: the firsts (unique opens and clicks), who opened or
 * clicked (`statistics/engagement.ts`, `click-bursts.ts`: the delivery's
 * time is the recipient's `deliveredAt`, read with the rest), and the
 * recipient's mailbox provider (the first event's, kept: every event of a
 * recipient counts for the same provider).
 */
import { createHash, randomBytes } from 'node:crypto';
import type * as v from 'valibot';
import { ifMissing } from '../../db/expressions.ts';
import type { ItemOf } from '../../db/items.ts';
import type { Key } from '../../db/keys.ts';
import type { MailEventRecord, MailEventTally } from '../../delivery/ports.ts';
import { ConflictError } from '../../errors.ts';
import { type Retryable, retryOnConflict } from '../../retry.ts';
import {
  addDeltas,
  type CounterDeltas,
  countsOf,
  type EventMarks,
  flagsToMarks,
  isCounted,
  type MailboxProvider,
  marksToFlags,
  NO_MARKS,
} from '../../statistics/counters.ts';
import { type Judged, judgeEvent } from '../../statistics/event-marks.ts';
import type { Entity } from './dynamo-entity.ts';
import {
  type CampaignBatchItem,
  type CampaignRecipientItem,
  linkIdOf,
  type recipientStateOf,
  shardOf,
} from './dynamo-stats-items.ts';
import {
  type DynamoTable,
  epochSeconds,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

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

/**
 * Most links one commit's transaction moves (TransactWriteItems: 100, less
 * the batch's fate and the two shards).
 */
const LINKS_PER_COMMIT = 96;

/** A marker's attribute, `c#<hash>` of its event. */
type Marker = `c#${string}`;

/** The attributes of a recipient, its markers named too. */
export type RecipientAttributes = v.InferInput<
  typeof CampaignRecipientItem.schema
> & { [marker: Marker]: string };

/** A recipient's item as the events write it. */
export type RecipientEntity = Entity<
  RecipientAttributes,
  ItemOf<typeof CampaignRecipientItem>
>;

/** What a recipient says so far, and the marker of the event asked about. */
type RecipientState = ItemOf<ReturnType<typeof recipientStateOf>> & {
  /** `c#<hash>` of the event asked about: its batch and marks. */
  marker?: string;
};

/** Nothing counted yet: what an event assumes until it reads otherwise. */
const NOTHING_SEEN: RecipientState = {
  seen: new Set(),
  links: new Set(),
  clicks: [],
};

/** The recipient's attribute of when each kind of event first happened. */
const FIRST_AT = {
  Delivery: 'deliveredAt',
  Bounce: 'bouncedAt',
  Complaint: 'complainedAt',
  Reject: 'rejectedAt',
  Open: 'openedAt',
  Click: 'clickedAt',
} as const;

/**
 * Where a subject's statistics live, and how its items are written: the
 * campaign statistics and the sequence steps' each give one.
 */
export interface TallySubject {
  /** What the conflicts' messages name. */
  name: string;
  /** The key of the recipient an event is recorded on. */
  recipientKey(event: MailEventRecord): Promise<Key>;
  recipients: RecipientEntity;
  recipientState: ReturnType<typeof recipientStateOf>;
  batchKey(batch: string): Key;
  batches: Entity<
    v.InferInput<typeof CampaignBatchItem.schema>,
    ItemOf<typeof CampaignBatchItem>
  >;
  /** Adds counts to one of the subject's shards. */
  shardTx(shard: number, add: CounterDeltas): TransactItem;
  /** Adds counts to one of its organization's shards of a month. */
  organizationTx(
    month: string,
    shard: number,
    add: CounterDeltas,
  ): TransactItem;
  /** Adds clicks to one of its links. */
  linkTx(
    linkId: string,
    clicks: { url: string; total: number; unique: number },
  ): TransactItem;
}

/** `chars` characters of a text's SHA-256 (base64url). */
const hash = (text: string, chars: number): string =>
  createHash('sha256').update(text).digest('base64url').slice(0, chars);

/**
 * A batch's id: when it started (epoch ms, base 36) and 12 random hex
 * digits, so a redelivery can tell a batch that may still be running.
 */
const newBatchId = (now: Date): string =>
  `${now.getTime().toString(36)}-${randomBytes(6).toString('hex')}`;

/** When a batch started, from its id (0 if unreadable: long ago). */
const startOf = (batch: string): number =>
  Number.parseInt(batch.split('-')[0] ?? '', 36) || 0;

/** The attribute naming the batch that counts an event. */
const countedBy = (seen: string): Marker => `c#${seen}`;

/** `c#<hash>`'s value: the batch, then the marks as letters. */
const markerOf = (batch: string, marks: EventMarks): string =>
  `${batch}.${marksToFlags(marks)}`;

const parseMarker = (marker: string): { batch: string; marks: EventMarks } => {
  const dot = marker.indexOf('.');
  return dot < 0
    ? { batch: marker, marks: NO_MARKS }
    : {
        batch: marker.slice(0, dot),
        marks: flagsToMarks(marker.slice(dot + 1)),
      };
};

/** What one part of a tally adds, by counter and by link. */
interface Counts {
  id: string;
  counters: CounterDeltas;
  links: Map<string, { url: string; total: number; unique: number }>;
  events: number;
}

/** An event as a tally records it. */
interface Recorded {
  event: MailEventRecord;
  seen: string;
  link: { id: string; url: string } | undefined;
}

/** The month (UTC) of an instant: `2026-11`. */
const monthOf = (now: Date): string => now.toISOString().slice(0, 7);

/** A tally of one subject's events on DynamoDB (see the file's header). */
export class DynamoStatsTally implements MailEventTally {
  /** Parts, each committed in one transaction (at most 96 links each). */
  private readonly parts: Counts[] = [];
  /**
   * The event being recorded on each recipient: the events of one
   * recipient in the batch (a scanner's clicks) wait for one another
   * rather than race for its item.
   */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly table: DynamoTable,
    private readonly subject: TallySubject,
    private readonly now: Date,
  ) {}

  async record(event: MailEventRecord, link?: string): Promise<boolean> {
    const recipient = await this.subject.recipientKey(event);
    const id = `${recipient.PK}/${recipient.SK}`;
    const before = this.busy.get(id) ?? Promise.resolve();
    const mine = before
      .catch(() => undefined)
      .then(() => this.recordOne(recipient, event, link));
    this.busy.set(id, mine);
    try {
      return await mine;
    } finally {
      if (this.busy.get(id) === mine) this.busy.delete(id);
    }
  }

  async commit(): Promise<void> {
    for (const part of this.parts) {
      if (part.events > 0) await this.commitPart(part);
    }
  }

  private recordOne(
    recipient: Key,
    event: MailEventRecord,
    link: string | undefined,
  ): Promise<boolean> {
    const url = event.type === 'Click' ? link : undefined;
    // Two clicks of different links, or two opens by different clients,
    // at the same instant are two events (a copy carries the same of all).
    const engaged = event.type === 'Open' || event.type === 'Click';
    const seen = hash(
      [
        event.messageId,
        event.type,
        event.recipient,
        event.at,
        ...(url === undefined ? [] : [url]),
        ...(engaged ? [event.userAgent ?? '', event.ipAddress ?? ''] : []),
      ].join('#'),
      12,
    );
    const recorded: Recorded = {
      event,
      seen,
      link: url === undefined ? undefined : { id: linkIdOf(url), url },
    };
    const counted = isCounted(event.type);
    // Only opens and clicks have firsts to know; others assume nothing.
    const knowState = event.type === 'Open' || event.type === 'Click';
    return retryOnConflict(async (retryable, attempt) => {
      const state =
        knowState || attempt > 1
          ? await this.recipientState(recipient, seen)
          : NOTHING_SEEN;
      if (state.seen.has(seen)) {
        return counted
          ? this.recount(recipient, recorded, state, retryable)
          : false;
      }
      const decided = judgeEvent(
        {
          ...event,
          ...(recorded.link ? { linkId: recorded.link.id } : {}),
        },
        state,
      );
      const part = counted ? this.partFor(recorded) : undefined;
      await this.recordOn(recipient, recorded, state, decided, part?.id).catch(
        retryable,
      );
      if (part) this.add(part, recorded, decided.marks, decided.provider);
      return true;
    });
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
    const { batch, marks } = parseMarker(state.marker);
    if (this.parts.some((part) => part.id === batch)) return false;
    if ((await this.settle(batch)) === 'counted') return false;
    // Voided: by this redelivery, or another one; the event is free.
    const part = this.partFor(recorded);
    const marker = countedBy(recorded.seen);
    const theirs = state.marker;
    await this.subject.recipients
      .update(
        recipient,
        { set: { [marker]: markerOf(part.id, marks) } },
        {
          if: (w) => w.eq(marker, theirs),
          // Another batch took it over first: read again, and see.
          otherwise: (cause) =>
            new ConflictError(
              'write.contended',
              `The event of recipient ${recorded.event.contactId} of ${this.subject.name} was taken over meanwhile`,
              { cause },
            ),
          entityType: 'keep',
        },
      )
      .catch(retryable);
    // Its recipient's provider, as its recording found it.
    this.add(part, recorded, marks, state.provider);
    return true;
  }

  /**
   * The fate of a batch, settled: `counted` if it committed; otherwise it
   * is made `void` now (put if absent: its commit can no longer pass).
   */
  private async settle(batch: string): Promise<'counted' | 'void'> {
    const key = this.subject.batchKey(batch);
    const found = await this.subject.batches.get(key, { consistent: true });
    if (found) return found.state;
    if (startOf(batch) > this.now.getTime() - LIVE_BATCH_MS) {
      throw new ConflictError(
        'write.contended',
        `An event of ${this.subject.name} is being counted by a batch that may still be running; its message comes again`,
      );
    }
    try {
      await this.subject.batches.put(
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

  private add(
    part: Counts,
    { event, link }: Recorded,
    marks: EventMarks,
    provider: MailboxProvider | undefined,
  ): void {
    addDeltas(part.counters, countsOf(event, marks, provider));
    if (link) {
      const clicks = part.links.get(link.id) ?? {
        url: link.url,
        total: 0,
        unique: 0,
      };
      clicks.total++;
      if (marks.link) clicks.unique++;
      part.links.set(link.id, clicks);
    }
    part.events++;
  }

  /**
   * One transaction: the batch counted, its counts on a shard of the
   * subject and of the organization's month, and its links'.
   */
  private async commitPart(part: Counts): Promise<void> {
    const batchKey = this.subject.batchKey(part.id);
    const counters: CounterDeltas = Object.fromEntries(
      Object.entries(part.counters).filter(([, n]) => n !== 0),
    );
    const links = [...part.links].filter(([, clicks]) => clicks.total > 0);
    const shard = shardOf(part.id);
    try {
      await transactWrite(this.table, [
        this.subject.batches.putTx(
          batchKey,
          { state: 'counted' },
          { if: (w) => w.missing(), housekeeping: this.batchExpiry() },
        ),
        ...(Object.keys(counters).length > 0
          ? [
              this.subject.shardTx(shard, counters),
              this.subject.organizationTx(monthOf(this.now), shard, counters),
            ]
          : []),
        ...links.map(([linkId, clicks]) => this.subject.linkTx(linkId, clicks)),
      ]);
    } catch (error) {
      if (!failedConditions(error)?.includes(0)) throw error;
      // Its fate was settled meanwhile: by this very commit (a retry after
      // a lost answer), or voided by a redelivery that took its events.
      const found = await this.subject.batches.get(batchKey, {
        consistent: true,
      });
      if (found?.state === 'counted') return;
      throw new ConflictError(
        'write.contended',
        `A batch of events of ${this.subject.name} was taken over by a redelivery before it was counted; its messages come again`,
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
    const found = await this.subject.recipients.project(
      key,
      [
        'seen',
        'links',
        'openedAt',
        'clickedAt',
        'deliveredAt',
        'humanOpenedAt',
        'machineOpenedAt',
        'clicks',
        'humanClicks',
        'scannerClicks',
        'provider',
        marker,
      ],
      this.subject.recipientState,
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
   * it and its marks, for a counted type), the message id if none yet, the
   * first instant of its kind, its provider, the clicked link, its clicks;
   * on condition that the event is new, each first is one, and its clicks
   * and provider are still as read.
   */
  private recordOn(
    key: Key,
    { event, seen, link }: Recorded,
    state: RecipientState,
    { marks, provider, clicks }: Judged,
    batch: string | undefined,
  ): Promise<undefined> {
    const first = FIRST_AT[event.type as keyof typeof FIRST_AT];
    const open = event.type === 'Open';
    return this.subject.recipients.update(
      key,
      {
        set: {
          messageId: ifMissing(event.messageId),
          contactId: event.contactId,
          provider: ifMissing(provider),
          ...(first ? { [first]: ifMissing(event.at) } : {}),
          ...(open && marks.firstHuman ? { humanOpenedAt: event.at } : {}),
          ...(open && marks.firstMachine ? { machineOpenedAt: event.at } : {}),
          ...(clicks
            ? {
                clicks: [...clicks.entries],
                humanClicks: clicks.human,
                scannerClicks: clicks.scanner,
              }
            : {}),
          ...(batch ? { [countedBy(seen)]: markerOf(batch, marks) } : {}),
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
            marks.open && w.missing('openedAt'),
            marks.click && w.missing('clickedAt'),
            marks.link && link && w.not(w.contains('links', link.id)),
            open && marks.firstHuman && w.missing('humanOpenedAt'),
            open && marks.firstMachine && w.missing('machineOpenedAt'),
            clicks &&
              (state.humanClicks === undefined
                ? w.missing('humanClicks')
                : w.eq('humanClicks', state.humanClicks)),
            clicks &&
              (state.scannerClicks === undefined
                ? w.missing('scannerClicks')
                : w.eq('scannerClicks', state.scannerClicks)),
            state.provider === undefined &&
              w.or(w.missing('provider'), w.eq('provider', provider)),
          ),
        // The recipient changed since it was read (or never was): a
        // duplicate, a first that is not one, a click or a provider
        // recorded meanwhile. Read it, and write again.
        otherwise: (cause) =>
          new ConflictError(
            'write.contended',
            `The recipient ${event.contactId} of ${this.subject.name} changed while its event was recorded`,
            { cause },
          ),
        // The sender's claim typed it; an event before it types it too.
        entityType: 'ifMissing',
      },
    );
  }
}
