/**
 * The one rendering engine: Liquid (liquidjs), the template language of Kit,
 * Keila and Shopify. We chose it because it is logic-light and sandboxed (no
 * code execution, no prototype access), has static analysis (which variables
 * a template uses), and limits on parse and render cost. Merge values are
 * HTML-escaped on output; the text part of every email is derived from its
 * HTML with html-to-text.
 *
 * Constructs of other platforms (Mailchimp's *|FNAME|*, Handlebars blocks,
 * AMPscript) and Liquid tags we do not run (include, render, layout…) are
 * wrapped in Liquid's own {% raw %} blocks before parsing: the engine emits
 * them verbatim, they are reported as unsupported tags, and nothing is ever
 * put back into the rendered output — so no merge value can turn into one.
 * Subjects render to one line: line breaks and controls fold to a space.
 *
 * The engines themselves (liquidjs, html-to-text: about 240 KB of code) are
 * in `liquid.ts`, imported when a template is first analysed or rendered,
 * so a function that never renders never loads them.
 */
import type { Liquid, Template } from 'liquidjs';
import { ValidationError } from '../errors.ts';
import { utf8Bytes } from '../validation.ts';
import type { TextPlan } from './text-part.ts';
import { FIELDS } from './variables.ts';

/** Patterns of constructs that stay raw, most specific first. */
const FOREIGN_CONSTRUCTS: RegExp[] = [
  // Mailchimp merge tags and conditionals: *|FNAME|*, *|IF:X|*, *|END:IF|*
  /\*\|[^|\s][^|]{0,100}\|\*/g,
  // Handlebars / Mustache: {{{raw}}}, {{#each}}, {{/if}}, {{^x}}, {{> partial}}, {{!-- --}}, {{else}}
  /\{\{\{[^}]{0,200}\}\}\}/g,
  /\{\{\s*[#/^>!][^}]{0,200}\}\}/g,
  /\{\{\s*else\s*\}\}/g,
  // Salesforce AMPscript: %%[ … ]%% and %%=…=%%
  /%%\[[\s\S]{0,2000}?\]%%/g,
  /%%=[\s\S]{0,500}?=%%/g,
  // Liquid tags that need files or a theme: never run here
  /\{%-?\s*(?:include|render|layout|block|endblock|section|sections|form|endform|javascript|stylesheet|schema|endschema)\b[\s\S]{0,500}?-?%\}/g,
];

/** The same patterns, anchored: each is tried where the scan stands. */
const FOREIGN_AT = FOREIGN_CONSTRUCTS.map(
  (pattern) => new RegExp(pattern.source, 'y'),
);

/** The foreign construct that starts at `at`, if one does. */
const foreignAt = (source: string, at: number): string | undefined => {
  for (const pattern of FOREIGN_AT) {
    pattern.lastIndex = at;
    const match = pattern.exec(source);
    if (match) return match[0];
  }
  return undefined;
};

const RAW_TAG = /\{%-?\s*raw\s*-?%\}/y;
const END_RAW = /\{%\s*endraw\b/g;

/**
 * Where the Liquid markup starting at `at` ends: `at` itself when none
 * starts there, -1 when it is never closed (Liquid then reports it). It is
 * stepped over whole, as Liquid's tokenizer reads it, so a construct-like
 * text inside a Liquid string or a user's own raw block stays Liquid's.
 */
const liquidMarkupEnd = (source: string, at: number): number => {
  if (source.startsWith('{{', at)) {
    // An output ends at the first }} outside a quoted string.
    for (let i = at + 2; i < source.length; i++) {
      const char = source[i];
      if (char === '"' || char === "'") {
        i = source.indexOf(char, i + 1);
        if (i === -1) return -1;
      } else if (source.startsWith('}}', i)) {
        return i + 2;
      }
    }
    return -1;
  }
  if (source.startsWith('{%', at)) {
    RAW_TAG.lastIndex = at;
    let from = at + 2;
    if (RAW_TAG.test(source)) {
      END_RAW.lastIndex = RAW_TAG.lastIndex;
      if (!END_RAW.exec(source)) return -1;
      from = END_RAW.lastIndex;
    }
    const end = source.indexOf('%}', from);
    return end === -1 ? -1 : end + 2;
  }
  return at;
};

/**
 * A construct inside a raw block. A raw block ends at the first `{%`
 * followed by `endraw`, so every `{%` of the construct is cut between its
 * two characters: `{` closes one raw block, `%` opens the next.
 */
const asRaw = (construct: string): string =>
  `{% raw %}${construct.replaceAll('{%', '{{% endraw %}{% raw %}%')}{% endraw %}`;

/** A template whose foreign constructs are Liquid raw blocks. */
interface Protected {
  source: string;
  constructs: string[];
  /** The template's own Liquid markup only, in order (see `analyzeTemplate`). */
  markup: string[];
}

/**
 * Scans the template once, left to right: a foreign construct is wrapped in
 * a raw block, Liquid markup is stepped over (and kept aside), the rest is
 * copied. Linear in the template's length (every pattern has a bounded
 * length).
 */
const protect = (source: string): Protected => {
  const constructs: string[] = [];
  const markup: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  let at = 0;
  while (at < source.length) {
    const char = source[at];
    if (char !== '*' && char !== '{' && char !== '%') {
      at++;
      continue;
    }
    const construct = foreignAt(source, at);
    if (construct !== undefined) {
      parts.push(source.slice(copied, at), asRaw(construct));
      constructs.push(construct);
      at += construct.length;
      copied = at;
      continue;
    }
    const end = liquidMarkupEnd(source, at);
    if (end === -1) {
      // Never closed: Liquid reports it; the rest is analysed as it stands.
      markup.push(source.slice(at));
      break;
    }
    if (end > at) markup.push(source.slice(at, end));
    at = Math.max(end, at + 1);
  }
  parts.push(source.slice(copied));
  return { source: parts.join(''), constructs, markup };
};

/**
 * Most Liquid tags and outputs, foreign constructs included, in one
 * template: parsing time grows faster than their number.
 */
export const MAX_MARKUP_COUNT = 5_000;

/**
 * Most characters of Liquid markup (tags and outputs, raw blocks included)
 * in one template: the static analysis costs about their length times the
 * number of variables they name.
 */
export const MAX_MARKUP_CHARS = 30_000;

/** Refuses a template past the limits above, naming `field`. */
const checkCost = (
  { constructs, markup }: Protected,
  field: string,
  what: string,
) => {
  const count = constructs.length + markup.length;
  const chars = markup.reduce((sum, part) => sum + part.length, 0);
  const problem =
    count > MAX_MARKUP_COUNT
      ? `must hold at most ${MAX_MARKUP_COUNT} Liquid tags, outputs and foreign constructs (it holds ${count})`
      : chars > MAX_MARKUP_CHARS
        ? `must hold at most ${MAX_MARKUP_CHARS} characters of Liquid tags and outputs (it holds ${chars})`
        : undefined;
  if (problem) {
    throw new ValidationError(`The ${what} is too complex: ${problem}`, [
      { field, message: problem },
    ]);
  }
};

/** The engines, loaded once per container when first needed. */
type Engines = typeof import('./liquid.ts');
let engines: Promise<Engines> | undefined;
const loadEngines = () => {
  engines ??= import('./liquid.ts');
  return engines;
};

/**
 * How deep elements may nest in content and pasted pages (an email nests a
 * few dozen levels): html-to-text and the HTML serializer recurse once a
 * level and overflow their stack past about 2,500.
 */
export const MAX_HTML_NESTING = 256;

/** Refuses content whose elements nest past `MAX_HTML_NESTING`. */
const checkNesting = (
  loaded: Engines,
  html: string,
  field: string,
  what: string,
) => {
  const depth = loaded.htmlNesting(html);
  if (depth <= MAX_HTML_NESTING) return;
  const message = `nests elements ${depth} levels deep; at most ${MAX_HTML_NESTING}`;
  throw new ValidationError(`The ${what} ${message}`, [{ field, message }], {
    code: 'template.invalid',
  });
};

/**
 * The text part of rendered HTML. A loop may nest what its template does
 * not: a converter that overflows its stack is the content's fault (400
 * naming the field), found without a second pass over every message.
 */
const textPart = (
  loaded: Engines,
  html: string,
  field = 'content',
  what = 'content',
): string => {
  try {
    return loaded.htmlToText(html);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    checkNesting(loaded, html, field, what);
    throw invalid(field, what, error);
  }
};

const invalid = (field: string, what: string, error: unknown) =>
  new ValidationError(
    `The ${what} is not a valid template: ${(error as Error).message}`,
    [{ field, message: `invalid template: ${(error as Error).message}` }],
    { cause: error, code: 'template.invalid' },
  );

/** What a template uses. */
export interface TemplateAnalysis {
  /** Root names of the variables it reads from the context. */
  variables: string[];
  /**
   * The custom field keys it reads by name (`{{ fields.<key> }}`,
   * `fields["<key>"]`), sorted: what `unknownVariables` checks against the
   * organization's fields.
   */
  fieldKeys: string[];
  /** Constructs that stay raw in the output. */
  unsupportedTags: string[];
}

/** The variables of a parsed template, as `TemplateAnalysis` lists them. */
const variablesOf = (
  liquid: Liquid,
  templates: Template[],
): Pick<TemplateAnalysis, 'variables' | 'fieldKeys'> => {
  // One static analysis gives both: each variable read, as its path.
  const paths = liquid.globalVariableSegmentsSync(templates);
  const roots = new Set<string>();
  const fieldKeys = new Set<string>();
  for (const [root, key] of paths) {
    if (typeof root !== 'string') continue;
    roots.add(root);
    // A key read through another variable (`fields[name]`) is not known
    // before a send: nothing to report.
    if (
      root === FIELDS &&
      (typeof key === 'string' || typeof key === 'number')
    ) {
      fieldKeys.add(String(key));
    }
  }
  return { variables: [...roots].sort(), fieldKeys: [...fieldKeys].sort() };
};

/**
 * Largest rendered HTML, in UTF-8 bytes. The engine's limits bound memory
 * it allocates and time, not output: a loop may print tens of megabytes,
 * more than a Lambda answer (6 MB) or a mailbox (Gmail clips at 102 KB)
 * takes.
 */
export const MAX_RENDERED_HTML_BYTES = 1_000_000;

/** Largest rendered subject, in UTF-8 bytes. */
export const MAX_RENDERED_SUBJECT_BYTES = 2_000;

/** Where a template stands, for the errors that name it. */
interface Target {
  field: string;
  what: string;
  maxBytes: number;
}

/** Parses a scanned template; a syntax error names the target. */
const parse = (liquid: Liquid, source: string, target: Target) => {
  try {
    return liquid.parse(source);
  } catch (error) {
    throw invalid(target.field, target.what, error);
  }
};

/** Renders parsed templates, at most `target.maxBytes` of output. */
const renderParsed = async (
  liquid: Liquid,
  templates: Template[],
  variables: Record<string, unknown>,
  { field, what, maxBytes }: Target,
) => {
  let output: string;
  try {
    output = await liquid.render(templates, variables);
  } catch (error) {
    throw invalid(field, what, error);
  }
  const bytes = utf8Bytes(output);
  if (bytes > maxBytes) {
    const problem = `renders to ${bytes} bytes, more than ${maxBytes}`;
    throw new ValidationError(`The ${what} ${problem}`, [
      { field, message: problem },
    ]);
  }
  return output;
};

/**
 * A Liquid output of one variable as it is: `{{ name }}`, `{{- name -}}`,
 * or of one custom field, `{{ fields.<key> }}` (a value, never an object:
 * the plan puts it in as it puts a name).
 */
const PLAIN_OUTPUT =
  /^\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*|fields\.[a-z][a-z0-9_]*)\s*-?\}\}$/;

/**
 * The variables of a template whose Liquid markup is only plain outputs
 * (foreign constructs aside); undefined when it has a tag or a filter.
 */
const plainOutputNames = (markup: readonly string[]) => {
  const names = new Set<string>();
  for (const part of markup) {
    const name = PLAIN_OUTPUT.exec(part)?.[1];
    if (name === undefined) return undefined;
    names.add(name);
  }
  // `{{ fields }}` beside `{{ fields.plan }}`: one name cannot be both a
  // value and the object holding another.
  if (names.has(FIELDS) && [...names].some((name) => name.includes('.'))) {
    return undefined;
  }
  return [...names];
};

/**
 * The value a plain output's name reads: a variable, or a custom field
 * (`fields.<key>`) in the `fields` object, own properties only (as the
 * engine reads them).
 */
const plainValue = (values: Record<string, unknown>, name: string): unknown => {
  const dot = name.indexOf('.');
  if (dot === -1) return Object.hasOwn(values, name) ? values[name] : undefined;
  const root = name.slice(0, dot);
  const holder = Object.hasOwn(values, root) ? values[root] : undefined;
  const key = name.slice(dot + 1);
  return typeof holder === 'object' &&
    holder !== null &&
    Object.hasOwn(holder, key)
    ? (holder as Record<string, unknown>)[key]
    : undefined;
};

/**
 * What a plain output prints of a value, before escaping: a number or a
 * boolean as the engine prints it (`String`), anything else as it is (the
 * plan refuses what is not a string).
 */
const printed = (value: unknown): unknown =>
  typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : value;

/** Values by plain output name, as the template reads them (nested). */
const nested = (values: Record<string, string>): Record<string, unknown> => {
  const context: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    const dot = name.indexOf('.');
    if (dot === -1) {
      context[name] = value;
      continue;
    }
    const root = name.slice(0, dot);
    const holder = (context[root] ?? {}) as Record<string, string>;
    holder[name.slice(dot + 1)] = value;
    context[root] = holder;
  }
  return context;
};

/**
 * An HTML template parsed and analysed once, to be rendered for many
 * recipients: what a batch of one campaign's mails shares.
 */
export interface PreparedTemplate extends TemplateAnalysis {
  /** Renders the template, as `renderTemplate` does. */
  render(variables: Record<string, unknown>): Promise<string>;
  /**
   * The plain-text part of `html`, which is this template rendered with
   * `variables`: what `htmlToText(html)` gives. From the second call on,
   * a template of plain outputs (no tag, no filter) makes it from a plan
   * made once (`text-part.ts`) instead of converting each HTML.
   */
  textOf(html: string, variables: Record<string, unknown>): string;
}

/**
 * Parses and analyses an HTML template once, refusing it as
 * `analyzeTemplate` does, for rendering it many times.
 */
export const prepareTemplate = async (
  source: string,
  field = 'content',
  what = 'content',
): Promise<PreparedTemplate> => {
  const target = { field, what, maxBytes: MAX_RENDERED_HTML_BYTES };
  const scanned = protect(source);
  checkCost(scanned, field, what);
  const loaded = await loadEngines();
  const { htmlEngine } = loaded;
  checkNesting(loaded, source, field, what);
  // Parsed whole first, so that a syntax error tells its real place.
  const templates = parse(htmlEngine, scanned.source, target);
  // liquidjs finds each variable's line by reading the template from its
  // start: analysing only the markup (the HTML between names no variable)
  // keeps that cost to the markup's length, not the whole content's.
  const markupOnly = parse(htmlEngine, scanned.markup.join(''), target);
  let used: Pick<TemplateAnalysis, 'variables' | 'fieldKeys'>;
  try {
    used = variablesOf(htmlEngine, markupOnly);
  } catch (error) {
    throw invalid(field, what, error);
  }

  const names = plainOutputNames(scanned.markup);
  let texts = 0;
  let plan: TextPlan | undefined;
  return {
    ...used,
    unsupportedTags: [...new Set(scanned.constructs)],
    render: (values) => renderParsed(htmlEngine, templates, values, target),
    textOf: (html, values) => {
      texts += 1;
      // A plan costs a few conversions: made for a second message, not one.
      if (texts === 2 && names) {
        plan = planOrNone(loaded, names, (sample) =>
          htmlEngine.renderSync(templates, nested(sample)),
        );
      }
      const planned = plan?.((name) => printed(plainValue(values, name)));
      return planned ?? textPart(loaded, html, field, what);
    },
  };
};

/** The template's text plan, or none when it cannot have one. */
const planOrNone = (
  loaded: Engines,
  names: readonly string[],
  render: (values: Record<string, string>) => string,
): TextPlan | undefined => {
  try {
    return loaded.planTextPart(names, render);
  } catch {
    // A sample the template cannot render (past its limits): no plan.
    return undefined;
  }
};

/**
 * Parses a template and lists its variables and its unsupported constructs.
 * A syntax error is a `ValidationError` naming `field` and the problem.
 */
export const analyzeTemplate = async (
  source: string,
  field = 'content',
  what = 'content',
): Promise<TemplateAnalysis> => {
  const { variables, fieldKeys, unsupportedTags } = await prepareTemplate(
    source,
    field,
    what,
  );
  return { variables, fieldKeys, unsupportedTags };
};

/**
 * Renders an HTML template; every output value is HTML-escaped. Output
 * past `MAX_RENDERED_HTML_BYTES` is a `ValidationError` naming `field`.
 */
export const renderTemplate = async (
  source: string,
  variables: Record<string, unknown>,
  what = 'content',
  field = 'content',
): Promise<string> => {
  const target = { field, what, maxBytes: MAX_RENDERED_HTML_BYTES };
  const scanned = protect(source);
  checkCost(scanned, field, what);
  const { htmlEngine } = await loadEngines();
  const templates = parse(htmlEngine, scanned.source, target);
  return renderParsed(htmlEngine, templates, variables, target);
};

// Every line break (CR, LF, NEL, U+2028, U+2029) and every other C0 or C1
// control: none may reach a mail header, where a line break starts a header.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this regex exists to find them
const LINE_BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * Folds a text to one line: each run of line breaks or control characters
 * becomes a single space. For what goes into a mail header (a subject, a
 * display name), whatever the stored data or the merge values hold.
 */
export const foldToLine = (text: string): string =>
  text.replace(LINE_BREAKS_AND_CONTROLS, ' ');

/** A one-line plain-text template (a subject) parsed once. */
export interface PreparedText
  extends Pick<TemplateAnalysis, 'variables' | 'fieldKeys'> {
  /** Renders it, as `renderText` does. */
  render(variables: Record<string, unknown>): Promise<string>;
}

/**
 * Parses a one-line plain-text template once, for rendering it many times.
 * A template that does not parse is refused when it is rendered, not here:
 * a message's subject is checked after its HTML has rendered.
 */
export const prepareText = async (
  source: string,
  what = 'subject',
  field = 'subject',
): Promise<PreparedText> => {
  const target = { field, what, maxBytes: MAX_RENDERED_SUBJECT_BYTES };
  const { textEngine } = await loadEngines();
  let templates: Template[];
  let used: Pick<TemplateAnalysis, 'variables' | 'fieldKeys'>;
  try {
    const scanned = protect(source);
    checkCost(scanned, field, what);
    templates = parse(textEngine, scanned.source, target);
    used = variablesOf(textEngine, templates);
  } catch (error) {
    return {
      variables: [],
      fieldKeys: [],
      render: () => Promise.reject(error),
    };
  }
  return {
    ...used,
    render: async (variables) =>
      foldToLine(await renderParsed(textEngine, templates, variables, target)),
  };
};

/**
 * Renders a one-line plain-text template (a subject): nothing is escaped,
 * and the result is folded to one line (`foldToLine`), so a merge value
 * holding "\r\nBcc: …" cannot add a header; at most
 * `MAX_RENDERED_SUBJECT_BYTES`.
 */
export const renderText = async (
  source: string,
  variables: Record<string, unknown>,
  what = 'subject',
  field = 'subject',
): Promise<string> =>
  (await prepareText(source, what, field)).render(variables);

/** The plain-text alternative of an HTML email. */
export const htmlToText = async (html: string): Promise<string> =>
  textPart(await loadEngines(), html);
