/**
 * Driven adapter: custom fields in their organization's partition, each
 * key reserved by an item of its own (kept, retired, when the field is
 * deleted), counted (and capped) by their collection's counter
 * (`FIELD$count`). The reservation also holds the ids of the segments
 * whose conditions name the key (`segmentIds`), written by the segments'
 * own transactions through `holdField` and `releaseField`: a field held
 * is never deleted.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import {
  ConflictError,
  NotFoundError,
  RuleViolationError,
} from '../../errors.ts';
import { FIELD_TYPES, type Field, MAX_FIELDS } from '../../fields/model.ts';
import type { FieldRepository } from '../../fields/ports.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  type DynamoTable,
  failedConditions,
  onFailedCondition,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const FieldItem = itemSchema('Field', {
  id: v.string(),
  key: v.string(),
  label: v.string(),
  type: v.picklist(FIELD_TYPES),
  options: v.optional(v.array(v.string())),
  defaultValue: v.optional(v.union([v.string(), v.number(), v.boolean()])),
  createdAt: v.string(),
  updatedAt: v.string(),
});

/**
 * The reservation of a field's key. A deleted field leaves it `retired`:
 * contacts may still hold values under the key, so no new field (perhaps
 * of another type) may take it. `segmentIds`: the segments whose
 * conditions name the key (a string set, absent when none: DynamoDB drops
 * a set emptied).
 */
const FieldKeyItem = itemSchema('FieldKey', {
  fieldId: v.string(),
  retired: v.optional(v.literal(true)),
  segmentIds: v.optional(v.set(v.string()), () => new Set<string>()),
});

const reservationsOf = (table: DynamoTable) => entity(table, FieldKeyItem);

/** What a segment using a field shows in the refusal of its deletion. */
const SegmentNameItem = itemSchema('Segment', {
  id: v.string(),
  name: v.string(),
});

/** A segment naming a field, by key, in its conditions. */
export interface FieldHold {
  orgId: string;
  key: string;
  segmentId: string;
}

/**
 * The TransactWriteItems entry a segment write adds to its own
 * transaction for each field key its conditions name (newly): adds the
 * segment to the key's `segmentIds`, on the condition that the key still
 * belongs to the field the conditions were checked against (`fieldId`) and
 * that field was not deleted (not `retired`). When that condition fails,
 * `otherwise` is thrown: the field was deleted meanwhile.
 */
export const holdField = (
  table: DynamoTable,
  hold: FieldHold & { fieldId: string },
  otherwise: (cause: unknown) => Error,
): TransactItem =>
  reservationsOf(table).updateTx(
    keys.fieldKey(hold.orgId, hold.key),
    { add: { segmentIds: new Set([hold.segmentId]) } },
    {
      if: (w) => w.and(w.eq('fieldId', hold.fieldId), w.missing('retired')),
      otherwise,
    },
  );

/**
 * The TransactWriteItems entry a segment write adds to its own transaction
 * for each field key its conditions no longer name (or the segment
 * deleted): removes the segment from the key's `segmentIds`; idempotent.
 * Conditional on the reservation's existence only so that no write ever
 * creates a stub: a held field is never deleted, so its reservation is
 * there.
 */
export const releaseField = (
  table: DynamoTable,
  hold: FieldHold,
): TransactItem =>
  reservationsOf(table).updateTx(
    keys.fieldKey(hold.orgId, hold.key),
    { delete: { segmentIds: new Set([hold.segmentId]) } },
    { if: (w) => w.exists() },
  );

const notFound = (fieldId: string) => (cause: unknown) =>
  new NotFoundError('field.notFound', `No field ${fieldId}`, { cause });

/** Fields, their key reservations and their counter. */
export class DynamoFieldRepository implements FieldRepository {
  private readonly fields;
  private readonly reservations;
  private readonly segmentNames;

  constructor(private readonly table: DynamoTable) {
    this.fields = entity(table, FieldItem);
    this.reservations = reservationsOf(table);
    this.segmentNames = entity(table, SegmentNameItem);
  }

  async create(orgId: string, field: Field): Promise<void> {
    await transactWrite(this.table, [
      this.reservations.putTx(
        keys.fieldKey(orgId, field.key),
        { fieldId: field.id },
        {
          if: (w) => w.missing(),
          otherwise: (cause) =>
            new ConflictError(
              'field.keyTaken',
              `A field with the key "${field.key}" exists, or existed and contacts may still hold its values`,
              { cause },
            ),
        },
      ),
      this.fields.putTx(keys.field(orgId, field.id), field, {
        if: (w) => w.missing(),
      }),
      onFailedCondition(
        moveCollectionCounter(this.table, keys.fieldsOfOrganization(orgId), 1, {
          cap: MAX_FIELDS,
        }),
        (cause) =>
          new RuleViolationError(
            'field.limitReached',
            `An organization has at most ${MAX_FIELDS} fields; delete one first`,
            { cause },
          ),
      ),
    ]);
  }

  get(orgId: string, fieldId: string): Promise<Field | undefined> {
    return this.fields.get(keys.field(orgId, fieldId), { consistent: true });
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Field>> {
    const page = await pageOfCollection(
      this.table,
      keys.fieldsOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => this.fields.parse(item)),
      total: page.total,
    };
  }

  async update(orgId: string, before: Field, after: Field): Promise<void> {
    // Replaced whole, on the version read: a change meanwhile is a 409.
    await this.fields.put(keys.field(orgId, after.id), after, {
      if: (w) => w.eq('updatedAt', before.updatedAt),
      otherwise: (cause) =>
        new ConflictError(
          'field.changed',
          `The field ${before.key} changed while the request ran; retry`,
          { cause },
        ),
    });
  }

  async delete(orgId: string, field: Field): Promise<boolean> {
    try {
      await transactWrite(this.table, [
        this.fields.deleteTx(keys.field(orgId, field.id), {
          if: (w) => w.exists(),
          otherwise: notFound(field.id),
        }),
        // Kept, retired: values under the key may remain on contacts. Only
        // while no segment holds the key: a segment write that holds it
        // meanwhile cancels this one, and one after it finds it retired.
        this.reservations.updateTx(
          keys.fieldKey(orgId, field.key),
          { set: { retired: true } },
          { if: (w) => w.missing('segmentIds') },
        ),
        moveCollectionCounter(this.table, keys.fieldsOfOrganization(orgId), -1),
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.includes(1)) return false;
      throw error;
    }
  }

  async segmentsUsing(
    orgId: string,
    field: Field,
  ): Promise<{ id: string; name: string }[]> {
    const reservation = await this.reservations.get(
      keys.fieldKey(orgId, field.key),
      { consistent: true },
    );
    const ids = [...(reservation?.segmentIds ?? [])];
    if (!ids.length) return [];
    const names = new Map(
      (
        await batchGet(
          this.table,
          ids.map((id) => keys.segment(orgId, id)),
        )
      )
        .map((item) => this.segmentNames.parse(item))
        .map((segment) => [segment.id, segment.name]),
    );
    // A hold always has its segment (they are written together): a
    // missing one would still be named, by id, rather than hidden.
    return ids
      .map((id) => ({ id, name: names.get(id) ?? '(segment not found)' }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }
}
