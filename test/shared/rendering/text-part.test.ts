import fc from 'fast-check';
import { convert } from 'html-to-text';
import { describe, expect, it } from 'vitest';
import { htmlEngine } from '../../../shared/rendering/liquid.ts';
import {
  htmlToText,
  planTextPart,
} from '../../../shared/rendering/text-part.ts';
import { NEWSLETTER_HTML } from '../../support/newsletter.ts';

/** html-to-text as the composer has always called it, per message. */
const perMessage = (html: string) =>
  convert(html, {
    wordwrap: 78,
    selectors: [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true } }],
  });

const NAMES = ['v0', 'v1', 'v2'];

/** A template's plan, rendering with the HTML engine as the composer does. */
const planOf = (template: string, names = NAMES) => {
  const parsed = htmlEngine.parse(template);
  const render = (values: Record<string, unknown>) =>
    htmlEngine.renderSync(parsed, values);
  return { plan: planTextPart(names, render), render };
};

const NEWSLETTER_NAMES = [
  'firstName',
  'email',
  'unsubscribeUrl',
  'topicOptOutUrl',
  'postalAddress',
  'currentYear',
];

describe('the text part and its plan', () => {
  it('converts as html-to-text does with our options', () => {
    // Arrange
    const html = `<h1>News</h1><p>Hi Ann, ${'word '.repeat(30)}<a href="https://a.test/x">Read</a></p>`;
    // Act, Assert
    expect(htmlToText(html)).toBe(perMessage(html));
  });

  it('makes a newsletter’s text for each recipient as html-to-text would, values of every length', () => {
    // Arrange
    const { plan, render } = planOf(NEWSLETTER_HTML, NEWSLETTER_NAMES);
    expect(plan).toBeDefined();
    for (let i = 0; i < 40; i++) {
      const values: Record<string, string> = {
        firstName: ['Ann', 'Marie-Christine de la Tour', '', 'Ω & <Co>'][
          i % 4
        ] as string,
        email: `${'x'.repeat(i * 3)}@example.test`,
        unsubscribeUrl: `https://mail.example.test/u?token=${'t'.repeat(200 + i)}`,
        topicOptOutUrl: `https://mail.example.test/t?token=${'t'.repeat(i)}`,
        postalAddress: `${i} Main Street, ${'Springfield '.repeat(i % 5)}`,
        currentYear: '2026',
      };
      // Act
      const text = plan?.((name) => values[name]);
      // Assert
      expect(text).toBe(perMessage(render(values)));
    }
  });

  it('refuses a plan where html-to-text would treat a value differently: headings, lists, quotes, pre, link text, image attributes, word-break opportunities', () => {
    for (const template of [
      '<h2>Hi {{ v0 }}</h2>',
      '<ul><li>Hi {{ v0 }}</li></ul>',
      '<blockquote>Hi {{ v0 }}</blockquote>',
      '<pre>Hi {{ v0 }}</pre>',
      '<a href="https://a.test/">{{ v0 }}</a>',
      '<img src="{{ v0 }}" alt="x">',
      '<img src="x.png" alt="{{ v0 }}">',
      '<ol start="{{ v0 }}"><li>one</li></ol>',
      '<p>Hi {{ v0 }}<wbr>there</p>',
      '<p>&am{{ v0 }}</p>',
      '<p>\ue001 {{ v0 }}</p>',
    ]) {
      expect(planOf(template).plan, template).toBeUndefined();
    }
  });

  it('leaves to html-to-text a recipient whose values it cannot place: a control character, a block left empty, an href like its text, empty, or a #fragment', () => {
    // Arrange
    const { plan } = planOf(
      '<p>{{ v0 }}</p><p><a href="{{ v1 }}">https://a.test/</a></p>',
    );
    const url = 'https://mail.test/u';
    // Act, Assert
    expect(plan?.((name) => ({ v0: 'Ann', v1: url })[name])).toBeDefined();
    for (const values of [
      { v0: 'Ann\tLee', v1: url },
      { v0: '', v1: url },
      { v0: '   ', v1: url },
      { v0: 'Ann', v1: 'https://a.test/' },
      { v0: 'Ann', v1: '' },
      { v0: 'Ann', v1: '#top' },
      { v0: 'Ann', v1: 'mailto:a@b.test' },
      { v0: 7, v1: url },
    ]) {
      expect(
        plan?.((name) => (values as Record<string, unknown>)[name]),
      ).toBeUndefined();
    }
  });

  it('gives html-to-text’s text whenever it gives one, for any template of blocks, links and values (property)', () => {
    // Arrange: templates of the constructs a newsletter holds and a few
    // html-to-text treats apart; values of any text, spaces, long words,
    // HTML specials and characters that change length in capitals.
    const word = fc.oneof(
      fc.constantFrom('Hi', 'the', 'newsletter,', '&amp;', '&nbsp;', '·', '.'),
      fc.string({
        minLength: 1,
        maxLength: 90,
        unit: fc.constantFrom('a', 'b', '-'),
      }),
    );
    const value = fc.constantFrom('{{ v0 }}', '{{v1}}', '{{- v2 -}}');
    const inline = fc
      .array(
        fc.oneof(
          { weight: 4, arbitrary: word },
          { weight: 3, arbitrary: value },
          fc.constantFrom(
            ' ',
            '\n  ',
            '<br>',
            '<b>bold {{ v0 }}</b>',
            '<a href="{{ v1 }}">Unsubscribe</a>',
            '<a href="https://x.test/?e={{ v2 }}&amp;k=1">read</a>',
            '<a href="{{ v0 }}">{{ v0 }}</a>',
            '<img src="https://x.test/i.png" alt="Logo">',
            '<span style="color:{{ v2 }}">·</span>',
          ),
        ),
        { maxLength: 14 },
      )
      .map((parts) => parts.join(' '));
    const block = fc.oneof(
      inline.map((s) => `<p>${s}</p>`),
      inline.map((s) => `<div>${s}</div>`),
      inline.map((s) => `<table><tr><td>${s}</td><td>${s}</td></tr></table>`),
      inline.map((s) => `<h3>${s}</h3>`),
      inline.map((s) => `<ul><li>${s}</li></ul>`),
      inline.map((s) => `<blockquote>${s}</blockquote>`),
      inline,
      fc.constant('<hr>'),
    );
    const template = fc
      .array(block, { minLength: 1, maxLength: 5 })
      .map((blocks) => blocks.join('\n'));
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ maxLength: 20, unit: 'binary' }),
      fc.string({
        maxLength: 120,
        unit: fc.constantFrom('a', ' ', 'ß', '&', '<', '"', "'", 'é'),
      }),
      fc.constantFrom(
        '',
        ' ',
        'Ann',
        'https://mail.test/u?t=abc',
        '#x',
        'mailto:a@b.c',
      ),
    );
    const values = fc.record({ v0: text, v1: text, v2: text });
    let planned = 0;
    fc.assert(
      fc.property(
        template,
        fc.array(values, { minLength: 1, maxLength: 4 }),
        (source, recipients) => {
          const { plan, render } = planOf(source);
          for (const recipient of recipients) {
            // Act
            const fast = plan?.(
              (name) => recipient[name as keyof typeof recipient],
            );
            // Assert
            if (fast === undefined) continue;
            planned++;
            expect(fast).toBe(perMessage(render(recipient)));
          }
        },
      ),
      { numRuns: 300 },
    );
    // The plan was used, not always refused.
    expect(planned).toBeGreaterThan(100);
  });
});
