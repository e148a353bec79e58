/**
 * The plain-text part of an email, derived from its HTML with html-to-text,
 * and its plan: the text of one template made once for all its recipients.
 *
 * html-to-text costs about as much as the rest of a message together (it
 * parses the whole HTML and lays every block out again), and for a
 * newsletter most of its output is the same for every recipient. A plan
 * converts the template once, with each merge value replaced by a sentinel
 * character, and keeps the lines that hold no sentinel as they are. A line
 * that holds one is a run of words html-to-text wraps on its own (the text
 * of a block between line breaks): per recipient, the plan puts the values
 * into its words and wraps it again as html-to-text does (greedy, at the
 * same width, a long word alone on its line).
 *
 * That equals html-to-text's own output only where nothing else depends on
 * the values, so a plan is refused (the caller converts per message) unless
 * every sentinel stands in ordinary text (no heading, which upper-cases; no
 * list, quote, pre or data table, which change the width; no link text,
 * compared with its href), in the href of a link in ordinary text, or in
 * an attribute html-to-text never reads (style, class…); a recipient's
 * values are refused (converted per message) when one holds a control
 * character or a sentinel, when a run of words would be empty (its block
 * would vanish), or when an href would change how the link is shown
 * (empty, `#…`, `mailto:`, the same as its text). The plan checks itself against html-to-text on
 * sample values before it is used.
 */
import { type ChildNode, type Element, isTag, isText } from 'domhandler';
import { compile } from 'html-to-text';
import { parseDocument } from 'htmlparser2';

/** Characters per line of the text part. */
const WORDWRAP = 78;

const TEXT_OPTIONS = {
  wordwrap: WORDWRAP,
  selectors: [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true } }],
};

/** The text part of an HTML email (the converter is compiled once). */
export const htmlToText: (html: string) => string = compile(TEXT_OPTIONS);

/** The same unwrapped: each run of words html-to-text wraps is a line. */
const htmlToUnwrappedText = compile({ ...TEXT_OPTIONS, wordwrap: false });

/** Sentinels are characters of the Private Use Area, one per variable. */
const SENTINEL_BASE = 0xe000;
const MAX_SENTINELS = 0x1000;
const SENTINEL = /[\ue000-\uefff]/;
const SENTINELS = /[\ue000-\uefff]/g;

/**
 * What a value may not hold to go through a plan: a control character
 * (html-to-text counts tabs and line breaks as spaces, the HTML parser may
 * rewrite some), a zero-width space (a space to html-to-text), a Private
 * Use character (a sentinel), a lone surrogate.
 */
const UNPLANNABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it refuses
  /[\u0000-\u001f\u007f-\u009f\u200b\ue000-\uf8ff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Elements whose text html-to-text lays out as plain words at the full width:
 * blocks without a prefix or a narrower width, and inline elements without a
 * transform. A sentinel inside any other element refuses the plan.
 */
const PLAIN_CONTEXTS = new Set([
  'html',
  'body',
  'div',
  'p',
  'span',
  'b',
  'strong',
  'em',
  'i',
  'u',
  's',
  'small',
  'big',
  'font',
  'center',
  'table',
  'tbody',
  'thead',
  'tfoot',
  'tr',
  'td',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'nav',
  'aside',
  'address',
  'sup',
  'sub',
  'mark',
  'code',
  'abbr',
  'cite',
  'time',
  'del',
  'ins',
  'strike',
  'tt',
  'label',
]);

/** Attributes html-to-text never reads: a value may stand there. */
const IGNORED_ATTRIBUTES = new Set([
  'style',
  'class',
  'id',
  'title',
  'width',
  'height',
  'align',
  'valign',
  'bgcolor',
  'color',
  'border',
  'cellpadding',
  'cellspacing',
  'role',
  'lang',
  'dir',
  'target',
  'rel',
  'name',
  'face',
]);

/** A link whose href holds a sentinel. */
interface PlannedLink {
  /** The href as html-to-text reads it (`mailto:` removed), with sentinels. */
  href: string;
  /** The link's text as html-to-text compares it with the href. */
  text: string;
}

/** html-to-text's reading of an href (it drops a leading `mailto:`). */
const hrefOf = (raw: string) => raw.replace(/^mailto:/, '');

/** A text node's words glued, as html-to-text compares a link's text. */
const gluedWords = (text: string) => text.replace(/[ \t\r\n\f\u200b]+/g, '');

/**
 * The text of a link whose content is plain text and plain inline
 * elements, without sentinels; undefined for any other.
 */
const constantLinkText = (link: Element): string | undefined => {
  let text = '';
  const visit = (nodes: ChildNode[]): boolean =>
    nodes.every((node) => {
      if (isText(node)) {
        text += gluedWords(node.data);
        return !SENTINEL.test(node.data);
      }
      if (isTag(node)) {
        return PLAIN_CONTEXTS.has(node.name) && visit(node.children);
      }
      return true;
    });
  return visit(link.children) ? text : undefined;
};

/**
 * Checks where the sentinels stand in the HTML and lists the links whose
 * href holds one; undefined when one stands where a plan cannot follow.
 */
const checkPlaces = (html: string): PlannedLink[] | undefined => {
  const links: PlannedLink[] = [];
  let plannable = true;
  const visit = (nodes: ChildNode[], plain: boolean) => {
    for (const node of nodes) {
      if (!plannable) return;
      if (isText(node)) {
        if (!plain && SENTINEL.test(node.data)) plannable = false;
      } else if (isTag(node)) {
        // A word-break opportunity wraps where a plan would not.
        if (node.name === 'wbr') plannable = false;
        for (const [name, value] of Object.entries(node.attribs)) {
          if (!SENTINEL.test(value) || IGNORED_ATTRIBUTES.has(name)) continue;
          const text =
            plain && node.name === 'a' && name === 'href'
              ? constantLinkText(node)
              : undefined;
          if (text === undefined) plannable = false;
          else links.push({ href: hrefOf(value), text });
        }
        // Link text is compared with its href: no sentinel there.
        visit(
          node.children,
          plain && node.name !== 'a' && PLAIN_CONTEXTS.has(node.name),
        );
      } else if ('children' in node) {
        visit(node.children, false);
      }
    }
  };
  visit(parseDocument(html, { decodeEntities: true }).children, true);
  return plannable ? links : undefined;
};

/** Wraps words as html-to-text does: greedy, a long word alone on its line. */
const wrap = (words: readonly string[]): string => {
  const lines: string[] = [];
  let line: string[] = [];
  let available = WORDWRAP;
  for (const word of words) {
    if (line.length > 0 && word.length + 1 > available) {
      lines.push(line.join(' '));
      line = [];
      available = WORDWRAP;
    }
    available -= word.length + (line.length > 0 ? 1 : 0);
    line.push(word);
  }
  lines.push(line.join(' '));
  return lines.join('\n');
};

/** A text with its sentinels replaced by the values they stand for. */
const withValues = (text: string, values: readonly string[]): string =>
  text.replace(
    SENTINELS,
    (sentinel) => values[sentinel.charCodeAt(0) - SENTINEL_BASE] ?? '',
  );

/** The words of a line (html-to-text joins them with one space). */
const wordsOf = (line: string): string[] =>
  line.split(' ').filter((word) => word !== '');

/**
 * The text part of one recipient's message, from their merge values by
 * name; undefined when the plan cannot make it (convert that message's HTML).
 */
export type TextPlan = (
  lookup: (name: string) => unknown,
) => string | undefined;

/** Sample values a plan must get right before it is used. */
const SAMPLES = [
  () => 'x',
  (i: number) => `https://example.test/${'a'.repeat(70 + i)}`,
  (i: number) =>
    `Ann & "Bo" <Cy> O'Neil ${'word '.repeat(i % 7)}de la Cruz-Smith, ${i}`,
];

/**
 * Makes the text plan of an HTML template whose merge values are the
 * variables `names`, each used as it is (no filter, no tag around it):
 * `render(values)` renders the template with values by name (escaped as in
 * the email). Undefined when the template cannot have one.
 */
export const planTextPart = (
  names: readonly string[],
  render: (values: Record<string, string>) => string,
): TextPlan | undefined => {
  if (names.length > MAX_SENTINELS) return undefined;
  const valuesOf = (value: (i: number) => string) =>
    Object.fromEntries(names.map((name, i) => [name, value(i)]));
  // The template itself must hold no sentinel character.
  if (SENTINEL.test(render(valuesOf(() => '')))) return undefined;
  const html = render(valuesOf((i) => String.fromCharCode(SENTINEL_BASE + i)));
  // A value after `&name` could end an entity the template began.
  if (/&[#0-9A-Za-z]*[\ue000-\uefff]/.test(html)) return undefined;
  const links = checkPlaces(html);
  if (!links) return undefined;

  // 1. Each unwrapped line that holds a sentinel is a run of words; find
  //    its wrapped lines in the wrapped text. The rest stays as it is.
  const wrapped = htmlToText(html);
  const parts: string[] = [];
  const runs: string[] = [];
  let from = 0;
  for (const run of htmlToUnwrappedText(html).split('\n')) {
    if (!SENTINEL.test(run)) continue;
    const lines = wrap(wordsOf(run));
    const at = wrapped.indexOf(lines, from);
    const end = at + lines.length;
    const whole =
      at >= 0 &&
      (at === 0 || wrapped[at - 1] === '\n') &&
      (end === wrapped.length || wrapped[end] === '\n');
    if (!whole) return undefined;
    parts.push(wrapped.slice(from, at));
    runs.push(run);
    from = end;
  }
  parts.push(wrapped.slice(from));
  if (parts.some((part) => SENTINEL.test(part))) return undefined;

  // 2. Per recipient: the values, the checks, the runs wrapped again.
  const plan: TextPlan = (lookup) => {
    const values: string[] = [];
    for (const name of names) {
      const value = lookup(name) ?? '';
      if (typeof value !== 'string' || UNPLANNABLE.test(value)) {
        return undefined;
      }
      values.push(value);
    }
    for (const link of links) {
      const href = withValues(link.href, values);
      if (
        hrefOf(href) !== href ||
        href === '' ||
        (href[0] === '#') !== (link.href[0] === '#') ||
        href === link.text
      ) {
        return undefined;
      }
    }
    let text = parts[0] ?? '';
    for (const [i, run] of runs.entries()) {
      const words = wordsOf(withValues(run, values));
      if (words.length === 0) return undefined;
      text += wrap(words) + parts[i + 1];
    }
    return text;
  };

  // 3. The plan must agree with html-to-text before it is trusted.
  for (const sample of SAMPLES) {
    const values = valuesOf(sample);
    const text = plan((name) => values[name]);
    if (text !== undefined && text !== htmlToText(render(values))) {
      return undefined;
    }
  }
  return plan;
};
