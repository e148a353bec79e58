/**
 * The rendering engines proper, apart from `engine.ts` so that they load
 * only when a template is first analysed or rendered: Liquid (liquidjs)
 * with our limits, and html-to-text for the text part of every email
 * (`text-part.ts`).
 */
import { type FilterImplOptions, filters, Liquid } from 'liquidjs';

export { htmlNesting } from './nesting.ts';
export { htmlToText, planTextPart } from './text-part.ts';

/** Templates never touch the file system: every include is set aside. */
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

type FilterHandler = Extract<FilterImplOptions, (...args: never) => unknown>;
type FilterThis = ThisParameterType<FilterHandler>;
/** Liquid's own `escape` (strings, numbers, arrays, drops alike). */
const liquidEscape = filters.escape as FilterHandler;

/**
 * HTML output: escaped, and its line breaks kept as `<br>` — a multi-line
 * value (a postal address) reads as its lines, not as one run of words.
 */
function escapeKeepingLines(this: FilterThis, value: unknown): string {
  return String(liquidEscape.call(this, value)).replace(
    /\r\n|\r|\n/g,
    '<br>\n',
  );
}

/** HTML: every output value is HTML-escaped, its line breaks kept. */
export const htmlEngine = new Liquid({
  ...limits,
  outputEscape: escapeKeepingLines,
});
// Liquid's own `newline_to_br` writes `<br />` that the output escaping
// would show as text: ours escapes its input and marks the result as HTML.
htmlEngine.registerFilter('newline_to_br', {
  handler: escapeKeepingLines,
  raw: true,
});

/** Subjects are plain text: no escaping there. */
export const textEngine = new Liquid(limits);
