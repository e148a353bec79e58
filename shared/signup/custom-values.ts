/**
 * The values of the custom fields a sign-up form asks, read from a
 * submitted form: each checked by its field's type, errors written for
 * people and naming the field by its label. Pure: inputs and a form in,
 * values and errors out.
 *
 * A value typed on a public form is a stranger's text, as a name is: a
 * text value carrying a way to reach someone (a web or email address, a
 * phone number) is refused the way a name is (`form-names.ts`), since the
 * organization's later mail may merge it (decision 0048).
 */
import * as v from 'valibot';
import { FieldDate, valueIssue } from '../fields/field.schema.ts';
import type { FieldValue } from '../fields/model.ts';
import { lineText } from '../validation.ts';
import { inputNameOf, MAX_FORM_TEXT_CHARS } from './custom-fields.ts';
import { contactInFieldText } from './form-names.ts';
import type { CustomFormState, CustomInput } from './page-model.ts';

const TextValue = v.pipe(
  lineText(MAX_FORM_TEXT_CHARS * 4),
  v.trim(),
  v.maxLength(MAX_FORM_TEXT_CHARS),
);

/** A number as a form's number input sends it. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** What a person reads beside a field typed wrongly. */
const MESSAGES = {
  missing: 'this is required.',
  untickedBox: 'tick this box to continue.',
  noChoice: 'choose one of the options.',
  text: `use at most ${MAX_FORM_TEXT_CHARS} characters, on one line.`,
  contact: 'no web or email address, no phone number.',
  number: 'enter a number, like 42 or 3.5.',
  date: 'enter a date that exists, like 2026-03-31.',
} as const;

/** One input's value read: the value, or why not (absent: no value given). */
type Read =
  | { value?: FieldValue; error?: undefined }
  | { error: keyof typeof MESSAGES };

/** Reads one input as its type says. */
const readInput = (input: CustomInput, raw: string): Read => {
  if (input.type === 'boolean') {
    // A ticked box sends its value; an unticked one sends nothing.
    const ticked = raw !== '';
    if (!ticked && input.required) return { error: 'untickedBox' };
    return { value: ticked };
  }
  const typed = raw.trim();
  if (typed === '') {
    if (!input.required) return {};
    return { error: input.type === 'option' ? 'noChoice' : 'missing' };
  }
  switch (input.type) {
    case 'text': {
      const text = v.safeParse(TextValue, raw);
      if (!text.success) return { error: 'text' };
      if (contactInFieldText(text.output)) return { error: 'contact' };
      return valueIssue('text', text.output)
        ? { error: 'text' }
        : { value: text.output };
    }
    case 'number': {
      const number = Number(typed);
      return DECIMAL.test(typed) && !valueIssue('number', number)
        ? { value: number }
        : { error: 'number' };
    }
    case 'date':
      return v.is(FieldDate, typed) ? { value: typed } : { error: 'date' };
    case 'option':
      return input.options?.includes(raw)
        ? { value: raw }
        : { error: 'noChoice' };
  }
};

/** A submitted form's custom fields, read. */
export interface CustomFieldsRead {
  /** The form's state to show again: what was typed, and the errors. */
  state: CustomFormState;
  /** The values to keep, by key (none for an input left empty). */
  values: Record<string, FieldValue>;
}

/**
 * Reads the custom fields of a submitted form (inputs `fields.<key>`):
 * each checked by its type, errors written for people and naming the
 * field by its label. Inputs the form does not ask are ignored.
 */
export const readCustomFields = (
  inputs: readonly CustomInput[],
  form: Record<string, string>,
): CustomFieldsRead => {
  const state: CustomFormState = {
    inputs: [...inputs],
    values: {},
    errors: {},
  };
  const values: Record<string, FieldValue> = {};
  for (const input of inputs) {
    const raw = form[inputNameOf(input.key)] ?? '';
    // Kept to show again: as typed, cut well past what any value takes.
    if (raw !== '')
      state.values[input.key] = raw.slice(0, 4 * MAX_FORM_TEXT_CHARS);
    const read = readInput(input, raw);
    if (read.error) {
      state.errors[input.key] = `${input.label}: ${MESSAGES[read.error]}`;
    } else if (read.value !== undefined) {
      values[input.key] = read.value;
    }
  }
  return { state, values };
};
