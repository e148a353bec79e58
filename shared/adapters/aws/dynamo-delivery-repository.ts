/**
 * Driven adapter: delivery events of mail other than campaigns'
 * (confirmations, test sends…), each recorded once under its message (a
 * conditional put, with a TTL) in the same transaction as the
 * organization's counter of its type (campaign mail is counted by the
 * campaign statistics alone); and the organization's suppression list.
 *
 * Suppressions live in a partition of their own per organization, keyed
 * by address key (the keyed hash of `shared/delivery/address-key.ts`), so a
 * lookup reads one key per address and an erased person's item can lose
 * the address. Each is written in one transaction with its entry of the
 * time-ordered log (another partition, newest first, counted) that the list
 * reads; a lift removes both and records the lift there.
 *
 * Versions before the address keys stored suppressions by address. Until
 * an organization is rekeyed (`rekey`, the operator's migration, marks it
 * when done), its lookups read both keys; once the marker is seen, a
 * container reads the new key only.
 */
import * as v from 'valibot';
import { SUPPRESSION_REASONS } from '../../audience/ports.ts';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { type Key, keys, type QueryKey } from '../../db/keys.ts';
import {
  type AddressKeySecret,
  addressKeyOf,
} from '../../delivery/address-key.ts';
import type {
  DeliveryEventRecord,
  DeliveryRepository,
  LogPage,
  LogPageRequest,
  Suppression,
  SuppressionLift,
} from '../../delivery/ports.ts';
import {
  SES_EVENT_TYPES,
  type SesEventType,
} from '../../delivery/ses-event.ts';
import { ConflictError, ValidationError } from '../../errors.ts';
import type {
  RekeyReport,
  SuppressionRekeyer,
} from '../../organizations/ports.ts';
import type { ReadOptions } from '../../ports.ts';
import { CONFLICT_ATTEMPTS } from '../../retry.ts';
import {
  collectionCount,
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { type Entity, entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  deleteKeys,
  epochSeconds,
  failedConditions,
  queryOnce,
  queryPages,
  transactWrite,
} from './dynamo-table.ts';
import { SuppressionsRekeyedItem } from './suppressions-rekeyed.ts';

/** How long an event is kept: a year and a month, for yearly reports. */
export const DELIVERY_EVENT_TTL_DAYS = 400;

/** What a suppression, its log entry and its lift say about it. */
const suppressionEntries = {
  /** Absent once the person was erased. */
  email: v.optional(v.string()),
  reason: v.picklist(SUPPRESSION_REASONS),
  source: v.optional(v.picklist(['import', 'api'])),
};

/** A suppressed address (by address key; by address before the rekey). */
const SuppressionItem = itemSchema('Suppression', {
  ...suppressionEntries,
  at: v.string(),
  messageId: v.optional(v.string()),
});

/** A suppression's entry in the time-ordered log. */
const SuppressionLogItem = itemSchema('SuppressionLog', {
  ...suppressionEntries,
  addressKey: v.string(),
  at: v.string(),
  messageId: v.optional(v.string()),
});

/** The record of a lift. */
const SuppressionLiftItem = itemSchema('SuppressionLift', {
  ...suppressionEntries,
  addressKey: v.string(),
  suppressedAt: v.string(),
  liftedAt: v.string(),
  liftedBy: v.string(),
  forced: v.boolean(),
});

/** Suppressions per transaction: two items each, and the log's counter. */
const SUPPRESSIONS_PER_TRANSACTION = 49;

/** Legacy suppressions moved at once by the rekey. */
const PARALLEL_MOVES = 16;

/** The attributes of a suppression to store (no address in the key). */
const stored = (suppression: Suppression) => ({
  email: suppression.email,
  reason: suppression.reason,
  at: suppression.at,
  ...(suppression.messageId ? { messageId: suppression.messageId } : {}),
  ...(suppression.source ? { source: suppression.source } : {}),
});

/** A lift record as the port gives it. */
const liftOf = ({
  addressKey: _,
  ...lift
}: ItemOf<typeof SuppressionLiftItem>): SuppressionLift => lift;

/** The items of `all`, `size` at a time. */
const chunksOf = <T>(all: readonly T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let i = 0; i < all.length; i += size) {
    chunks.push(all.slice(i, i + size));
  }
  return chunks;
};

const DeliveryEventItem = itemSchema('DeliveryEvent', {
  messageId: v.string(),
  type: v.picklist(SES_EVENT_TYPES),
  recipient: v.string(),
  at: v.string(),
  kind: v.optional(v.string()),
  contactId: v.optional(v.string()),
  campaignId: v.optional(v.string()),
  bounceType: v.optional(v.string()),
});

/** A counter attribute per event type: `Rendering Failure` → `renderingFailure`. */
const counterOf = (type: SesEventType): string =>
  `${type.charAt(0).toLowerCase()}${type.slice(1).replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase())}Count`;

/** The organization's delivery counters, one per event type. */
const DeliveryStatsItem = itemSchema(
  'DeliveryStats',
  Object.fromEntries(SES_EVENT_TYPES.map((type) => [counterOf(type), Counter])),
);

/** Delivery events and suppressions on DynamoDB. */
export class DynamoDeliveryRepository
  implements DeliveryRepository, SuppressionRekeyer
{
  private readonly events;
  private readonly counters;
  private readonly suppressed;
  private readonly log;
  private readonly lifts;
  private readonly rekeyedMarker;
  /**
   * Organizations seen rekeyed: the marker is never removed, so once read
   * it holds for the container's life, and their lookups read one key.
   */
  private readonly rekeyed = new Set<string>();

  constructor(
    private readonly table: DynamoTable,
    private readonly addressKeySecret: AddressKeySecret,
  ) {
    this.events = entity(table, DeliveryEventItem);
    this.counters = entity(table, DeliveryStatsItem);
    this.suppressed = entity(table, SuppressionItem);
    this.log = entity(table, SuppressionLogItem);
    this.lifts = entity(table, SuppressionLiftItem);
    this.rekeyedMarker = entity(table, SuppressionsRekeyedItem);
  }

  async recordEvent(
    orgId: string,
    event: DeliveryEventRecord,
  ): Promise<boolean> {
    const key = keys.deliveryEvent(
      orgId,
      event.messageId,
      `${event.type}#${event.recipient}#${event.at}`,
    );
    const expires = new Date(
      Date.parse(event.at) + DELIVERY_EVENT_TTL_DAYS * 86_400_000,
    );
    try {
      await transactWrite(this.table, [
        this.events.putTx(key, event, {
          if: (w) => w.missing(),
          housekeeping: { ttl: epochSeconds(expires) },
        }),
        // Counted in the organization's counter of its type.
        this.counters.updateTx(keys.deliveryStats(orgId), {
          add: { [counterOf(event.type)]: 1 },
        }),
      ]);
      return true;
    } catch (error) {
      // Recorded before: a duplicate delivery of the same event.
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }

  /** The address key of each address. */
  private async addressKeys(
    emails: readonly string[],
  ): Promise<Map<string, string>> {
    const secret = await this.addressKeySecret();
    return new Map(emails.map((email) => [email, addressKeyOf(secret, email)]));
  }

  async suppressions(
    orgId: string,
    emails: readonly string[],
    options: ReadOptions = {},
  ): Promise<Map<string, Suppression>> {
    const unique = [...new Set(emails)];
    if (unique.length === 0) return new Map();
    const addressKeys = await this.addressKeys(unique);
    // Each key read, and the address it stands for.
    const wanted = new Map<string, { key: Key; email: string }>();
    const want = (key: Key, email: string) =>
      wanted.set(key.SK, { key, email });
    for (const [email, addressKey] of addressKeys) {
      want(keys.suppression(orgId, addressKey), email);
    }
    const marker = keys.suppressionsRekeyed(orgId);
    const legacy = new Set<string>();
    if (!this.rekeyed.has(orgId)) {
      // Not known to be rekeyed: the old keys and the marker, same request.
      for (const email of unique) {
        const key = keys.legacySuppression(orgId, email);
        want(key, email);
        legacy.add(key.SK);
      }
      want(marker, '');
    }
    const items = await batchGet(
      this.table,
      [...wanted.values()].map(({ key }) => key),
      options,
    );
    const found = new Map<string, Suppression>();
    const old = new Map<string, Suppression>();
    for (const item of items) {
      const sk = String(item.SK);
      if (sk === marker.SK) {
        this.rekeyed.add(orgId);
        continue;
      }
      const email = wanted.get(sk)?.email;
      if (!email) continue;
      const { email: kept, ...suppression } = this.suppressed.parse(item);
      (legacy.has(sk) ? old : found).set(email, {
        email,
        ...suppression,
        // Erased: the item lost its address.
        ...(kept === undefined ? { erased: true as const } : {}),
      });
    }
    for (const [email, suppression] of old) {
      if (!found.has(email)) found.set(email, suppression);
    }
    return found;
  }

  /** The writes of one new suppression: the item (if absent), its entry. */
  private suppressionWrites(
    orgId: string,
    suppression: Suppression,
    addressKey: string,
  ) {
    return [
      this.suppressed.putTx(
        keys.suppression(orgId, addressKey),
        stored(suppression),
        // The first reason stays: suppressed is suppressed.
        { if: (w) => w.missing() },
      ),
      this.log.putTx(
        keys.suppressionLogEntry(orgId, suppression.at, addressKey),
        { ...stored(suppression), addressKey },
      ),
    ];
  }

  async suppress(
    orgId: string,
    suppressions: readonly Suppression[],
  ): Promise<{ added: string[]; stored: Map<string, Suppression> }> {
    const first = new Map<string, Suppression>();
    for (const suppression of suppressions) {
      if (!first.has(suppression.email)) {
        first.set(suppression.email, suppression);
      }
    }
    const added: string[] = [];
    const stored = new Map<string, Suppression>();
    let pending = [...first.values()];
    for (let round = 1; pending.length; round++) {
      if (round > CONFLICT_ATTEMPTS) {
        throw new ConflictError(
          'write.contended',
          'The same addresses kept being suppressed by other requests; retry',
        );
      }
      // Those suppressed already keep their reason (old keys read too).
      const known = await this.suppressions(
        orgId,
        pending.map((s) => s.email),
      );
      for (const [email, suppression] of known) stored.set(email, suppression);
      const missing = pending.filter((s) => !known.has(s.email));
      const addressKeys = await this.addressKeys(missing.map((s) => s.email));
      const raced: Suppression[] = [];
      for (const chunk of chunksOf(missing, SUPPRESSIONS_PER_TRANSACTION)) {
        try {
          await transactWrite(this.table, [
            ...chunk.flatMap((s) =>
              this.suppressionWrites(orgId, s, addressKeys.get(s.email) ?? ''),
            ),
            moveCollectionCounter(
              this.table,
              keys.suppressionLog(orgId),
              chunk.length,
            ),
          ]);
          for (const s of chunk) {
            added.push(s.email);
            stored.set(s.email, s);
          }
        } catch (error) {
          // One of them was suppressed meanwhile: read again, write the rest.
          if (!failedConditions(error)?.length) throw error;
          raced.push(...chunk);
        }
      }
      pending = raced;
    }
    return { added, stored };
  }

  suppressionLog(orgId: string, request: LogPageRequest) {
    return this.pageOf(this.log, keys.suppressionLog(orgId), request);
  }

  async liftLog(
    orgId: string,
    request: LogPageRequest,
  ): Promise<LogPage<SuppressionLift>> {
    const page = await this.pageOf(
      this.lifts,
      keys.suppressionLifts(orgId),
      request,
    );
    return { ...page, items: page.items.map(liftOf) };
  }

  /**
   * A page of a counted log, newest first: by number (with its total, one
   * Query), or after a position (its total read beside it).
   */
  private async pageOf<I, O>(
    of: Entity<I, O>,
    collection: QueryKey,
    { page, limit, after }: LogPageRequest,
  ): Promise<LogPage<O>> {
    if (after === undefined) {
      const found = await pageOfCollection(this.table, collection, {
        page,
        limit,
      });
      const last = found.items.at(-1)?.SK;
      return {
        items: found.items.map((item) => of.parse(item)),
        total: found.total,
        ...(typeof last === 'string' ? { last } : {}),
      };
    }
    // A position of this log only: a cursor is the client's to send back.
    if (!after.startsWith(collection.skPrefix)) {
      throw new ValidationError(
        'Invalid request: cursor: is not a cursor this API gave',
        [{ field: 'cursor', message: 'is not a cursor this API gave' }],
      );
    }
    const [total, read] = await Promise.all([
      collectionCount(this.table, collection),
      queryOnce(this.table, collection, {
        descending: true,
        limit,
        startKey: { PK: collection.PK, SK: after },
      }),
    ]);
    const last = read.items.at(-1)?.SK;
    return {
      items: read.items.map((item) => of.parse(item)),
      total,
      ...(typeof last === 'string' ? { last } : {}),
    };
  }

  async lift(
    orgId: string,
    suppression: Suppression,
    lift: { at: string; by: string; forced: boolean },
  ): Promise<SuppressionLift> {
    // Still stored by address (before the rekey): moved first.
    if (!this.rekeyed.has(orgId))
      await this.moveAddress(orgId, suppression.email);
    const [addressKey = ''] = (
      await this.addressKeys([suppression.email])
    ).values();
    const record = {
      // An erased person's address is not written back by its lift, the
      // reason it kept whatever it is.
      ...(suppression.reason === 'erased' || suppression.erased
        ? {}
        : { email: suppression.email }),
      reason: suppression.reason,
      ...(suppression.source ? { source: suppression.source } : {}),
      addressKey,
      suppressedAt: suppression.at,
      liftedAt: lift.at,
      liftedBy: lift.by,
      forced: lift.forced,
    };
    await transactWrite(this.table, [
      this.suppressed.deleteTx(keys.suppression(orgId, addressKey), {
        // The suppression as read: not lifted, changed or made again since.
        if: (w) =>
          w.and(w.eq('reason', suppression.reason), w.eq('at', suppression.at)),
        otherwise: (cause) =>
          new ConflictError(
            'write.contended',
            `The suppression of ${suppression.email} changed while it was lifted; retry`,
            { cause },
          ),
      }),
      this.log.deleteTx(
        keys.suppressionLogEntry(orgId, suppression.at, addressKey),
      ),
      moveCollectionCounter(this.table, keys.suppressionLog(orgId), -1),
      this.lifts.putTx(
        keys.suppressionLift(orgId, lift.at, addressKey),
        record,
      ),
      moveCollectionCounter(this.table, keys.suppressionLifts(orgId), 1),
    ]);
    return liftOf(record);
  }

  async forgetMessages(
    orgId: string,
    messageIds: readonly string[],
  ): Promise<number> {
    let forgotten = 0;
    for (const messageId of new Set(messageIds)) {
      for await (const found of queryPages(
        this.table,
        // Its events, and a sequence step's recipient (its statistics).
        keys.messageItems(orgId, messageId),
        { consistent: true, project: [] },
      )) {
        await deleteKeys(this.table, found as unknown as Key[]);
        forgotten += found.length;
      }
    }
    return forgotten;
  }

  async forgetAddress(
    orgId: string,
    email: string,
    at: string,
  ): Promise<number> {
    // Still stored by address (before the rekey): moved first.
    if (!this.rekeyed.has(orgId)) await this.moveAddress(orgId, email);
    const [addressKey = ''] = (await this.addressKeys([email])).values();
    const key = keys.suppression(orgId, addressKey);
    let written = 0;
    for (let round = 1; ; round++) {
      const found = await this.suppressed.get(key, { consistent: true });
      if (found) {
        if (found.email === undefined) break;
        await this.suppressed.update(
          key,
          { remove: ['email'] },
          {
            if: (w) => w.exists(),
          },
        );
        await this.log.update(
          keys.suppressionLogEntry(orgId, found.at, addressKey),
          { remove: ['email'] },
          { if: (w) => w.exists() },
        );
        written += 2;
        break;
      }
      const erased = { reason: 'erased' as const, at, source: 'api' as const };
      try {
        await transactWrite(this.table, [
          this.suppressed.putTx(key, erased, { if: (w) => w.missing() }),
          this.log.putTx(keys.suppressionLogEntry(orgId, at, addressKey), {
            ...erased,
            addressKey,
          }),
          moveCollectionCounter(this.table, keys.suppressionLog(orgId), 1),
        ]);
        written += 2;
        break;
      } catch (error) {
        // Suppressed meanwhile: that one stays, without the address.
        if (round >= CONFLICT_ATTEMPTS || !failedConditions(error)?.length) {
          throw error;
        }
      }
    }
    // Its lifts, found by their address key among the organization's.
    for await (const page of this.lifts.pages(keys.suppressionLifts(orgId), {
      consistent: true,
    })) {
      for (const lift of page) {
        if (lift.addressKey !== addressKey || lift.email === undefined) {
          continue;
        }
        await this.lifts.update(
          keys.suppressionLift(orgId, lift.liftedAt, addressKey),
          { remove: ['email'] },
          { if: (w) => w.exists() },
        );
        written++;
      }
    }
    return written;
  }

  async rekey(orgId: string, at: string): Promise<RekeyReport> {
    const report = { orgId, moved: 0, dropped: 0 };
    for await (const page of this.suppressed.pages(
      keys.legacySuppressions(orgId),
      { consistent: true },
    )) {
      for (const chunk of chunksOf(page, PARALLEL_MOVES)) {
        const outcomes = await Promise.all(
          chunk.map((item) =>
            item.email
              ? this.move(orgId, { ...item, email: item.email })
              : 'gone',
          ),
        );
        for (const outcome of outcomes) {
          if (outcome === 'moved') report.moved++;
          if (outcome === 'dropped') report.dropped++;
        }
      }
    }
    // None left: lookups may read one key per address from now on.
    await this.rekeyedMarker.put(keys.suppressionsRekeyed(orgId), { at });
    this.rekeyed.add(orgId);
    return report;
  }

  /** Moves the suppression of one address to its address key, if stored by address. */
  private async moveAddress(orgId: string, email: string): Promise<void> {
    const old = await this.suppressed.get(
      keys.legacySuppression(orgId, email),
      { consistent: true },
    );
    if (old) await this.move(orgId, { ...old, email });
  }

  /**
   * Moves one suppression stored by address to its address key, with its
   * log entry and the log's count, in one transaction. `dropped` when the
   * address key holds one already (suppressed again by the version that
   * writes address keys, while an older one still wrote this): that one
   * stays, this one goes. `gone` when another run moved it first.
   */
  private async move(
    orgId: string,
    suppression: Suppression,
  ): Promise<'moved' | 'dropped' | 'gone'> {
    const [addressKey = ''] = (
      await this.addressKeys([suppression.email])
    ).values();
    const old = keys.legacySuppression(orgId, suppression.email);
    try {
      await transactWrite(this.table, [
        ...this.suppressionWrites(orgId, suppression, addressKey),
        moveCollectionCounter(this.table, keys.suppressionLog(orgId), 1),
        this.suppressed.deleteTx(old, { if: (w) => w.exists() }),
      ]);
      return 'moved';
    } catch (error) {
      const failed = failedConditions(error);
      if (!failed?.length) throw error;
      if (failed.includes(3)) return 'gone';
      await this.suppressed.delete(old);
      return 'dropped';
    }
  }
}
