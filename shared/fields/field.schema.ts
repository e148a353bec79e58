/**
 * Schemas of the custom field endpoints.
 */
import * as v from 'valibot';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  multilineText,
  parseIsoInstant,
  REAL_DATE_PATTERN,
  requiredName,
} from '../validation.ts';
import { type FieldType, type FieldValue, MAX_FIELD_OPTIONS } from './model.ts';

/** A field's key: what templates and segments name. */
export const FieldKey = v.pipe(
  v.string(),
  v.regex(
    /^[a-z][a-z0-9_]{0,39}$/,
    'must be 1 to 40 characters: lower-case letters, digits and "_", starting with a letter',
  ),
  // Names a JSON object cannot safely hold as its own keys.
  v.notValues(
    ['constructor', 'prototype'],
    'must not be "constructor" or "prototype" (reserved)',
  ),
  v.description(
    'The stable identifier of the field: `{{ fields.<key> }}` in templates. Lower-case letters, digits and `_`, starting with a letter; 40 characters at most. It never changes.',
  ),
);

const Label = requiredName(100);

const Option = requiredName(100);

const Options = v.pipe(
  v.array(Option),
  v.minLength(1, 'must name at least one option'),
  v.maxLength(
    MAX_FIELD_OPTIONS,
    `must name at most ${MAX_FIELD_OPTIONS} options`,
  ),
  // Compared after trimming, by the domain (`field.optionsRepeated`).
  inJsonSchema({ uniqueItems: true }),
);

/** A calendar date, `YYYY-MM-DD`, that exists. */
export const FieldDate = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD'),
  inJsonSchema({ pattern: REAL_DATE_PATTERN }),
  v.check(
    (date) =>
      parseIsoInstant(`${date}T00:00:00Z`, { offset: 'required' }) !==
      undefined,
    'must be a date that exists (years 1000 to 9999)',
  ),
);

/** A text value: line breaks allowed, other controls and lone surrogates not. */
const TextValue = v.pipe(
  multilineText(4_000),
  v.maxLength(1_000, 'must be at most 1,000 characters'),
);

/**
 * The numbers a field holds: 0, or a magnitude from 1e-130 (DynamoDB's
 * smallest) to 2^53 - 1 (the largest integer JavaScript, and so the SDK's
 * marshaller, keeps exact).
 */
const NUMBER_RANGE = { least: 1e-130, most: Number.MAX_SAFE_INTEGER } as const;

const NumberValue = v.pipe(
  v.number(),
  // Infinity and NaN fail it too: one message for every number refused.
  v.check(
    (n) =>
      n === 0 ||
      (Math.abs(n) >= NUMBER_RANGE.least && Math.abs(n) <= NUMBER_RANGE.most),
    'must be 0 or of a magnitude from 1e-130 to 9007199254740991',
  ),
  inJsonSchema({
    anyOf: [
      { const: 0 },
      { minimum: NUMBER_RANGE.least, maximum: NUMBER_RANGE.most },
      { minimum: -NUMBER_RANGE.most, maximum: -NUMBER_RANGE.least },
    ],
  }),
);

/** A value fit for a field of this type (and these options). */
export const valueIssue = (
  type: FieldType,
  value: FieldValue,
  options: readonly string[] = [],
): string | undefined => {
  switch (type) {
    case 'text':
      return v.is(TextValue, value)
        ? undefined
        : 'must be a text of at most 1,000 characters';
    case 'number':
      return v.is(NumberValue, value)
        ? undefined
        : 'must be a number: 0, or of a magnitude from 1e-130 to 9007199254740991';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      return typeof value === 'string' && v.is(FieldDate, value)
        ? undefined
        : 'must be a date that exists, YYYY-MM-DD';
    case 'option':
      return typeof value === 'string' && options.includes(value)
        ? undefined
        : `must be one of the field's options: ${options.join(', ')}`;
  }
};

/** Options belong to an option field: any other type refuses them. */
const NoOptions = v.optional(v.never('only an option field takes options'));

const common = { key: FieldKey, label: Label };

/**
 * Body of POST /fields: one shape per type, the default of the type's
 * values. An option field's default must be one of its options (checked
 * by the domain: `field.defaultInvalid`).
 */
export const CreateFieldBody = v.variant('type', [
  v.object({
    ...common,
    type: v.literal('text'),
    options: NoOptions,
    defaultValue: v.optional(TextValue),
  }),
  v.object({
    ...common,
    type: v.literal('number'),
    options: NoOptions,
    defaultValue: v.optional(NumberValue),
  }),
  v.object({
    ...common,
    type: v.literal('date'),
    options: NoOptions,
    defaultValue: v.optional(FieldDate),
  }),
  v.object({
    ...common,
    type: v.literal('boolean'),
    options: NoOptions,
    defaultValue: v.optional(v.boolean()),
  }),
  v.object({
    ...common,
    type: v.literal('option'),
    options: Options,
    defaultValue: v.optional(Option),
  }),
]);
export type CreateFieldInput = v.InferOutput<typeof CreateFieldBody>;

const DefaultValue = v.union([v.string(), v.number(), v.boolean()]);

/**
 * Body of PATCH /fields/{fieldId}: the label, options added (never removed:
 * contacts hold them), the default (null clears it). Key and type never
 * change.
 */
export const UpdateFieldBody = v.pipe(
  v.object({
    label: v.optional(Label),
    options: v.optional(Options),
    defaultValue: v.optional(v.nullable(DefaultValue)),
  }),
  v.check(
    hasSomeField,
    'must change at least one of label, options, defaultValue',
  ),
);
export type UpdateFieldInput = v.InferOutput<typeof UpdateFieldBody>;
