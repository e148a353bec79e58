/**
 * Our sign-up page themes and their renderer. Pure: a theme, what the page
 * says and the state of its form in, a whole HTML document out.
 *
 * The page runs no script (its CSP forbids them) but the CAPTCHA
 * provider's, when one is configured: errors take focus with `autofocus`,
 * and the form posts back to the page's own address (no `action`). It loads
 * nothing from elsewhere: system font stacks, inline styles. Every theme
 * shares one markup and differs by its stylesheet; each was checked for
 * WCAG 2.2 AA contrast (text 4.5:1, borders and focus rings 3:1).
 */
import { inputNameOf, MAX_FORM_TEXT_CHARS } from './custom-fields.ts';
import {
  captchaScriptHtml,
  captchaSources,
  captchaWidgetHtml,
  documentHtml,
  errorIdOf,
  errorSummaryHtml,
  escapeHtml,
  HONEYPOT_CSS,
  hiddenInputsHtml,
  honeypotHtml,
  paragraphsHtml,
  SIGNUP_FIELDS,
  successHtml,
} from './markup.ts';
import type {
  CustomFormState,
  CustomInput,
  FormState,
  PageContent,
  PageMeta,
  SignupField,
  ThemeName,
} from './page-model.ts';

export type {
  FormState,
  PageContent,
  PageMeta,
  SignupField,
  ThemeName,
} from './page-model.ts';
export { isThemeName, THEMES } from './page-model.ts';
export { captchaSources };

// One stylesheet for the shared markup, driven by each theme's variables.
const BASE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--page-bg);color:var(--text);font-family:var(--font-body);font-size:1.0625rem;line-height:1.6}
.site-header{max-width:var(--width);margin:0 auto;padding:1.5rem 1rem .25rem}
.org{margin:0;font-weight:700;color:var(--header-text);letter-spacing:.02em}
.page{padding:1rem 1rem 3rem}
.card{max-width:var(--width);margin:0 auto;padding:clamp(1.5rem,6vw,2.75rem);background:var(--card-bg);border-radius:var(--radius);box-shadow:var(--shadow);border-top:var(--card-edge)}
h1{margin:0 0 1rem;font-family:var(--font-heading);font-size:clamp(1.875rem,6vw,var(--h1-size));font-weight:var(--h1-weight);letter-spacing:var(--h1-tracking);line-height:1.15;color:var(--heading)}
.intro p{margin:0 0 1rem;color:var(--muted)}
.intro p:last-child{margin-bottom:0}
.signup-form{margin-top:1.75rem}
.field{margin:0 0 1.25rem}
.field label{display:block;margin-bottom:.375rem;font-weight:650}
.optional{font-weight:400;color:var(--muted)}
.field input{display:block;width:100%;min-height:2.875rem;margin:0;padding:.65rem .85rem;font:inherit;color:var(--text);background:var(--input-bg);border:2px solid var(--input-border);border-radius:var(--input-radius)}
.field input:focus{outline:3px solid var(--focus);outline-offset:2px;border-color:var(--text)}
.field-invalid input{border-color:var(--error)}
.field-error{margin:0 0 .375rem;font-weight:650;color:var(--error)}
.names{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:0 1rem}
.captcha{margin:1.5rem 0 0}
.consent{margin:.5rem 0 1.25rem;font-size:.9375rem;color:var(--muted)}
.consent p{margin:0 0 .5rem}
.consent p:last-child{margin-bottom:0}
button{display:inline-block;width:var(--button-width);min-height:2.875rem;margin:0;padding:.75rem 1.75rem;font:inherit;font-weight:700;color:var(--button-text);background:var(--button-bg);border:2px solid var(--button-bg);border-radius:var(--button-radius);cursor:pointer}
button:hover{background:var(--button-hover);border-color:var(--button-hover)}
button:focus-visible{outline:3px solid var(--focus);outline-offset:3px}
a{color:var(--link);text-underline-offset:.15em}
a:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.signup-error-summary{margin:0 0 1.75rem;padding:1rem 1.25rem;border:3px solid var(--error);border-radius:var(--input-radius);background:var(--card-bg)}
.signup-error-summary-title{margin:0 0 .5rem;font-size:1.125rem;line-height:1.3;color:var(--text)}
.signup-error-summary ul{margin:0;padding-left:1.25rem}
.signup-error-summary a{font-weight:650;color:var(--error)}
.signup-success{margin-top:1.75rem;padding:1.25rem 1.5rem;border-left:6px solid var(--success);border-radius:var(--input-radius);background:var(--success-bg);color:var(--text)}
.signup-success:focus{outline:3px solid var(--focus);outline-offset:2px}
.signup-success p{margin:0 0 .5rem}
.signup-success p:last-child{margin-bottom:0}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:30rem){body{font-size:1rem}.page{padding:.5rem .5rem 2rem}.site-header{padding:1rem .5rem 0}}
${HONEYPOT_CSS}
`;

/**
 * The styles of custom fields' controls (a select, a checkbox), added only
 * to a form that asks some: a page without them is drawn as before.
 */
const CUSTOM_CSS = `
.field select{display:block;width:100%;min-height:2.875rem;margin:0;padding:.65rem .85rem;font:inherit;color:var(--text);background:var(--input-bg);border:2px solid var(--input-border);border-radius:var(--input-radius)}
.field select:focus{outline:3px solid var(--focus);outline-offset:2px;border-color:var(--text)}
.field-invalid select{border-color:var(--error)}
.theme-minimal .field select{border-width:0 0 2px;padding-left:0;padding-right:0}
.field-checkbox{display:flex;flex-wrap:wrap;align-items:flex-start;gap:.375rem .75rem}
.field-checkbox .field-error{flex-basis:100%;margin:0}
.field .field-checkbox-input,.field .field-checkbox-input:focus{flex:none;width:1.5rem;height:1.5rem;min-height:0;margin:.1rem 0 0;padding:0;accent-color:var(--button-bg)}
.field-checkbox label{flex:1 1 0;margin:0;font-weight:400}
`;

const SANS =
  "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,'Noto Sans',sans-serif";

// Contrast on the background each colour sits on is noted where it is close.
const THEME_CSS: Record<ThemeName, string> = {
  classic: `:root{
--width:36rem;--page-bg:#f4f1ea;--card-bg:#ffffff;--text:#1f2328;
--muted:#4b5563;--heading:#1b2a41;--header-text:#3d3a33;
--font-body:${SANS};
--font-heading:Georgia,'Iowan Old Style','Palatino Linotype','Book Antiqua',Palatino,'Times New Roman',serif;
--h1-size:2.375rem;--h1-weight:700;--h1-tracking:0;
--radius:.75rem;--shadow:0 1px 2px rgb(31 35 40 / .06),0 8px 28px rgb(31 35 40 / .09);--card-edge:0 solid transparent;
--input-bg:#ffffff;--input-border:#6b7280;--input-radius:.375rem;
--button-bg:#1d4e89;--button-hover:#163d6b;--button-text:#ffffff;--button-radius:.375rem;--button-width:auto;
--focus:#1d4e89;--link:#1d4e89;--error:#b42318;--success:#1a7f37;--success-bg:#edf7ef}`,
  // --input-border #6b7280: 4.8:1 on white; button: 8.4:1; error: 6.6:1.
  bold: `:root{
--width:38rem;--page-bg:#1e1b4b;--card-bg:#ffffff;--text:#111827;
--muted:#374151;--heading:#1e1b4b;--header-text:#e0e7ff;
--font-body:${SANS};
--font-heading:'Avenir Next','Segoe UI Variable Display','Segoe UI',${SANS};
--h1-size:3rem;--h1-weight:800;--h1-tracking:-.02em;
--radius:1rem;--shadow:0 24px 60px rgb(0 0 0 / .35);--card-edge:.5rem solid #f59e0b;
--input-bg:#ffffff;--input-border:#4b5563;--input-radius:.5rem;
--button-bg:#4338ca;--button-hover:#3730a3;--button-text:#ffffff;--button-radius:999px;--button-width:100%;
--focus:#c2410c;--link:#4338ca;--error:#b91c1c;--success:#15803d;--success-bg:#f0fdf4}
.org{text-transform:uppercase;letter-spacing:.12em;font-size:.875rem}
button{font-size:1.125rem;letter-spacing:.01em}`,
  // --focus #c2410c: 5.2:1 on white; button #4338ca: 7.9:1 with white text.
  minimal: `:root{
--width:34rem;--page-bg:#ffffff;--card-bg:#ffffff;--text:#111111;
--muted:#555555;--heading:#111111;--header-text:#111111;
--font-body:${SANS};--font-heading:${SANS};
--h1-size:2.25rem;--h1-weight:650;--h1-tracking:-.015em;
--radius:0;--shadow:none;--card-edge:0 solid transparent;
--input-bg:#ffffff;--input-border:#767676;--input-radius:0;
--button-bg:#111111;--button-hover:#333333;--button-text:#ffffff;--button-radius:0;--button-width:auto;
--focus:#111111;--link:#111111;--error:#b3261e;--success:#111111;--success-bg:#f3f3f3}
.site-header{box-sizing:content-box;padding-top:2.5rem}
.org{font-size:.875rem;font-weight:600;letter-spacing:.08em;text-transform:uppercase}
.card{padding-left:0;padding-right:0;padding-top:1.5rem}
.field input{border-width:0 0 2px;padding-left:0;padding-right:0}
.field input:focus{outline-offset:4px}`,
  // --input-border #767676: 4.5:1 on white; --muted #555555: 7.5:1.
};

const LABELS: Record<SignupField, string> = {
  email: 'Email address',
  firstName: 'First name',
  lastName: 'Last name',
};

const AUTOCOMPLETE: Record<SignupField, string> = {
  email: 'email',
  firstName: 'given-name',
  lastName: 'family-name',
};

/** The id of a field's input. */
const inputIdOf = (field: SignupField): string => `signup-${field}`;

/** One labelled field, with its error (if any) between label and input. */
const fieldHtml = (
  field: SignupField,
  state: FormState,
  autofocus: boolean,
): string => {
  const id = inputIdOf(field);
  const error = state.errors[field];
  const required = field === 'email';
  const attributes = [
    `type="${field === 'email' ? 'email' : 'text'}"`,
    `id="${id}"`,
    `name="${field}"`,
    `autocomplete="${AUTOCOMPLETE[field]}"`,
    `value="${escapeHtml(state.values[field] ?? '')}"`,
    ...(required ? ['required', 'spellcheck="false"'] : []),
    ...(error
      ? ['aria-invalid="true"', `aria-describedby="${errorIdOf(field)}"`]
      : []),
    ...(autofocus ? ['autofocus'] : []),
  ];
  const optional = required ? '' : ' <span class="optional">(optional)</span>';
  return [
    `<div class="field${error ? ' field-invalid' : ''}">`,
    `<label for="${id}">${LABELS[field]}${optional}</label>`,
    error
      ? `<p class="field-error" id="${errorIdOf(field)}"><span class="visually-hidden">Error: </span>${escapeHtml(error)}</p>`
      : '',
    `<input ${attributes.join(' ')}>`,
    '</div>',
  ].join('');
};

/** The id of a custom field's input, and of its error message. */
const customIdOf = (key: string): string => `signup-field-${key}`;
const customErrorIdOf = (key: string): string => `signup-field-${key}-error`;

/** A custom field's error, between its label and its control. */
const customErrorHtml = (key: string, error: string | undefined): string =>
  error
    ? `<p class="field-error" id="${escapeHtml(customErrorIdOf(key))}"><span class="visually-hidden">Error: </span>${escapeHtml(error)}</p>`
    : '';

/** The attributes of a text-like input, by the field's type. */
const INPUT_TYPES: Record<
  Exclude<CustomInput['type'], 'boolean' | 'option'>,
  string[]
> = {
  // One line, as Mailchimp's text merge fields: a stranger's text is short.
  text: ['type="text"', `maxlength="${MAX_FORM_TEXT_CHARS}"`],
  number: ['type="number"', 'step="any"'],
  date: ['type="date"', 'min="1000-01-01"', 'max="9999-12-31"'],
};

/**
 * One custom field, labelled (the organization's label, escaped), its
 * control fitting its type: a one-line text input, a number or date
 * input, a select of its options, or a checkbox (its label after it).
 */
const customFieldHtml = (
  input: CustomInput,
  custom: CustomFormState,
  autofocus: boolean,
): string => {
  const id = escapeHtml(customIdOf(input.key));
  const error = custom.errors[input.key];
  const value = custom.values[input.key] ?? '';
  const attributes = [
    `id="${id}"`,
    `name="${escapeHtml(inputNameOf(input.key))}"`,
    ...(input.required ? ['required'] : []),
    ...(error
      ? [
          'aria-invalid="true"',
          `aria-describedby="${escapeHtml(customErrorIdOf(input.key))}"`,
        ]
      : []),
    ...(autofocus ? ['autofocus'] : []),
  ];
  const label = escapeHtml(input.label);
  const invalid = error ? ' field-invalid' : '';
  if (input.type === 'boolean') {
    return [
      `<div class="field field-checkbox${invalid}">`,
      customErrorHtml(input.key, error),
      `<input type="checkbox" class="field-checkbox-input" ${attributes.join(' ')} value="true"${value ? ' checked' : ''}>`,
      `<label for="${id}">${label}</label>`,
      '</div>',
    ].join('');
  }
  const control =
    input.type === 'option'
      ? [
          `<select ${attributes.join(' ')}>`,
          '<option value="">Choose one</option>',
          ...(input.options ?? []).map(
            (option) =>
              `<option value="${escapeHtml(option)}"${option === value ? ' selected' : ''}>${escapeHtml(option)}</option>`,
          ),
          '</select>',
        ].join('')
      : `<input ${[...INPUT_TYPES[input.type], ...attributes, `value="${escapeHtml(value)}"`].join(' ')}>`;
  const optional = input.required
    ? ''
    : ' <span class="optional">(optional)</span>';
  return [
    `<div class="field${invalid}">`,
    `<label for="${id}">${label}${optional}</label>`,
    customErrorHtml(input.key, error),
    control,
    '</div>',
  ].join('');
};

/** The form: error summary, our hidden inputs, honeypot, fields, CAPTCHA, consent, submit. */
const formHtml = (content: PageContent, state: FormState): string => {
  const shown = SIGNUP_FIELDS.filter(
    (field) => field === 'email' || content.fields[field],
  );
  const custom = state.custom;
  // No script on the page: the first invalid field takes focus on load.
  const firstInvalid = shown.find((field) => state.errors[field]);
  const firstInvalidCustom = firstInvalid
    ? undefined
    : custom?.inputs.find((input) => custom.errors[input.key])?.key;
  const field = (name: SignupField) =>
    fieldHtml(name, state, name === firstInvalid);
  const names = shown.filter((name) => name !== 'email');
  const customErrors = (custom?.inputs ?? []).flatMap((input) => {
    const message = custom?.errors[input.key];
    return message ? [{ id: customIdOf(input.key), message }] : [];
  });
  return [
    '<form class="signup-form" method="post" novalidate>',
    errorSummaryHtml(
      state.errors,
      (name) => (shown.includes(name) ? inputIdOf(name) : undefined),
      customErrors,
    ),
    hiddenInputsHtml(state.hidden),
    honeypotHtml(state.honeypot),
    field('email'),
    names.length > 0
      ? `<div class="names">${names.map(field).join('')}</div>`
      : '',
    ...(custom
      ? custom.inputs.map((input) =>
          customFieldHtml(input, custom, input.key === firstInvalidCustom),
        )
      : []),
    state.captcha
      ? `<div class="captcha">${captchaWidgetHtml(state.captcha)}</div>`
      : '',
    `<div class="consent" id="signup-consent">${paragraphsHtml(content.consentText)}</div>`,
    `<button type="submit" aria-describedby="signup-consent">${escapeHtml(content.submitLabel)}</button>`,
    '</form>',
  ].join('\n');
};

/** A whole HTML document for a theme. Every text value is HTML-escaped. */
export const renderThemePage = async (
  theme: ThemeName,
  content: PageContent,
  state: FormState,
  meta: PageMeta,
): Promise<string> =>
  documentHtml({
    lang: meta.lang,
    title: meta.title,
    head: `<style>${BASE_CSS}${THEME_CSS[theme]}${state.custom?.inputs.length ? CUSTOM_CSS : ''}</style>`,
    bodyClass: `theme-${theme}`,
    body: [
      `<header class="site-header"><p class="org">${escapeHtml(meta.organizationName)}</p></header>`,
      '<main class="page">',
      '<div class="card">',
      `<h1>${escapeHtml(content.headline)}</h1>`,
      `<div class="intro">${paragraphsHtml(content.intro)}</div>`,
      state.done
        ? successHtml(content.successMessage)
        : formHtml(content, state),
      '</div>',
      '</main>',
      state.done ? '' : captchaScriptHtml(state.captcha),
    ].join('\n'),
  });
