/**
 * The one rendering engine: Liquid (liquidjs), the template language of Kit,
 * Keila and Shopify. Merge values are HTML-escaped on output; the text part
 * of every email is derived from its HTML with html-to-text.
 */
import { convert } from 'html-to-text';
import { Liquid } from 'liquidjs';
import { RuleViolationError } from '../errors.ts';

const engine = new Liquid({
  // Every {{value}} is HTML-escaped: merge values never inject markup.
  outputEscape: 'escape',
  // Templates may read only the variables given, not prototype members.
  ownPropertyOnly: true,
  strictFilters: true,
  cache: 200,
});

// Subjects are plain text: no escaping there.
const textEngine = new Liquid({
  ownPropertyOnly: true,
  strictFilters: true,
  cache: 200,
});

const render = async (
  liquid: Liquid,
  source: string,
  variables: Record<string, unknown>,
  what: string,
) => {
  try {
    return await liquid.parseAndRender(source, variables);
  } catch (error) {
    throw new RuleViolationError(
      'template.invalid',
      `The ${what} cannot be rendered: ${(error as Error).message}`,
      { cause: error },
    );
  }
};

/**
 * Renders a Liquid template with `variables`. A syntax error is a 400
 * naming the problem, never a 500.
 */
export const renderTemplate = async (
  source: string,
  variables: Record<string, unknown>,
  what = 'template',
): Promise<string> => render(engine, source, variables, what);

/** Renders a plain-text Liquid template (a subject): nothing is escaped. */
export const renderText = async (
  source: string,
  variables: Record<string, unknown>,
  what = 'subject',
): Promise<string> => render(textEngine, source, variables, what);

/** The plain-text alternative of an HTML email. */
export const htmlToText = (html: string): string =>
  convert(html, {
    wordwrap: 78,
    selectors: [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true } }],
  });
