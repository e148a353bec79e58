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
import type { Liquid } from 'liquidjs';
import { ValidationError } from '../errors.ts';
import { utf8Bytes } from '../validation.ts';

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
let engines: Promise<typeof import('./liquid.ts')> | undefined;
const loadEngines = () => {
  engines ??= import('./liquid.ts');
  return engines;
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
  /** Constructs that stay raw in the output. */
  unsupportedTags: string[];
}

/**
 * Parses a template and lists its variables and its unsupported constructs.
 * A syntax error is a `ValidationError` naming `field` and the problem.
 */
export const analyzeTemplate = async (
  source: string,
  field = 'content',
  what = 'content',
): Promise<TemplateAnalysis> => {
  const scanned = protect(source);
  checkCost(scanned, field, what);
  const { htmlEngine } = await loadEngines();
  try {
    // Parsed whole first, so that a syntax error tells its real place.
    htmlEngine.parse(scanned.source);
    // liquidjs finds each variable's line by reading the template from its
    // start: analysing only the markup (the HTML between names no variable)
    // keeps that cost to the markup's length, not the whole content's.
    const markupOnly = htmlEngine.parse(scanned.markup.join(''));
    return {
      variables: [
        ...new Set(htmlEngine.globalVariablesSync(markupOnly)),
      ].sort(),
      unsupportedTags: [...new Set(scanned.constructs)],
    };
  } catch (error) {
    throw invalid(field, what, error);
  }
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

const render = async (
  engineOf: (engines: typeof import('./liquid.ts')) => Liquid,
  source: string,
  variables: Record<string, unknown>,
  target: { field: string; what: string; maxBytes: number },
) => {
  const { field, what, maxBytes } = target;
  const scanned = protect(source);
  checkCost(scanned, field, what);
  const liquid = engineOf(await loadEngines());
  let output: string;
  try {
    output = await liquid.parseAndRender(scanned.source, variables);
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
 * Renders an HTML template; every output value is HTML-escaped. Output
 * past `MAX_RENDERED_HTML_BYTES` is a `ValidationError` naming `field`.
 */
export const renderTemplate = (
  source: string,
  variables: Record<string, unknown>,
  what = 'content',
  field = 'content',
): Promise<string> =>
  render((engines) => engines.htmlEngine, source, variables, {
    field,
    what,
    maxBytes: MAX_RENDERED_HTML_BYTES,
  });

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
  foldToLine(
    await render((engines) => engines.textEngine, source, variables, {
      field,
      what,
      maxBytes: MAX_RENDERED_SUBJECT_BYTES,
    }),
  );

/** The plain-text alternative of an HTML email. */
export const htmlToText = async (html: string): Promise<string> =>
  (await loadEngines()).htmlToText(html);
