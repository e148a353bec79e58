/**
 * A contact's field values: their shape in a request, checked against the
 * organization's definitions, merged into what the contact holds, and
 * bounded in size. Agnostic to where contacts are stored.
 */
import * as v from 'valibot';
import { type FieldIssue, ValidationError } from '../errors.ts';
import { inJsonSchema } from '../schema-notes.ts';
import { FieldKey, valueIssue } from './field.schema.ts';
import { type Field, type FieldValue, MAX_FIELDS } from './model.ts';
import type { FieldsDeps } from './ports.ts';

/**
 * Most bytes a contact's values take (as JSON, UTF-8): far below
 * DynamoDB's 400 KB item, whatever else the contact holds.
 */
export const MAX_FIELD_VALUES_BYTES = 10_000;

/**
 * Values in a request, by field key: a value of the field's type, or null
 * to remove one. Which keys exist and which types they take is the
 * organization's: checked by {@link checkFieldValues}.
 */
export const FieldValuesInput = v.pipe(
  v.record(
    FieldKey,
    v.nullable(v.union([v.string(), v.number(), v.boolean()])),
  ),
  v.check(
    (values) => Object.keys(values).length <= MAX_FIELDS,
    `must name at most ${MAX_FIELDS} fields`,
  ),
  inJsonSchema({ maxProperties: MAX_FIELDS }),
  v.description(
    "Custom field values by field key (see /fields): a value of the field's type, or null to remove it. An unknown key or a value of another type is a 400 naming `fields.<key>`.",
  ),
);
export type FieldValuesInput = v.InferOutput<typeof FieldValuesInput>;

/** The values a contact holds, by field key. */
export type FieldValues = Record<string, FieldValue>;

/** The organization's field definitions, by key (at most 50: one Query). */
export const definitionsOf = async (
  deps: Pick<FieldsDeps, 'fields'>,
  orgId: string,
): Promise<Map<string, Field>> => {
  const page = await deps.fields.page(orgId, { page: 1, limit: MAX_FIELDS });
  return new Map(page.items.map((field) => [field.key, field]));
};

/** What is wrong with these values, each issue naming `fields.<key>`. */
export const fieldValueIssues = (
  definitions: ReadonlyMap<string, Field>,
  values: FieldValuesInput,
): FieldIssue[] =>
  Object.entries(values).flatMap(([key, value]) => {
    // Removing a value is always allowed: one of a deleted field too.
    if (value === null) return [];
    const field = definitions.get(key);
    if (!field) {
      return [
        {
          field: `fields.${key}`,
          message: 'is not a field of the organization (see GET /fields)',
        },
      ];
    }
    const issue = valueIssue(field.type, value, field.options);
    return issue ? [{ field: `fields.${key}`, message: issue }] : [];
  });

/** `input` over `before`, a null removing a value. */
const applied = (
  before: FieldValues | undefined,
  input: FieldValuesInput,
): FieldValues => {
  const merged: FieldValues = { ...before };
  for (const [key, value] of Object.entries(input)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
};

/** Why the values after a write would be too big; undefined when not. */
export const valuesSizeIssue = (
  before: FieldValues | undefined,
  input: FieldValuesInput,
): string | undefined => {
  const bytes = Buffer.byteLength(JSON.stringify(applied(before, input)));
  return bytes > MAX_FIELD_VALUES_BYTES
    ? `fields: would take ${bytes} bytes; a contact's values take at most ${MAX_FIELD_VALUES_BYTES}`
    : undefined;
};

/**
 * The values after a write: `input` over `before`, a null removing a
 * value; undefined when none is left. 400 naming `fields` past
 * {@link MAX_FIELD_VALUES_BYTES}.
 */
export const mergeFieldValues = (
  before: FieldValues | undefined,
  input: FieldValuesInput | undefined,
): FieldValues | undefined => {
  if (input === undefined) return before;
  const tooBig = valuesSizeIssue(before, input);
  if (tooBig) {
    throw new ValidationError(
      `Invalid request: ${tooBig}`,
      [{ field: 'fields', message: tooBig.slice('fields: '.length) }],
      { code: 'fields.invalid' },
    );
  }
  const merged = applied(before, input);
  return Object.keys(merged).length ? merged : undefined;
};

/**
 * A contact with its values after a write (`input` over `before`): the
 * attribute replaced, and absent when no value is left. Unchanged when the
 * write names no values.
 */
export const withValuesApplied = <C extends { fields?: FieldValues }>(
  contact: C,
  before: FieldValues | undefined,
  input: FieldValuesInput | undefined,
): C => {
  if (input === undefined) return contact;
  const { fields: _, ...rest } = contact;
  const fields = mergeFieldValues(before, input);
  return (fields ? { ...rest, fields } : rest) as C;
};

/** The `fields` of a new contact: absent when none is given. */
export const withFieldValues = (
  before: FieldValues | undefined,
  input: FieldValuesInput | undefined,
): { fields?: FieldValues } => {
  const fields = mergeFieldValues(before, input);
  return fields ? { fields } : {};
};

/**
 * Checks values against the organization's definitions: one Query, only
 * when the request names values. 400 naming each `fields.<key>` wrong.
 */
export const checkFieldValues = async (
  deps: Pick<FieldsDeps, 'fields'>,
  orgId: string,
  values: FieldValuesInput | undefined,
): Promise<void> => {
  if (values === undefined || Object.keys(values).length === 0) return;
  const issues = fieldValueIssues(await definitionsOf(deps, orgId), values);
  if (issues.length) {
    throw new ValidationError(
      `Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
      issues,
      { code: 'fields.invalid' },
    );
  }
};
