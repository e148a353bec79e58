/**
 * What a hosted sign-up page shows and the state of its form: the shapes
 * both renderers (our themes and pasted HTML) take. Types only.
 */
import type { FieldType } from '../fields/model.ts';

/** The visible fields a sign-up form may ask, by their input names. */
export type SignupField = 'email' | 'firstName' | 'lastName';

/**
 * A custom field (see `shared/fields/`) a page asks, as the page keeps it:
 * by key, and by the id of the field it was given, so a field deleted
 * later is never asked again even if another one takes its key.
 */
export interface AskedField {
  fieldId: string;
  key: string;
  /** Whether a sign-up must give a value (a checkbox: must be ticked). */
  required: boolean;
  /** The page's own label for it; the field's label when absent. */
  label?: string;
}

/** What a page says and asks (all plain text, never HTML; paragraphs of `intro` split on blank lines). */
export interface PageContent {
  headline: string;
  intro: string;
  /** Email is always asked and required; first and last name are optional inputs. */
  fields: { firstName: boolean; lastName: boolean };
  /**
   * The custom fields it asks after the names, in order (a themed page
   * only); absent when none.
   */
  customFields?: AskedField[];
  /** Shown above the submit button. */
  consentText: string;
  submitLabel: string;
  /** Shown after a valid submission, in place of the form. */
  successMessage: string;
}

/** A custom field as the form draws it: its definition, the page's wording. */
export interface CustomInput {
  key: string;
  /** As shown: the page's label, else the field's. */
  label: string;
  type: FieldType;
  /** An option field's options, in order. */
  options?: readonly string[];
  required: boolean;
}

/** The custom fields of a form being rendered (by field key). */
export interface CustomFormState {
  /** What the form asks, in order: the page's fields that still exist. */
  inputs: CustomInput[];
  /** Values to put back (after an invalid submission), as typed. */
  values: Record<string, string>;
  /** A message per invalid field. */
  errors: Record<string, string>;
}

/** The state of the form being rendered. */
export interface FormState {
  /** Values to put back in the fields (after an invalid submission). */
  values: Partial<Record<SignupField, string>>;
  /** A message per invalid field; empty when none. */
  errors: Partial<Record<SignupField, string>>;
  /** The custom fields the form asks; absent when it asks none. */
  custom?: CustomFormState;
  /** Our hidden inputs (name → value), e.g. a signed fill-time token: rendered as <input type="hidden">. */
  hidden: Record<string, string>;
  /** The name of the honeypot input: a text input real people never see nor fill. */
  honeypot: string;
  /** The CAPTCHA widget to show, when the operator configured one. */
  captcha?: { provider: 'turnstile' | 'hcaptcha'; siteKey: string };
  /** true after an accepted submission: the success message replaces the form. */
  done: boolean;
}

/** What the document around a page says about it. */
export interface PageMeta {
  title: string;
  /** The page's language (`<html lang>`); 'en' when not given. */
  lang?: string;
  organizationName: string;
}

/** The names of our themes. */
export type ThemeName = 'classic' | 'bold' | 'minimal';

/** Our themes, as an organization picks one. */
export const THEMES: readonly {
  name: ThemeName;
  label: string;
  description: string;
}[] = [
  {
    name: 'classic',
    label: 'Classic',
    description:
      'A white card on warm paper, serif headline, navy button: calm and editorial.',
  },
  {
    name: 'bold',
    label: 'Bold',
    description:
      'A white card on deep indigo with an amber edge, large headline and a full-width button.',
  },
  {
    name: 'minimal',
    label: 'Minimal',
    description:
      'Black on white, square corners, no card: the words do the work.',
  },
];

/** Whether `name` is one of our themes. */
export const isThemeName = (name: string): name is ThemeName =>
  THEMES.some((theme) => theme.name === name);
