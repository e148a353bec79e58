/**
 * Driven adapter: the records of Idempotency-Key requests, one item each
 * in a partition of its own (`ORG#<orgId>#IDEMPOTENCY#<record id>`), so a
 * busy organization's records spread over the table's partitions. Every
 * change is one UpdateItem, conditional on the state it moves from: a
 * claim wins once, and a run that lost the record can neither answer nor
 * let go of it. A refused claim returns the item as it was
 * (ReturnValuesOnConditionCheckFailure), so a repeat costs that one
 * request. The item expires (TTL) when the record stops answering.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { attr } from '../../db/table.ts';
import type {
  Claim,
  IdempotencyRecord,
  IdempotencyStore,
} from '../../idempotency/ports.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, isConditionFailure } from './dynamo-table.ts';

const Instant = v.pipe(v.number(), v.integer());

const IdempotencyRecordItem = itemSchema('IdempotencyRecord', {
  state: v.picklist(['running', 'done', 'released']),
  fingerprint: v.string(),
  operation: v.string(),
  startedAt: Instant,
  run: v.pipe(v.number(), v.integer(), v.minValue(1)),
  leaseUntil: v.optional(Instant),
  expiresAt: Instant,
  answer: v.optional(v.instance(Uint8Array)),
});

/** The TTL of a record: the second after it stops answering. */
const ttlOf = (expiresAt: number) => ({
  [attr.ttl]: Math.ceil(expiresAt / 1000),
});

/** Idempotency records on the table. */
export class DynamoIdempotencyStore implements IdempotencyStore {
  private readonly records;

  constructor(table: DynamoTable) {
    this.records = entity(table, IdempotencyRecordItem);
  }

  /** The outcome of a claim: won, or the record its condition saw. */
  private async claim(write: () => Promise<unknown>): Promise<Claim> {
    try {
      await write();
      return { claimed: true };
    } catch (error) {
      const record = isConditionFailure(error)
        ? this.records.failedItem(error)
        : undefined;
      if (!record) throw error;
      return { claimed: false, record };
    }
  }

  start(
    orgId: string,
    recordId: string,
    record: IdempotencyRecord,
    now: number,
  ): Promise<Claim> {
    const { answer: _, ...fresh } = record;
    return this.claim(() =>
      this.records.update(
        keys.idempotencyRecord(orgId, recordId),
        // Over an expired record: a new one, its old answer dropped.
        { set: fresh, remove: ['answer'] },
        {
          if: (w) => w.or(w.missing(), w.le('expiresAt', now)),
          housekeeping: ttlOf(record.expiresAt),
          returningOnFailure: 'old',
        },
      ),
    );
  }

  resume(
    orgId: string,
    recordId: string,
    seen: IdempotencyRecord,
    leaseUntil: number,
    now: number,
  ): Promise<Claim> {
    return this.claim(() =>
      this.records.update(
        keys.idempotencyRecord(orgId, recordId),
        { set: { state: 'running', run: seen.run + 1, leaseUntil } },
        {
          if: (w) =>
            w.and(
              w.eq('run', seen.run),
              w.gt('expiresAt', now),
              w.or(
                w.eq('state', 'released'),
                w.and(w.eq('state', 'running'), w.le('leaseUntil', now)),
              ),
            ),
          returningOnFailure: 'old',
        },
      ),
    );
  }

  async complete(
    orgId: string,
    recordId: string,
    run: number,
    answer: Uint8Array,
  ): Promise<boolean> {
    try {
      await this.records.update(
        keys.idempotencyRecord(orgId, recordId),
        {
          set: { state: 'done', answer: new Uint8Array(answer) },
          remove: ['leaseUntil'],
        },
        { if: (w) => w.and(w.eq('run', run), w.eq('state', 'running')) },
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async release(orgId: string, recordId: string, run: number): Promise<void> {
    try {
      await this.records.update(
        keys.idempotencyRecord(orgId, recordId),
        { set: { state: 'released' }, remove: ['leaseUntil'] },
        { if: (w) => w.and(w.eq('run', run), w.eq('state', 'running')) },
      );
    } catch (error) {
      // Another run holds it now: nothing of this one's to let go.
      if (!isConditionFailure(error)) throw error;
    }
  }
}
