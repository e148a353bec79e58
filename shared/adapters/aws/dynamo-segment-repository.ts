/**
 * Driven adapter: segments in their organization's partition, counted on
 * the organization item; the series that use a segment kept on it as a map
 * (`usedBy`, series id → series name), written by the series' own
 * transactions through `useSegment` and `releaseSegment`. A segment's own
 * writes hold the custom fields its conditions name (`holdField`,
 * `releaseField` on each field key's reservation) in the same transaction,
 * so that a field is never deleted while a segment names it.
 */

import * as v from 'valibot';
import type { Contact } from '../../audience/model.ts';
import { whereOf } from '../../db/expressions.ts';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import { NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { fieldGone, fieldKeysOf } from '../../segments/field-conditions.ts';
import {
  FIELD_OPERATORS,
  SEGMENT_FIELDS,
  SEGMENT_MATCHES,
  SEGMENT_OPERATORS,
  type Segment,
  type SegmentCondition,
} from '../../segments/model.ts';
import type { SegmentRepository } from '../../segments/ports.ts';
import { FIELD_REF } from '../../segments/segment.schema.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { contactFromItem } from './dynamo-contact-repository.ts';
import { entity } from './dynamo-entity.ts';
import { holdField, releaseField } from './dynamo-field-repository.ts';
import { ListItem } from './dynamo-list-repository.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  queryOnce,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

// Stored conditions were checked on the way in; read them back loosely,
// so that a rule tightened later never makes an old segment unreadable.
const StoredCondition = v.object({
  field: v.union([
    v.picklist(SEGMENT_FIELDS),
    v.pipe(v.string(), v.regex(FIELD_REF)),
  ]),
  operator: v.picklist([
    ...new Set([
      ...Object.values(SEGMENT_OPERATORS).flat(),
      ...FIELD_OPERATORS,
    ]),
  ] as string[]),
  value: v.optional(v.union([v.string(), v.number(), v.boolean()])),
});

const SegmentItem = itemSchema('Segment', {
  id: v.string(),
  name: v.string(),
  listId: v.string(),
  match: v.picklist(SEGMENT_MATCHES),
  conditions: v.array(StoredCondition),
  createdAt: v.string(),
  updatedAt: v.string(),
  usedBy: v.optional(v.record(v.string(), v.string()), {}),
});

const segmentsOf = (table: DynamoTable) => entity(table, SegmentItem);

const fromItem = ({
  conditions,
  ...segment
}: ItemOf<typeof SegmentItem>): Segment => ({
  ...segment,
  conditions: conditions as SegmentCondition[],
});

/** A series taking a segment: who, and over which list. */
export interface SegmentUse {
  orgId: string;
  segmentId: string;
  seriesId: string;
  /** Shown in the refusal of the segment's deletion. */
  seriesName: string;
  /** The list the series targets: the segment must filter that list. */
  listId: string;
}

/**
 * The TransactWriteItems entry a series write adds to its own transaction
 * when it takes a segment (or is renamed: the entry writes the name again):
 * `usedBy[seriesId] = seriesName`, on the condition that the segment exists
 * and filters the series' list. When that condition fails the transaction
 * is cancelled: explain it with `requireSegmentOfList` (404
 * `segment.notFound` or 400 `segment.listMismatch`).
 */
export const useSegment = (table: DynamoTable, use: SegmentUse): TransactItem =>
  segmentsOf(table).updateTx(
    keys.segment(use.orgId, use.segmentId),
    { set: { [`usedBy.${use.seriesId}`]: use.seriesName } },
    { if: (w) => w.and(w.exists(), w.eq('listId', use.listId)) },
  );

/**
 * The TransactWriteItems entry a series write adds to its own transaction
 * when it lets a segment go (another segment, none, or the series
 * deleted): removes `usedBy[seriesId]`; idempotent. Conditional on the
 * segment's existence only so that no write ever creates a stub item: a
 * segment in use cannot be deleted, so a series releasing a segment it
 * took always finds it.
 */
export const releaseSegment = (
  table: DynamoTable,
  release: Pick<SegmentUse, 'orgId' | 'segmentId' | 'seriesId'>,
): TransactItem =>
  segmentsOf(table).updateTx(
    keys.segment(release.orgId, release.segmentId),
    { remove: [`usedBy.${release.seriesId}`] },
    { if: (w) => w.exists() },
  );

/** Segments, their counter and the walk over a list's contacts. */
export class DynamoSegmentRepository implements SegmentRepository {
  private readonly segments;
  private readonly lists;

  constructor(private readonly table: DynamoTable) {
    this.segments = segmentsOf(table);
    this.lists = entity(table, ListItem);
  }

  /** Holds each field newly named, checked to be the field of `fieldIds`. */
  private holds(
    orgId: string,
    segment: Segment,
    fieldKeys: readonly string[],
    fieldIds: ReadonlyMap<string, string>,
  ): TransactItem[] {
    return fieldKeys.map((key) => {
      const fieldId = fieldIds.get(key);
      if (!fieldId) throw new Error(`The field ${key} was not checked`);
      return holdField(
        this.table,
        { orgId, key, segmentId: segment.id, fieldId },
        (cause) => fieldGone(segment.conditions, key, cause),
      );
    });
  }

  /** Releases each field no longer named. */
  private releases(
    orgId: string,
    segmentId: string,
    fieldKeys: readonly string[],
  ): TransactItem[] {
    return fieldKeys.map((key) =>
      releaseField(this.table, { orgId, key, segmentId }),
    );
  }

  async create(
    orgId: string,
    segment: Segment,
    fieldIds: ReadonlyMap<string, string>,
  ): Promise<void> {
    await transactWrite(this.table, [
      this.lists.checkTx(keys.list(orgId, segment.listId), (w) => w.exists(), {
        otherwise: (cause) =>
          new NotFoundError('list.notFound', `No list ${segment.listId}`, {
            cause,
          }),
      }),
      // `usedBy` starts as an empty map: `useSegment` sets its keys.
      this.segments.putTx(keys.segment(orgId, segment.id), segment, {
        if: (w) => w.missing(),
      }),
      moveCollectionCounter(this.table, keys.segmentsOfOrganization(orgId), 1),
      ...this.holds(orgId, segment, fieldKeysOf(segment.conditions), fieldIds),
    ]);
  }

  async get(orgId: string, segmentId: string): Promise<Segment | undefined> {
    const found = await this.segments.get(keys.segment(orgId, segmentId), {
      consistent: true,
    });
    return found && fromItem(found);
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Segment>> {
    const page = await pageOfCollection(
      this.table,
      keys.segmentsOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => fromItem(this.segments.parse(item))),
      total: page.total,
    };
  }

  async update(
    orgId: string,
    before: Segment,
    after: Segment,
    fieldIds: ReadonlyMap<string, string>,
  ): Promise<boolean> {
    // The series write `usedBy` meanwhile: write only what the API changes,
    // on the version read, whose conditions say which fields are held.
    const { name, match, conditions, updatedAt } = after;
    const key = keys.segment(orgId, after.id);
    const write = { set: { name, match, conditions, updatedAt } };
    const asRead = { if: whereOf<Segment>().eq('updatedAt', before.updatedAt) };
    const held = fieldKeysOf(before.conditions);
    const named = fieldKeysOf(after.conditions);
    const taken = named.filter((k) => !held.includes(k));
    const dropped = held.filter((k) => !named.includes(k));
    try {
      if (!taken.length && !dropped.length) {
        await this.segments.update(key, write, asRead);
      } else {
        await transactWrite(this.table, [
          this.segments.updateTx(key, write, asRead),
          ...this.holds(orgId, after, taken, fieldIds),
          ...this.releases(orgId, after.id, dropped),
        ]);
      }
      return true;
    } catch (error) {
      if (isConditionFailure(error) || failedConditions(error)?.includes(0)) {
        return false;
      }
      throw error;
    }
  }

  async delete(orgId: string, segment: Segment): Promise<boolean> {
    try {
      await transactWrite(this.table, [
        // As read (its conditions say which fields to release), and used
        // by no series.
        this.segments.deleteTx(keys.segment(orgId, segment.id), {
          if: (w) =>
            w.and(
              w.eq('updatedAt', segment.updatedAt),
              w.or(w.missing('usedBy'), w.size('usedBy', '=', 0)),
            ),
        }),
        moveCollectionCounter(
          this.table,
          keys.segmentsOfOrganization(orgId),
          -1,
        ),
        ...this.releases(orgId, segment.id, fieldKeysOf(segment.conditions)),
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }

  async sampleOfList(
    orgId: string,
    listId: string,
    limit: number,
  ): Promise<{ contacts: Contact[]; whole: boolean }> {
    const query = keys.contactsOfList(orgId, listId);
    const contacts: Contact[] = [];
    let start: Key | undefined;
    do {
      const found = await queryOnce(this.table, query, {
        limit: limit - contacts.length,
        ...(start ? { startKey: start } : {}),
      });
      contacts.push(...found.items.map(contactFromItem));
      start = found.lastKey;
    } while (start && contacts.length < limit);
    return { contacts, whole: !start };
  }
}
