/**
 * The markup both sign-up page renderers share: escaping, our hidden
 * inputs, the honeypot, the CAPTCHA widget, the error summary, the success
 * message and the document shell. Pure: strings in, HTML out; every text
 * value goes through `escapeHtml`.
 */
import type { FormState, SignupField } from './page-model.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** A text made safe for an HTML text node or a quoted attribute value. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);

/** The visible fields in the order a form asks them. */
export const SIGNUP_FIELDS: readonly SignupField[] = [
  'email',
  'firstName',
  'lastName',
];

/** The names of the fields the CAPTCHA providers' scripts add to the form. */
export const CAPTCHA_RESPONSE_FIELDS = {
  turnstile: 'cf-turnstile-response',
  hcaptcha: 'h-captcha-response',
} as const;

const CAPTCHA = {
  turnstile: {
    widgetClass: 'cf-turnstile',
    script: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    sources: {
      script: ['https://challenges.cloudflare.com'],
      frame: ['https://challenges.cloudflare.com'],
      connect: [] as string[],
    },
  },
  hcaptcha: {
    widgetClass: 'h-captcha',
    script: 'https://js.hcaptcha.com/1/api.js',
    // hCaptcha's published CSP: its script, frames and calls come from
    // hcaptcha.com and its subdomains.
    sources: {
      script: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
      frame: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
      connect: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
    },
  },
} as const;

/** The CSP sources a page needs for its CAPTCHA, if any (scripts and frames of the provider). */
export const captchaSources = (
  captcha: FormState['captcha'],
): { script: string[]; frame: string[]; connect: string[] } => {
  if (!captcha) return { script: [], frame: [], connect: [] };
  const { sources } = CAPTCHA[captcha.provider];
  return {
    script: [...sources.script],
    frame: [...sources.frame],
    connect: [...sources.connect],
  };
};

/** The provider's widget: its script fills in the response field. */
export const captchaWidgetHtml = (captcha: FormState['captcha']): string =>
  captcha
    ? `<div class="${CAPTCHA[captcha.provider].widgetClass}" data-sitekey="${escapeHtml(captcha.siteKey)}"></div>`
    : '';

/** The provider's script: the only script a sign-up page ever loads. */
export const captchaScriptHtml = (captcha: FormState['captcha']): string =>
  captcha
    ? `<script src="${CAPTCHA[captcha.provider].script}" async defer></script>`
    : '';

/** Our hidden inputs, one per entry. */
export const hiddenInputsHtml = (hidden: Record<string, string>): string =>
  Object.entries(hidden)
    .map(
      ([name, value]) =>
        `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
    )
    .join('');

/** The class that moves the honeypot off-screen (see `HONEYPOT_CSS`). */
export const HONEYPOT_CLASS = 'signup-hp';

/** Moves the honeypot off-screen without `display: none`, which bots look for. */
export const HONEYPOT_CSS = `.${HONEYPOT_CLASS}{position:absolute!important;left:-10000px!important;top:auto!important;width:1px!important;height:1px!important;overflow:hidden!important}`;

/**
 * The honeypot: a text input people never see (off-screen), assistive
 * technology never reads (`aria-hidden`) and Tab never reaches
 * (`tabindex="-1"`); a bot filling every input fills it.
 */
export const honeypotHtml = (name: string): string =>
  `<div class="${HONEYPOT_CLASS}" aria-hidden="true"><label for="signup-hp">Leave this field empty</label><input type="text" id="signup-hp" name="${escapeHtml(name)}" value="" tabindex="-1" autocomplete="off"></div>`;

/** The id of the element holding a field's error message. */
export const errorIdOf = (field: SignupField): string =>
  `signup-${field}-error`;

/** An error of a form's list: its message, and its field's id if any. */
interface SummaryItem {
  id: string | undefined;
  message: string;
}

/**
 * The list of errors at the top of a form, announced when the page loads
 * (`role="alert"`). `fieldIdOf` gives the id of a field's input, when the
 * page has one, so each message links to its field; `more` are the errors
 * of the form's custom fields, after those of its own fields.
 */
export const errorSummaryHtml = (
  errors: FormState['errors'],
  fieldIdOf: (field: SignupField) => string | undefined,
  more: readonly SummaryItem[] = [],
): string => {
  const ours = SIGNUP_FIELDS.flatMap((field): SummaryItem[] => {
    const message = errors[field];
    return message ? [{ id: fieldIdOf(field), message }] : [];
  });
  const items = [...ours, ...more].map(({ id, message }) =>
    id
      ? `<li><a href="#${escapeHtml(id)}">${escapeHtml(message)}</a></li>`
      : `<li>${escapeHtml(message)}</li>`,
  );
  if (items.length === 0) return '';
  return `<div class="signup-error-summary" role="alert"><h2 class="signup-error-summary-title">There is a problem</h2><ul>${items.join('')}</ul></div>`;
};

/**
 * The success message, in place of the form. It takes focus on load (the
 * page has no script), so a screen reader reads it first.
 */
export const successHtml = (message: string): string =>
  `<div class="signup-success" role="status" tabindex="-1" autofocus>${paragraphsHtml(message)}</div>`;

/** Plain text as paragraphs: a blank line starts a paragraph, a line break stays one. */
export const paragraphsHtml = (text: string): string =>
  text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '')
    .map(
      (paragraph) =>
        `<p>${paragraph.split('\n').map(escapeHtml).join('<br>')}</p>`,
    )
    .join('');

/** A whole HTML document: charset, viewport, language and title first. */
export const documentHtml = (parts: {
  lang?: string | undefined;
  title: string;
  head: string;
  body: string;
  bodyClass?: string;
}): string =>
  [
    '<!doctype html>',
    `<html lang="${escapeHtml(parts.lang || 'en')}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(parts.title)}</title>`,
    parts.head,
    '</head>',
    parts.bodyClass
      ? `<body class="${escapeHtml(parts.bodyClass)}">`
      : '<body>',
    parts.body,
    '</body>',
    '</html>',
  ].join('\n');
