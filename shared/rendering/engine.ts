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
 * set aside before parsing and put back verbatim afterwards: they stay raw
 * in the output and are reported as unsupported tags.
 */
import { convert } from 'html-to-text';
import { Liquid } from 'liquidjs';
import { ValidationError } from '../errors.ts';

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

// Private-use characters: never typed by people, untouched by Liquid.
const OPEN = '\u{E000}';
const CLOSE = '\u{E001}';
const PLACEHOLDER = new RegExp(`${OPEN}(\\d+)${CLOSE}`, 'g');

/** A template with its foreign constructs set aside. */
interface Protected {
  source: string;
  constructs: string[];
}

const protect = (source: string): Protected => {
  const constructs: string[] = [];
  let text = source;
  for (const pattern of FOREIGN_CONSTRUCTS) {
    text = text.replace(pattern, (match) => {
      constructs.push(match);
      return `${OPEN}${constructs.length - 1}${CLOSE}`;
    });
  }
  return { source: text, constructs };
};

const restore = (rendered: string, constructs: string[]): string =>
  rendered.replace(
    PLACEHOLDER,
    (_, index: string) => constructs[Number(index)] ?? '',
  );

/** Templates never touch the file system: every include is set aside above. */
const noFiles = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => {
    throw new Error('templates cannot read files');
  },
  readFileSync: () => {
    throw new Error('templates cannot read files');
  },
  resolve: (_root: string, file: string) => file,
};

const limits = {
  ownPropertyOnly: true,
  strictFilters: true,
  // A loop of a billion iterations must not take a function down.
  parseLimit: 1_000_000,
  renderLimit: 2_000,
  memoryLimit: 20_000_000,
  fs: noFiles,
  relativeReference: false,
  cache: 200,
} as const;

const htmlEngine = new Liquid({ ...limits, outputEscape: 'escape' });
// Subjects are plain text: no escaping there.
const textEngine = new Liquid(limits);

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
export const analyzeTemplate = (
  source: string,
  field = 'content',
  what = 'content',
): TemplateAnalysis => {
  const { source: text, constructs } = protect(source);
  try {
    const parsed = htmlEngine.parse(text);
    return {
      variables: [...new Set(htmlEngine.globalVariablesSync(parsed))].sort(),
      unsupportedTags: [...new Set(constructs)],
    };
  } catch (error) {
    throw invalid(field, what, error);
  }
};

const render = async (
  liquid: Liquid,
  source: string,
  variables: Record<string, unknown>,
  field: string,
  what: string,
) => {
  const { source: text, constructs } = protect(source);
  try {
    return restore(await liquid.parseAndRender(text, variables), constructs);
  } catch (error) {
    throw invalid(field, what, error);
  }
};

/** Renders an HTML template; every output value is HTML-escaped. */
export const renderTemplate = (
  source: string,
  variables: Record<string, unknown>,
  what = 'content',
  field = 'content',
): Promise<string> => render(htmlEngine, source, variables, field, what);

/** Renders a plain-text template (a subject): nothing is escaped. */
export const renderText = (
  source: string,
  variables: Record<string, unknown>,
  what = 'subject',
  field = 'subject',
): Promise<string> => render(textEngine, source, variables, field, what);

/** The plain-text alternative of an HTML email. */
export const htmlToText = (html: string): string =>
  convert(html, {
    wordwrap: 78,
    selectors: [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true } }],
  });
