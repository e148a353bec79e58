/**
 * The custom fields a sign-up page asks (see `shared/fields/`): checked
 * against the organization's fields when a page is written, shown by the
 * API, drawn as inputs while the fields exist, and kept in the consent
 * record of each sign-up. Pure: definitions in, results out. Reading their
 * values from a submitted form is `custom-values.ts`.
 */
import * as v from 'valibot';
import { type FieldIssue, ValidationError } from '../errors.ts';
import { FieldKey } from '../fields/field.schema.ts';
import type { Field } from '../fields/model.ts';
import type { AskedField, CustomInput } from './page-model.ts';
import type { AskedFieldsInput } from './signup.schema.ts';

/**
 * The longest text value a form takes, in characters: one line, as
 * Mailchimp's text merge fields (255). The API takes up to 1,000; a
 * stranger's text on a public form is kept short.
 */
export const MAX_FORM_TEXT_CHARS = 255;

/** The name of a custom field's input: `fields.<key>`, as the API names it. */
export const inputNameOf = (key: string): string => `fields.${key}`;

/** A custom field a page asks, as the API shows it. */
export const AskedFieldView = v.pipe(
  v.object({
    key: FieldKey,
    label: v.pipe(
      v.nullable(v.string()),
      v.description("The page's own label; null shows the field's"),
    ),
    required: v.boolean(),
  }),
  v.title('SignupPageCustomField'),
);
export type AskedFieldView = v.InferOutput<typeof AskedFieldView>;

/** The API view of what a page asks. */
export const askedFieldsView = (
  asked: readonly AskedField[] | undefined,
): AskedFieldView[] =>
  (asked ?? []).map(({ key, label, required }) => ({
    key,
    label: label ?? null,
    required,
  }));

/**
 * What a page will ask, each key checked against the organization's
 * fields: 400 `signupPage.fieldsInvalid` naming `customFields.<i>.key` for
 * an unknown or repeated key, nothing written.
 */
export const askedFieldsOf = (
  definitions: ReadonlyMap<string, Field>,
  input: AskedFieldsInput,
): AskedField[] => {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  const asked = input.flatMap(({ key, required, label }, i) => {
    const field = definitions.get(key);
    if (!field) {
      issues.push({
        field: `customFields.${i}.key`,
        message: 'is not a field of the organization (see GET /fields)',
      });
      return [];
    }
    if (seen.has(key)) {
      issues.push({
        field: `customFields.${i}.key`,
        message: 'is asked twice',
      });
      return [];
    }
    seen.add(key);
    return [
      {
        fieldId: field.id,
        key,
        required,
        ...(label !== undefined ? { label } : {}),
      },
    ];
  });
  if (issues.length) {
    throw new ValidationError(
      `Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
      issues,
      { code: 'signupPage.fieldsInvalid' },
    );
  }
  return asked;
};

/**
 * The inputs a form draws: the page's fields that still exist (the same
 * field, not another that took its key), with the page's wording.
 */
export const customInputsOf = (
  asked: readonly AskedField[] | undefined,
  definitions: ReadonlyMap<string, Field>,
): CustomInput[] =>
  (asked ?? []).flatMap((entry) => {
    const field = definitions.get(entry.key);
    if (!field || field.id !== entry.fieldId) return [];
    return [
      {
        key: entry.key,
        label: entry.label ?? field.label,
        type: field.type,
        ...(field.options ? { options: field.options } : {}),
        required: entry.required,
      },
    ];
  });

/** A custom field asked, as a consent record keeps it. */
export interface AskedRecord {
  key: string;
  /** The label shown. */
  label: string;
  required: boolean;
}

/** What a form asked, for its consent record. */
export const askedRecordsOf = (inputs: readonly CustomInput[]): AskedRecord[] =>
  inputs.map(({ key, label, required }) => ({ key, label, required }));
