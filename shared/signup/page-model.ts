/**
 * What a hosted sign-up page shows and the state of its form: the shapes
 * both renderers (our themes and pasted HTML) take. Types only.
 */

/** The visible fields a sign-up form may ask, by their input names. */
export type SignupField = 'email' | 'firstName' | 'lastName';

/** What a page says and asks (all plain text, never HTML; paragraphs of `intro` split on blank lines). */
export interface PageContent {
  headline: string;
  intro: string;
  /** Email is always asked and required; first and last name are optional inputs. */
  fields: { firstName: boolean; lastName: boolean };
  /** Shown above the submit button. */
  consentText: string;
  submitLabel: string;
  /** Shown after a valid submission, in place of the form. */
  successMessage: string;
}

/** The state of the form being rendered. */
export interface FormState {
  /** Values to put back in the fields (after an invalid submission). */
  values: Partial<Record<SignupField, string>>;
  /** A message per invalid field; empty when none. */
  errors: Partial<Record<SignupField, string>>;
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
