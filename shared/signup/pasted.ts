/**
 * Sign-up pages from an organization's own HTML: sanitized once when it is
 * written (sanitize-html, an allow-list), then, on every request, served in
 * our document shell with our hidden inputs, honeypot, errors and CAPTCHA
 * injected into its form. What its form asks and says (`readPastedForm`)
 * is read from it when it is written. Pure: strings in, strings out.
 *
 * What stays is layout and text: no script, no frame, no plugin, no
 * foreign content (SVG, MathML), no event handler, no URL but https, http
 * and mailto (and https or data images), and one form that can only post
 * back to the page's own address. `<style>` and `style` stay: the page's
 * CSP allows inline styles, and what CSS can do there is harmless (its
 * `url()`s can only load images, over https; no script runs).
 */

import type { ChildNode, Document, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';
import { MAX_HTML_NESTING } from '../rendering/engine.ts';
import { htmlNesting } from '../rendering/nesting.ts';
import {
  CAPTCHA_RESPONSE_FIELDS,
  captchaScriptHtml,
  captchaWidgetHtml,
  documentHtml,
  errorIdOf,
  errorSummaryHtml,
  escapeHtml,
  HONEYPOT_CSS,
  hiddenInputsHtml,
  honeypotHtml,
  SIGNUP_FIELDS,
  successHtml,
} from './markup.ts';
import type {
  FormState,
  PageContent,
  PageMeta,
  SignupField,
} from './page-model.ts';

/** A problem with pasted HTML, for a 400 answer naming the field `html`. */
export interface PastedProblem {
  field: 'html';
  message: string;
}

/** The longest pasted HTML we take, in characters. */
export const MAX_PASTED_HTML_CHARS = 100_000;

/**
 * Largest sanitized HTML, in UTF-8 bytes: what is stored, in a record of its
 * own (DynamoDB holds 400 KB a record; the rest is room for its keys).
 */
export const MAX_SANITIZED_HTML_BYTES = 300_000;

const ALLOWED_TAGS = [
  'style',
  'main',
  'header',
  'footer',
  'section',
  'article',
  'aside',
  'nav',
  'div',
  'span',
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'strong',
  'em',
  'b',
  'i',
  'u',
  's',
  'small',
  'mark',
  'sub',
  'sup',
  'abbr',
  'code',
  'pre',
  'blockquote',
  'br',
  'hr',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'figure',
  'figcaption',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'a',
  'img',
  'form',
  'fieldset',
  'legend',
  'label',
  'input',
  'button',
];

/**
 * Disallowed tags whose whole content goes with them: scripts, raw-text and
 * template-like elements (where parsers disagree, the mutation-XSS ground),
 * plugins, foreign content, and a document's head matter.
 */
const DROPPED_WITH_CONTENT = [
  'script',
  'noscript',
  'template',
  'xmp',
  'plaintext',
  'iframe',
  'frame',
  'frameset',
  'noframes',
  'noembed',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
  'textarea',
  'select',
  'option',
  'title',
  'meta',
  'link',
  'base',
];

const INPUT_TYPES = new Set(['text', 'email', 'hidden', 'checkbox', 'submit']);

const FIELD_NAMES = new Set<string>(SIGNUP_FIELDS);

// The CAPTCHA scripts render every element with these classes: only ours.
const CAPTCHA_CLASSES = new Set(['cf-turnstile', 'h-captcha', 'g-recaptcha']);

/** A tag sanitize-html does not allow: what it is renamed to is dropped. */
const DROPPED = 'dropped';

const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  // <style> is "vulnerable" where scripts may run; here the CSP stops them.
  allowVulnerableTags: true,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  allowedAttributes: {
    '*': ['id', 'class', 'style', 'title', 'lang', 'dir', 'role', 'aria-*'],
    a: ['href', 'target', 'rel'],
    img: ['src', 'alt', 'width', 'height', 'loading'],
    form: ['method'],
    label: ['for'],
    input: [
      'type',
      'name',
      'value',
      'placeholder',
      'required',
      'checked',
      'autocomplete',
      'maxlength',
      'minlength',
      'size',
      'inputmode',
      'spellcheck',
    ],
    button: ['type'],
    ol: ['start', 'reversed', 'type'],
    th: ['colspan', 'rowspan', 'scope'],
    td: ['colspan', 'rowspan'],
  },
  allowedSchemes: ['https', 'http', 'mailto'],
  allowedSchemesByTag: { img: ['https', 'data'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  transformTags: {
    // Our server owns where and how the form posts: back to the page.
    form: (_tag, attribs) => ({
      tagName: 'form',
      attribs: {
        ...withoutKeys(attribs, ['action', 'target']),
        method: 'post',
      },
    }),
    input: (_tag, attribs) => {
      const type = (attribs.type ?? 'text').trim().toLowerCase();
      if (!INPUT_TYPES.has(type)) return { tagName: DROPPED, attribs: {} };
      const { name, ...rest } = attribs;
      // Only our fields are sent, and the page's own hidden inputs.
      const keepName =
        name !== undefined && (type === 'hidden' || FIELD_NAMES.has(name));
      return {
        tagName: 'input',
        attribs: { ...rest, type, ...(keepName ? { name } : {}) },
      };
    },
    button: (_tag, attribs) => ({
      tagName: 'button',
      attribs: { ...attribs, type: 'submit' },
    }),
    a: (_tag, attribs) => ({
      tagName: 'a',
      attribs: attribs.target
        ? { ...attribs, rel: 'noopener noreferrer' }
        : attribs,
    }),
    '*': (tag, attribs) => ({
      tagName: tag,
      attribs: attribs.class
        ? {
            ...attribs,
            class: attribs.class
              .split(/\s+/)
              .filter((name) => !CAPTCHA_CLASSES.has(name))
              .join(' '),
          }
        : attribs,
    }),
  },
};

const withoutKeys = (
  record: Record<string, string>,
  keys: string[],
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record).filter(([key]) => !keys.includes(key)),
  );

const elementsNamed = (
  root: Document | Element,
  name: string,
  test: (element: Element) => boolean = () => true,
): Element[] =>
  DomUtils.findAll(
    (element) => element.name === name && test(element),
    root.children,
  );

/** The markup a browser reads the way we do: entities for text only. */
const serialize = (nodes: ChildNode | ChildNode[]): string =>
  DomUtils.getOuterHTML(nodes, { encodeEntities: 'utf8' });

/**
 * The content of pasted HTML, fragment or whole document: `<html>` and
 * `<body>` unwrapped, a `<head>` reduced to its `<style>` blocks.
 */
const contentOf = (nodes: ChildNode[]): ChildNode[] =>
  nodes.flatMap((node) => {
    if (!DomUtils.isTag(node)) return [node];
    if (node.name === 'head') return elementsNamed(node, 'style');
    if (node.name === 'html' || node.name === 'body') {
      return contentOf(node.children);
    }
    return [node];
  });

/** Pasted HTML as the fragment we sanitize (see `contentOf`). */
const bodyOf = (html: string): string =>
  serialize(contentOf(parseDocument(html).children));

/**
 * Style text can never close its element early: `<` has no use in CSS
 * outside strings, where its escape means the same.
 */
const neutralizeStyles = (document: Document): void => {
  for (const style of elementsNamed(document, 'style')) {
    for (const node of style.children) {
      if (DomUtils.isText(node)) {
        node.data = node.data.replaceAll('<', '\\3c ');
      }
    }
  }
};

const isSubmit = (element: Element): boolean =>
  element.name === 'button' ||
  (element.name === 'input' && element.attribs.type === 'submit');

/** The problems that make sanitized HTML unusable as a sign-up page. */
const problemsOf = (document: Document): PastedProblem[] => {
  const forms = elementsNamed(document, 'form');
  const [form] = forms;
  if (!form) {
    return [
      {
        field: 'html',
        message:
          'The HTML has no <form>: a sign-up page needs one, with an input named email.',
      },
    ];
  }
  if (forms.length > 1) {
    return [
      {
        field: 'html',
        message: `The HTML has ${forms.length} forms: a sign-up page has exactly one.`,
      },
    ];
  }
  const problems: PastedProblem[] = [];
  const emailInputs = elementsNamed(
    form,
    'input',
    (input) =>
      input.attribs.name === 'email' &&
      (input.attribs.type === 'email' || input.attribs.type === 'text'),
  );
  if (emailInputs.length === 0) {
    problems.push({
      field: 'html',
      message:
        'The form has no input named email: add <input type="email" name="email">.',
    });
  }
  if (DomUtils.findAll(isSubmit, form.children).length === 0) {
    problems.push({
      field: 'html',
      message:
        'The form has no submit button: add <button type="submit">Subscribe</button>.',
    });
  }
  return problems;
};

/** Sanitizes pasted HTML for storage: returns the safe HTML, or the problems (e.g. no <form>, no input named email, more than one form, too long: max 100,000 chars in). */
export const sanitizePastedHtml = (
  html: string,
): { ok: true; html: string } | { ok: false; problems: PastedProblem[] } => {
  if (html.length > MAX_PASTED_HTML_CHARS) {
    return {
      ok: false,
      problems: [
        {
          field: 'html',
          message: `The HTML is ${html.length.toLocaleString('en')} characters long; at most ${MAX_PASTED_HTML_CHARS.toLocaleString('en')} are allowed.`,
        },
      ],
    };
  }
  // The sanitizer and the serializer recurse once a level of nesting.
  const depth = htmlNesting(html);
  if (depth > MAX_HTML_NESTING) {
    return {
      ok: false,
      problems: [
        {
          field: 'html',
          message: `The HTML nests elements ${depth} levels deep; at most ${MAX_HTML_NESTING} are allowed.`,
        },
      ],
    };
  }
  // 1. Keep the allowed tags, attributes and URLs of the body.
  const sanitized = sanitizeHtml(bodyOf(html), SANITIZE_OPTIONS);
  // 2. Read it back as a browser would, and check it is a sign-up form.
  const document = parseDocument(sanitized);
  const problems = problemsOf(document);
  if (problems.length > 0) return { ok: false, problems };
  // 3. Store what the tree says, so what is served is what was checked.
  neutralizeStyles(document);
  const safe = serialize(document.children);
  // Sanitizing writes `&` and `<` of text as entities: 100,000 bytes of `&`
  // become 500,000, past what one record holds. Judge what is stored.
  const stored = Buffer.byteLength(safe);
  if (stored > MAX_SANITIZED_HTML_BYTES) {
    const given = Buffer.byteLength(html);
    return {
      ok: false,
      problems: [
        {
          field: 'html',
          message: `The HTML is ${given.toLocaleString('en')} bytes as pasted and ${stored.toLocaleString('en')} bytes once sanitized (text's & and < are written as entities); at most ${MAX_SANITIZED_HTML_BYTES.toLocaleString('en')} bytes are stored.`,
        },
      ],
    };
  }
  return { ok: true, html: safe };
};

/** Nodes from our own markup. */
const nodesOf = (html: string): ChildNode[] => [
  ...parseDocument(html).children,
];

const insertBefore = (reference: ChildNode, html: string): void => {
  for (const node of nodesOf(html)) DomUtils.prepend(reference, node);
};

const prependTo = (parent: Element, html: string): void => {
  for (const node of nodesOf(html).reverse())
    DomUtils.prependChild(parent, node);
};

const appendTo = (parent: Element, html: string): void => {
  for (const node of nodesOf(html)) DomUtils.appendChild(parent, node);
};

/** Our fields in the form, with the visible input of each (in page order). */
const fieldInputsOf = (form: Element): [SignupField, Element][] =>
  elementsNamed(
    form,
    'input',
    (input) =>
      FIELD_NAMES.has(input.attribs.name ?? '') &&
      input.attribs.type !== 'hidden',
  ).map((input) => [input.attribs.name as SignupField, input]);

/** The longest consent wording read from a pasted form, in characters. */
export const MAX_FORM_WORDING_CHARS = 2_000;

/** Elements that flow inside a line: their text joins their neighbours'. */
const INLINE = new Set([
  'a',
  'abbr',
  'b',
  'code',
  'em',
  'i',
  'mark',
  's',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'u',
]);

/** The text a browser shows for these nodes (block boundaries as spaces). */
const shownText = (nodes: ChildNode[]): string =>
  nodes
    .map((node) => {
      if (DomUtils.isText(node)) return node.data;
      if (!DomUtils.isTag(node) || node.name === 'style') return ' ';
      if (node.name === 'input') {
        return node.attribs.type === 'submit'
          ? ` ${node.attribs.value ?? 'Submit'} `
          : ' ';
      }
      const inner = shownText(node.children);
      return INLINE.has(node.name) ? inner : ` ${inner} `;
    })
    .join('');

/** What a pasted page's form says and asks, read from its sanitized HTML. */
export interface PastedForm {
  /** The optional names its form has a visible input for. */
  fields: { firstName: boolean; lastName: boolean };
  /**
   * The text of its form (labels, paragraphs, the button), what a person
   * reads next to the fields: the consent wording its sign-ups record. At
   * most 2,000 characters; a longer text is cut, with an ellipsis.
   */
  wording: string;
}

/** Reads what the form of sanitized pasted HTML asks and says. */
export const readPastedForm = (safeHtml: string): PastedForm => {
  const [form] = elementsNamed(parseDocument(safeHtml), 'form');
  const asked = new Set(
    (form ? fieldInputsOf(form) : [])
      .filter(([, input]) => input.attribs.type !== 'checkbox')
      .map(([field]) => field),
  );
  const text = form ? shownText(form.children).replace(/\s+/g, ' ').trim() : '';
  return {
    fields: {
      firstName: asked.has('firstName'),
      lastName: asked.has('lastName'),
    },
    wording:
      text.length > MAX_FORM_WORDING_CHARS
        ? `${text.slice(0, MAX_FORM_WORDING_CHARS - 1)}…`
        : text,
  };
};

/**
 * The form for this request: values back in their fields, each error next
 * to its field (and listed at the top), our hidden inputs, the honeypot and
 * the CAPTCHA widget.
 */
const prepareForm = (form: Element, state: FormState): void => {
  // The server checks the fields and answers its errors in text beside
  // them; a browser's own check (a `required` or `type="email"` input)
  // would stop the post with a transient bubble instead, as in the themes.
  form.attribs.novalidate = '';

  // 1. Our hidden inputs win over the page's of the same name.
  const ours = new Set([
    ...Object.keys(state.hidden),
    state.honeypot,
    ...Object.values(CAPTCHA_RESPONSE_FIELDS),
  ]);
  for (const input of elementsNamed(form, 'input', (input) =>
    ours.has(input.attribs.name ?? ''),
  )) {
    DomUtils.removeElement(input);
  }

  // 2. Values and errors on the fields; the first invalid one takes focus.
  const inputs = fieldInputsOf(form);
  let focused = false;
  for (const [field, input] of inputs) {
    const value = state.values[field];
    if (value !== undefined && input.attribs.type !== 'checkbox') {
      input.attribs.value = value;
    }
    const error = state.errors[field];
    if (!error) continue;
    input.attribs.id ??= `signup-${field}`;
    input.attribs['aria-invalid'] = 'true';
    input.attribs['aria-describedby'] = [
      input.attribs['aria-describedby'],
      errorIdOf(field),
    ]
      .filter(Boolean)
      .join(' ');
    if (!focused) input.attribs.autofocus = '';
    focused = true;
    insertBefore(
      input,
      `<span class="signup-field-error" id="${errorIdOf(field)}">${escapeHtml(error)}</span>`,
    );
  }

  // 3. The CAPTCHA widget just before the submit button.
  const widget = captchaWidgetHtml(state.captcha);
  const [submit] = DomUtils.findAll(isSubmit, form.children);
  if (widget && submit) insertBefore(submit, widget);
  else if (widget) appendTo(form, widget);

  // 4. At the top: the error summary, our hidden inputs, the honeypot.
  const idOf = (field: SignupField) =>
    inputs.find(([name]) => name === field)?.[1].attribs.id;
  prependTo(
    form,
    errorSummaryHtml(state.errors, idOf) +
      hiddenInputsHtml(state.hidden) +
      honeypotHtml(state.honeypot),
  );
};

// Our few defaults; the page's own styles come after and may restyle them.
const PASTED_CSS = `${HONEYPOT_CSS}.signup-error-summary{margin:0 0 1rem;padding:.75rem 1rem;border:3px solid #b42318}.signup-error-summary-title{margin:0 0 .25rem;font-size:1.125rem}.signup-field-error{display:block;margin:.25rem 0;font-weight:600;color:#b42318}.signup-success{padding:1rem 0}`;

/** The whole served document of a pasted page: the stored safe HTML in our document shell (charset, viewport, title, lang), with our hidden inputs and honeypot injected into its form, the field errors shown as text in the form (a role="alert" block at the form's top listing them, and aria-invalid + aria-describedby on the fields it can find by name, autofocus on the first), and, when state.done, the form replaced by the success message in role="status". */
export const renderPastedPage = (
  safeHtml: string,
  content: PageContent,
  state: FormState,
  meta: PageMeta,
): string => {
  const document = parseDocument(safeHtml);
  neutralizeStyles(document);
  // The page's styles go to the head, after ours.
  const styles = elementsNamed(document, 'style');
  for (const style of styles) DomUtils.removeElement(style);

  const [form] = elementsNamed(document, 'form');
  if (form && state.done) {
    const success = nodesOf(successHtml(content.successMessage));
    for (const node of success) DomUtils.prepend(form, node);
    DomUtils.removeElement(form);
  } else if (form) {
    prepareForm(form, state);
  }

  // One <main> landmark: the page's own, or one around it all.
  const body = serialize(document.children);
  const hasMain = elementsNamed(document, 'main').length > 0;
  return documentHtml({
    lang: meta.lang,
    title: meta.title,
    head: `<style>${PASTED_CSS}</style>${serialize(styles)}`,
    body: [
      hasMain ? body : `<main>${body}</main>`,
      state.done ? '' : captchaScriptHtml(state.captcha),
    ].join('\n'),
  });
};
