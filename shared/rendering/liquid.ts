/**
 * The rendering engines proper, apart from `engine.ts` so that they load
 * only when a template is first analysed or rendered: Liquid (liquidjs)
 * with our limits, and html-to-text for the text part of every email
 * (`text-part.ts`).
 */
import { Liquid } from 'liquidjs';

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

/** HTML: every output value is HTML-escaped. */
export const htmlEngine = new Liquid({ ...limits, outputEscape: 'escape' });

/** Subjects are plain text: no escaping there. */
export const textEngine = new Liquid(limits);
