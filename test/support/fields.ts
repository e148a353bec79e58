/**
 * A field store in memory for domain tests that compose mail without a
 * table: it holds the fields given, answers the page read the composer
 * makes, and counts those reads (the composer reads them once per batch,
 * never per recipient).
 */
import type { Field } from '../../shared/fields/model.ts';
import type { FieldRepository } from '../../shared/fields/ports.ts';

/** A field with the attributes a test does not care about filled in. */
export const aField = (
  field: Pick<Field, 'key' | 'type'> & Partial<Field>,
): Field => ({
  id: `field-${field.key}`,
  label: field.key,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...field,
});

/** The store, and how many times its fields were read. */
export const fieldsInMemory = (
  fields: readonly Field[] = [],
): FieldRepository & { reads: () => number } => {
  let reads = 0;
  const refuse = async () => {
    throw new Error('fieldsInMemory: only reads are held');
  };
  return {
    reads: () => reads,
    page: async () => {
      reads += 1;
      return { items: [...fields], total: fields.length };
    },
    get: async (_orgId, fieldId) => fields.find((f) => f.id === fieldId),
    create: refuse,
    update: refuse,
    delete: refuse,
    segmentsUsing: refuse,
  };
};
