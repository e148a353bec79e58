import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import {
  analyzeTemplate,
  foldToLine,
  htmlToText,
  MAX_MARKUP_CHARS,
  MAX_MARKUP_COUNT,
  MAX_RENDERED_HTML_BYTES,
  MAX_RENDERED_SUBJECT_BYTES,
  prepareTemplate,
  prepareText,
  renderTemplate,
  renderText,
} from '../../../shared/rendering/engine.ts';
import {
  MESSAGE_VARIABLES,
  unknownVariables,
} from '../../../shared/rendering/variables.ts';

describe('the rendering engine (Liquid)', () => {
  it('HTML-escapes every merge value, but not subjects', async () => {
    const values = { firstName: '<script>alert(1)</script> & "Co"' };
    expect(await renderTemplate('<p>Hi {{firstName}}</p>', values)).toBe(
      '<p>Hi &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;Co&#34;</p>',
    );
    expect(await renderText('Hi {{firstName}}', values)).toBe(
      'Hi <script>alert(1)</script> & "Co"',
    );
  });

  it('keeps a multi-line value’s lines as <br> in HTML, escaped, and Liquid’s newline_to_br is HTML, not text (issue 29, defect 7)', async () => {
    const values = { postalAddress: 'Acme <Ltd>\n1 Main St\r\nSpringfield' };
    const lines = 'Acme &lt;Ltd&gt;<br>\n1 Main St<br>\nSpringfield';
    expect(await renderTemplate('<p>{{postalAddress}}</p>', values)).toBe(
      `<p>${lines}</p>`,
    );
    expect(
      await renderTemplate('<p>{{postalAddress | newline_to_br}}</p>', values),
    ).toBe(`<p>${lines}</p>`);
    expect(await htmlToText(`<p>${lines}</p>`)).toBe(
      'Acme <Ltd>\n1 Main St\nSpringfield',
    );
    // A subject folds to one line, as before.
    expect(await renderText('{{postalAddress}}', values)).toBe(
      'Acme <Ltd> 1 Main St Springfield',
    );
  });

  it('refuses content nested past 256 levels (400 naming it), and a loop that nests past what html-to-text can walk is a 400 too, never a stack overflow', async () => {
    // Arrange
    const deep = (n: number) => `${'<div>'.repeat(n)}x${'</div>'.repeat(n)}`;
    const looped =
      '{% for i in (1..3000) %}<div>{% endfor %}x<a href="{{unsubscribeUrl}}">u</a>';
    // Act
    const refused = await analyzeTemplate(deep(257)).catch((e: unknown) => e);
    const prepared = await prepareTemplate(looped);
    const html = await prepared.render({ unsubscribeUrl: 'https://u.test' });
    const text = (() => {
      try {
        return prepared.textOf(html, {});
      } catch (error) {
        return error;
      }
    })();
    // Assert
    expect(await analyzeTemplate(deep(256))).toBeDefined();
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).details).toEqual([
      {
        field: 'content',
        message: 'nests elements 257 levels deep; at most 256',
      },
    ]);
    expect(text).toBeInstanceOf(ValidationError);
    expect((text as ValidationError).code).toBe('template.invalid');
    await expect(htmlToText(html)).rejects.toBeInstanceOf(ValidationError);
  });

  it('lists the variables a template uses, and which are unknown', async () => {
    const { variables } = await analyzeTemplate(
      '{{ firstName | default: "friend" }} {{ plan.name }} {% assign x = 1 %}{{ x }} {% if vip %}★{% endif %}',
    );
    expect(variables).toEqual(['firstName', 'plan', 'vip']);
    expect(unknownVariables(variables, MESSAGE_VARIABLES)).toEqual([
      'plan',
      'vip',
    ]);
  });

  it('lists the custom field keys a template reads by name, and reports as fields.<key> those the organization does not define', async () => {
    // Arrange
    const source =
      '{{ fields.plan | default: "free" }} {{ fields["seats"] }} {% if fields.vip %}★{% endif %} {{ fields[name] }} {% for f in fields %}{{ f }}{% endfor %} {{ fields.gone }}';
    // Act
    const { variables, fieldKeys } = await analyzeTemplate(source);
    // Assert
    expect(variables).toEqual(['fields', 'name']);
    expect(fieldKeys).toEqual(['gone', 'plan', 'seats', 'vip']);
    expect(
      unknownVariables(variables, MESSAGE_VARIABLES, {
        used: fieldKeys,
        defined: new Set(['plan', 'seats', 'vip', 'company']),
      }),
    ).toEqual(['fields.gone', 'name']);
    // Without the organization's fields (no message context), the
    // namespace itself is unknown, as any other name.
    expect(unknownVariables(variables, MESSAGE_VARIABLES)).toEqual([
      'fields',
      'name',
    ]);
  });

  it('analyses a subject’s custom fields as it prepares it', async () => {
    const prepared = await prepareText('{{ fields.plan }} for {{ firstName }}');
    expect(prepared.variables).toEqual(['fields', 'firstName']);
    expect(prepared.fieldKeys).toEqual(['plan']);
  });

  it('escapes a custom field value in HTML exactly as a name, and leaves it as it is in a subject', async () => {
    // Arrange
    const values = { firstName: '<b>&"', fields: { company: '<b>&"' } };
    // Act, Assert
    expect(
      await renderTemplate(
        '<p>{{ firstName }}|{{ fields.company }}</p>',
        values,
      ),
    ).toBe('<p>&lt;b&gt;&amp;&#34;|&lt;b&gt;&amp;&#34;</p>');
    expect(
      await renderText('{{ firstName }}|{{ fields.company }}', values),
    ).toBe('<b>&"|<b>&"');
  });

  it('renders a field value by type, and a missing one empty or through Liquid’s default filter', async () => {
    // Arrange
    const fields = { seats: 12, vip: false, renewal: '2027-02-28' };
    // Act
    const html = await renderTemplate(
      '{{ fields.seats }}|{{ fields.vip }}|{{ fields.renewal }}|{{ fields.plan }}|{{ fields.plan | default: "free" }}|{% if fields.seats > 10 %}big{% endif %}|{% if fields.vip %}vip{% else %}not vip{% endif %}',
      { fields },
    );
    // Assert
    expect(html).toBe('12|false|2027-02-28||free|big|not vip');
  });

  it('keeps other platforms’ tags and unrun Liquid tags raw, and reports them in order', async () => {
    const source =
      '*|FNAME|* {{#if vip}}VIP{{/if}} {{{raw}}} %%=v(@x)=%% {% include "footer" %} {{ email }}';
    expect((await analyzeTemplate(source)).unsupportedTags).toEqual([
      '*|FNAME|*',
      '{{#if vip}}',
      '{{/if}}',
      '{{{raw}}}',
      '%%=v(@x)=%%',
      '{% include "footer" %}',
    ]);
    expect(await renderTemplate(source, { email: 'a@b.c' })).toBe(
      '*|FNAME|* {{#if vip}}VIP{{/if}} {{{raw}}} %%=v(@x)=%% {% include "footer" %} a@b.c',
    );
  });

  it('A6: an escaped merge value stays inert, even when it holds a placeholder marker', async () => {
    // Arrange: the old engine's own placeholder of construct 0, and a breakout.
    const source =
      '<a title="{{ coupon }}">{% include "footer" %}</a> *|FNAME|* {{ coupon }}';
    const coupon = '\u{E000}0\u{E001}\u{E000}1\u{E001}"><script>';
    // Act
    const html = await renderTemplate(source, { coupon });
    const subject = await renderText(`Hi {{ coupon }} ${source}`, { coupon });
    // Assert: the value is escaped where it stands; the constructs appear
    // once each, only where the template has them.
    const escaped = '\u{E000}0\u{E001}\u{E000}1\u{E001}&#34;&gt;&lt;script&gt;';
    expect(html).toBe(
      `<a title="${escaped}">{% include "footer" %}</a> *|FNAME|* ${escaped}`,
    );
    expect(subject).toBe(
      `Hi ${coupon} <a title="${coupon}">{% include "footer" %}</a> *|FNAME|* ${coupon}`,
    );
  });

  it('A6: an escaped merge value stays inert, whatever it holds and wherever the template’s foreign constructs stand (property)', async () => {
    // Arrange: templates of plain text, foreign constructs and outputs of
    // one value; values of markers, construct pieces, quotes and any text.
    const entities: Record<string, string> = {
      '&': '&amp;',
      '<': '&lt;',
      '>': '&gt;',
      '"': '&#34;',
      "'": '&#39;',
    };
    // Escaped, line breaks kept as <br> (issue 29, defect 7).
    const escapeHtml = (raw: string) =>
      raw
        .replace(/[&<>"']/g, (c) => entities[c] ?? c)
        .replace(/\r\n|\r|\n/g, '<br>\n');
    const text = fc.string({
      unit: fc.constantFrom(
        'a',
        ' ',
        '<',
        '>',
        '"',
        "'",
        '=',
        '/',
        '&',
        '\u{E000}',
        '\u{E001}',
        '0',
        '1',
      ),
    });
    const construct = fc.constantFrom(
      '*|FNAME|*',
      '*|IF:VIP|*',
      '{{#if vip}}',
      '{{/if}}',
      '{{{raw}}}',
      '%%=v(@x)=%%',
      '%%[ set @a = "{%" ]%%',
      '{% include "footer" %}',
      '{% render "a{% endraw %}" %}',
    );
    const value = fc.oneof(
      fc.string({
        unit: fc.constantFrom(
          // The old engine's placeholders of constructs 0 and 1, whole.
          '\u{E000}0\u{E001}',
          '\u{E000}1\u{E001}',
          '\u{E000}',
          '\u{E001}',
          '0',
          '1',
          '2',
          '"',
          "'",
          '>',
          '<',
          '&',
          '*',
          '|',
          '{',
          '}',
          '%',
          ' ',
        ),
      }),
      fc.string({ unit: 'binary' }),
    );
    const part = fc.oneof(
      text.map((t) => ({ source: t, kind: 'text' as const })),
      construct.map((c) => ({ source: c, kind: 'construct' as const })),
      fc.constant({ source: '{{ v }}', kind: 'value' as const }),
    );
    // Act, Assert: the output is the template with each value escaped in
    // place; nothing else appears, nothing is put back.
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { maxLength: 8 }),
        value,
        async (parts, v) => {
          const source = parts.map((p) => p.source).join('');
          const expected = parts
            .map((p) => (p.kind === 'value' ? escapeHtml(v) : p.source))
            .join('');
          expect(await renderTemplate(source, { v })).toBe(expected);
        },
      ),
    );
  });

  it('keeps a foreign construct verbatim, even one holding Liquid markup or {% endraw %}', async () => {
    // Arrange
    const source =
      '*|{% endraw %}|* %%[ {{ x }} {%raw%} ]%% {% render "a{%" %} {{ y }}';
    // Act
    const html = await renderTemplate(source, { x: 'X', y: '<y>' });
    // Assert
    expect(html).toBe(
      '*|{% endraw %}|* %%[ {{ x }} {%raw%} ]%% {% render "a{%" %} &lt;y&gt;',
    );
    expect(await analyzeTemplate(source)).toEqual({
      variables: ['y'],
      fieldKeys: [],
      unsupportedTags: [
        '*|{% endraw %}|*',
        '%%[ {{ x }} {%raw%} ]%%',
        '{% render "a{%" %}',
      ],
    });
  });

  it('A6: leaves Liquid markup and the template’s own raw blocks to Liquid', async () => {
    // Arrange: construct-like text inside a Liquid string and a raw block.
    const source =
      '{{ firstName | default: "*|FNAME|*" }} {% raw %}*|X|* {{ y }}{% endraw %}';
    // Act
    const html = await renderTemplate(source, {});
    // Assert
    expect(html).toBe('*|FNAME|* *|X|* {{ y }}');
    expect(await analyzeTemplate(source)).toEqual({
      variables: ['firstName'],
      fieldKeys: [],
      unsupportedTags: [],
    });
  });

  it('A4: a subject renders to one line: line breaks and controls fold to one space', async () => {
    // Arrange
    const values = { firstName: 'a\r\nBcc: x@evil.test' };
    // Act
    const subject = await renderText(
      'Hi {{ firstName }}\u0085|\u2028|\u2029|\u0000\t|\u009b|\n',
      values,
    );
    // Assert
    expect(subject).toBe('Hi a Bcc: x@evil.test | | | | | ');
    expect(foldToLine('one\r\n\r\ntwo')).toBe('one two');
  });

  it('finds the variables of the markup alone as in the whole template: in comments, raw blocks, loops and after long HTML', async () => {
    // Arrange
    const source = `${'<p>text</p>'.repeat(1000)}{% comment %}{{ hidden }}{% endcomment %}{% raw %}{{ notAVariable }}{% endraw %}<p>{% for item in items %}{{ item.name }} {{ firstName }}{% endfor %}</p>{% assign x = lastName %}{{ x }}`;
    // Act
    const { variables } = await analyzeTemplate(source);
    // Assert
    expect(variables).toEqual(['firstName', 'items', 'lastName']);
  });

  it('a template holds at most 5,000 Liquid tags, outputs and foreign constructs, and 30,000 characters of Liquid markup: past either, a 400 naming the field', async () => {
    // Arrange
    const atCount = `${'{{x}}'.repeat(MAX_MARKUP_COUNT - 1)}*|X|*`;
    const pastCount = `${atCount}*|Y|*`;
    const atChars = `{{ ${'x'.repeat(MAX_MARKUP_CHARS - 6)} }}`;
    const pastChars = `<p>${atChars}{{}}</p>`;
    // Act
    const refused = await Promise.all([
      analyzeTemplate(pastCount, 'content').catch((error: unknown) => error),
      analyzeTemplate(pastChars, 'defaultSubject').catch(
        (error: unknown) => error,
      ),
    ]);
    const rendering = await renderText(pastCount, {}, 'subject').catch(
      (e: unknown) => e,
    );
    // Assert
    expect((await analyzeTemplate(atCount)).unsupportedTags).toEqual(['*|X|*']);
    expect((await analyzeTemplate(atChars)).variables).toHaveLength(1);
    expect(refused.map((e) => (e as ValidationError).details)).toEqual([
      [
        {
          field: 'content',
          message:
            'must hold at most 5000 Liquid tags, outputs and foreign constructs (it holds 5001)',
        },
      ],
      [
        {
          field: 'defaultSubject',
          message:
            'must hold at most 30000 characters of Liquid tags and outputs (it holds 30004)',
        },
      ],
    ]);
    expect(rendering).toBeInstanceOf(ValidationError);
    expect((rendering as ValidationError).details[0]?.field).toBe('subject');
  });

  it('HTML renders to at most 1,000,000 bytes and a subject to 2,000: more is a 400 naming the field, not an answer Lambda cannot carry', async () => {
    // Arrange: a loop whose output the engine's memory limit does not count.
    const loop = (times: number, body: string) =>
      `{% for i in (1..${times}) %}${body}{% endfor %}`;
    const kilobyte = { v: `${'€'.repeat(333)}x` };
    // Act
    const atLimits = [
      await renderTemplate(loop(1000, '{{ v }}'), kilobyte),
      await renderText(loop(1000, 'é'), {}),
    ];
    const refused = await Promise.all([
      renderTemplate(loop(1001, '{{ v }}'), kilobyte).catch((e: unknown) => e),
      renderText(
        loop(1001, 'é'),
        {},
        'default subject',
        'defaultSubject',
      ).catch((e: unknown) => e),
    ]);
    // Assert
    expect(atLimits.map((text) => Buffer.byteLength(text))).toEqual([
      MAX_RENDERED_HTML_BYTES,
      MAX_RENDERED_SUBJECT_BYTES,
    ]);
    expect(refused.map((e) => (e as ValidationError).details)).toEqual([
      [
        {
          field: 'content',
          message: 'renders to 1001000 bytes, more than 1000000',
        },
      ],
      [
        {
          field: 'defaultSubject',
          message: 'renders to 2002 bytes, more than 2000',
        },
      ],
    ]);
  });

  it('answers a syntax error with a ValidationError naming the field and the problem', async () => {
    const error = await analyzeTemplate(
      '<p>{{ firstName </p>',
      'content',
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details[0]).toMatchObject({
      field: 'content',
      message: expect.stringContaining('not closed'),
    });
  });

  it('stops a template that would loop for ever, instead of hanging', async () => {
    await expect(
      renderTemplate('{% for i in (1..100000000) %}{{ i }}{% endfor %}', {}),
    ).rejects.toThrow(ValidationError);
  });

  it('reads no files and no prototype members', async () => {
    expect(
      await renderTemplate('{{ email.constructor }}|{{ x.__proto__ }}', {
        email: 'e',
        x: {},
      }),
    ).toBe('|');
  });

  it('derives a plain-text part from HTML, links kept', async () => {
    const text = await htmlToText(
      '<h1>News</h1><p>Hello <b>Ann</b></p><p><a href="https://x.test/u">Unsubscribe</a></p>',
    );
    expect(text).toContain('NEWS');
    expect(text).toContain('Hello Ann');
    expect(text).toContain('Unsubscribe [https://x.test/u]');
  });
});

describe('a prepared template', () => {
  it('analyses, renders and converts as analyzeTemplate, renderTemplate and htmlToText do, message after message', async () => {
    // Arrange
    const source =
      '<p>Hi {{ firstName }}, *|FNAME|*</p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>';
    const prepared = await prepareTemplate(source);
    // Act, Assert
    expect({
      variables: prepared.variables,
      fieldKeys: prepared.fieldKeys,
      unsupportedTags: prepared.unsupportedTags,
    }).toEqual(await analyzeTemplate(source));
    for (const firstName of ['Ann', '<b>Bo</b> & Co', '', 'Ann\nLee']) {
      const values = { firstName, unsubscribeUrl: 'https://a.test/u?t=1' };
      const html = await prepared.render(values);
      expect(html).toBe(await renderTemplate(source, values));
      expect(prepared.textOf(html, values)).toBe(await htmlToText(html));
    }
  });

  it('makes the text part of plain custom field outputs from its plan as html-to-text would, whatever the values (numbers, booleans, HTML specials, missing)', async () => {
    // Arrange
    const source = `<p>Hi {{ firstName }} of {{ fields.company }}: ${'words to wrap '.repeat(8)}{{ fields.seats }} seats, VIP {{ fields.vip }}.</p><p><a href="https://x.test/{{ fields.plan }}">Your plan</a></p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>`;
    const prepared = await prepareTemplate(source);
    const recipients = [
      { company: 'Acme', seats: 12, vip: true, plan: 'pro' },
      { company: '<b>&"', seats: 0.5, vip: false, plan: 'free' },
      { company: 'Marie-Christine Élodie de la Tour du Pin', plan: 'x' },
      { company: 'a\nb', seats: 9007199254740991, plan: '' },
      {},
    ];
    // Act, Assert
    for (const fields of [...recipients, ...recipients]) {
      const values = {
        firstName: 'Ann',
        fields,
        unsubscribeUrl: 'https://a.test/u?t=1',
      };
      const html = await prepared.render(values);
      expect(prepared.textOf(html, values), JSON.stringify(fields)).toBe(
        await htmlToText(html),
      );
    }
    // The plan made the text, not a conversion: it never reads the HTML.
    const values = {
      firstName: 'Bo',
      fields: { company: 'Co & Co', seats: 3, vip: true, plan: 'pro' },
      unsubscribeUrl: 'https://a.test/u?t=2',
    };
    expect(prepared.textOf('', values)).toBe(
      await htmlToText(await prepared.render(values)),
    );
  });

  it('refuses a subject that does not parse when it renders, not when it is prepared', async () => {
    // Arrange
    const prepared = await prepareText('Hi {{ firstName');
    // Act, Assert
    await expect(prepared.render({})).rejects.toThrow(ValidationError);
    await expect(prepared.render({})).rejects.toThrow(
      (await renderText('Hi {{ firstName', {}).catch((error) => error)).message,
    );
  });
});
