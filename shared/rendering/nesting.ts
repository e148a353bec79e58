/**
 * How deep HTML nests, read by htmlparser2 as a browser's parser reads it.
 * Loaded with the rendering engines and by the sign-up page sanitizer.
 */
import { Parser } from 'htmlparser2';

/**
 * How deep the elements of an HTML document nest, as a browser's parser
 * reads it (void elements and implied end tags closed): the converters
 * and serializers that walk a tree recurse once a level, and a few
 * thousand levels overflow their stack.
 */
export const htmlNesting = (html: string): number => {
  let depth = 0;
  let deepest = 0;
  const parser = new Parser(
    {
      onopentag: () => {
        depth += 1;
        deepest = Math.max(deepest, depth);
      },
      onclosetag: () => {
        depth -= 1;
      },
    },
    { decodeEntities: false },
  );
  parser.end(html);
  return deepest;
};
