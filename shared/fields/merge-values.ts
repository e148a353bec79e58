/**
 * A contact's field values as merge values: what `{{ fields.<key> }}`
 * shows in mail. Each field of the organization shows the contact's value,
 * else the field's default, else nothing (Liquid's `default` filter then
 * applies); a value whose key no field defines any more is never shown.
 * Prepared once per batch from the definitions, then applied per recipient
 * without a read. Agnostic to where fields and contacts are stored.
 */
import type { Field, FieldType, FieldValue } from './model.ts';

/**
 * What a template reads of a field: a number or a boolean as itself (so
 * `{% if fields.vip %}` and `{% if fields.seats > 10 %}` compare values),
 * a text, a date (`YYYY-MM-DD`) or an option's text as a string.
 */
export type MergeValue = string | number | boolean;

/**
 * A number as a template shows it. JavaScript prints a magnitude below
 * 1e-6 with an exponent (`1.5e-7`); such a number is given as its decimal
 * digits instead (`0.00000015`), the shortest digits that read back the
 * same number. Every other number a field holds (integers up to 2^53 - 1
 * included) prints without one, and stays a number.
 */
export const shownNumber = (n: number): number | string => {
  const written = String(n);
  const e = written.indexOf('e');
  if (e === -1) return n;
  const sign = n < 0 ? '-' : '';
  const mantissa = written.slice(sign.length, e);
  const exponent = Number(written.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  // Where the decimal point falls in `digits` once the exponent is applied.
  const at = (point === -1 ? mantissa.length : point) + exponent;
  if (at <= 0) return `${sign}0.${'0'.repeat(-at)}${digits}`;
  if (at >= digits.length) {
    return `${sign}${digits}${'0'.repeat(at - digits.length)}`;
  }
  return `${sign}${digits.slice(0, at)}.${digits.slice(at)}`;
};

/** Whether a stored value is one of this type (what a write checked). */
const fits = (type: FieldType, value: FieldValue): boolean => {
  switch (type) {
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      // An empty text shows the default, as a missing one does.
      return typeof value === 'string' && value !== '';
  }
};

/** A value of a field as a template reads it. */
const shown = (value: FieldValue): MergeValue =>
  typeof value === 'number' ? shownNumber(value) : value;

/** One field as every recipient of a batch shares it. */
interface Entry {
  key: string;
  type: FieldType;
  fallback?: MergeValue;
}

/**
 * The merge values of a contact's fields, from the values it holds: made
 * once from the organization's definitions (`definitionsOf`), then called
 * per recipient.
 */
export type FieldMerge = (
  values: Readonly<Record<string, FieldValue>> | undefined,
) => Record<string, MergeValue>;

/**
 * Prepares the merge values of the organization's fields. Per recipient:
 * for each field, the contact's value if it holds one of the field's type
 * (not an empty text), else the field's default, else none (the key is
 * absent: it renders empty, and `default` applies). Values under keys no
 * field defines (a deleted field's) are ignored.
 */
export const prepareFieldMerge = (definitions: Iterable<Field>): FieldMerge => {
  const entries: Entry[] = [...definitions].map((field) => ({
    key: field.key,
    type: field.type,
    ...(field.defaultValue === undefined
      ? {}
      : { fallback: shown(field.defaultValue) }),
  }));
  return (values) => {
    const merged: Record<string, MergeValue> = {};
    for (const { key, type, fallback } of entries) {
      const value =
        values && Object.hasOwn(values, key) ? values[key] : undefined;
      if (value !== undefined && fits(type, value)) merged[key] = shown(value);
      else if (fallback !== undefined) merged[key] = fallback;
    }
    return merged;
  };
};
