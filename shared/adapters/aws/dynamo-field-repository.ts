/**
 * Driven adapter: custom fields in their organization's partition, each
 * key reserved by an item of its own (kept, retired, when the field is
 * deleted), counted (and capped) by their collection's counter
 * (`FIELD$count`).
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
  type DynamoTable,
  onFailedCondition,
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
 * of another type) may take it.
 */
const FieldKeyItem = itemSchema('FieldKey', {
  fieldId: v.string(),
  retired: v.optional(v.literal(true)),
});

const notFound = (fieldId: string) => (cause: unknown) =>
  new NotFoundError('field.notFound', `No field ${fieldId}`, { cause });

/** Fields, their key reservations and their counter. */
export class DynamoFieldRepository implements FieldRepository {
  private readonly fields;
  private readonly reservations;

  constructor(private readonly table: DynamoTable) {
    this.fields = entity(table, FieldItem);
    this.reservations = entity(table, FieldKeyItem);
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

  async delete(orgId: string, field: Field): Promise<void> {
    await transactWrite(this.table, [
      this.fields.deleteTx(keys.field(orgId, field.id), {
        if: (w) => w.exists(),
        otherwise: notFound(field.id),
      }),
      // Kept, retired: values under the key may remain on contacts.
      this.reservations.updateTx(keys.fieldKey(orgId, field.key), {
        set: { retired: true },
      }),
      moveCollectionCounter(this.table, keys.fieldsOfOrganization(orgId), -1),
    ]);
  }
}
