/**
 * Reading rendered sign-up pages back as trees (htmlparser2, the parser
 * sanitize-html uses), so tests assert on elements and attributes rather
 * than on substrings.
 */
import type { Document, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';

/** The document an HTML string parses to. */
export const parse = (html: string): Document => parseDocument(html);

/** Every element of the tree, in document order. */
export const elements = (root: Document | Element): Element[] =>
  DomUtils.findAll(() => true, root.children);

/** The elements named `name`, in document order. */
export const named = (root: Document | Element, name: string): Element[] =>
  elements(root).filter((element) => element.name === name);

/** The one element matching `test`; fails the test when there is not one. */
export const only = (
  root: Document | Element,
  test: (element: Element) => boolean,
): Element => {
  const found = elements(root).filter(test);
  if (found.length !== 1) {
    throw new Error(`Expected one matching element, found ${found.length}`);
  }
  return found[0] as Element;
};

/** The element with this id, if any. */
export const byId = (
  root: Document | Element,
  id: string,
): Element | undefined =>
  elements(root).find((element) => element.attribs.id === id);

/** The text of an element, as a browser shows it (entities decoded). */
export const textOf = (element: Element): string =>
  DomUtils.textContent(element).replace(/\s+/g, ' ').trim();
