import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import {
  analyzeTemplate,
  htmlToText,
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

  it('lists the variables a template uses, and which are unknown', () => {
    const { variables } = analyzeTemplate(
      '{{ firstName | default: "friend" }} {{ plan.name }} {% assign x = 1 %}{{ x }} {% if vip %}★{% endif %}',
    );
    expect(variables).toEqual(['firstName', 'plan', 'vip']);
    expect(unknownVariables(variables, MESSAGE_VARIABLES)).toEqual([
      'plan',
      'vip',
    ]);
  });

  it('keeps other platforms’ tags and unrun Liquid tags raw, and reports them', async () => {
    const source =
      '*|FNAME|* {{#if vip}}VIP{{/if}} {{{raw}}} %%=v(@x)=%% {% include "footer" %} {{ email }}';
    expect(analyzeTemplate(source).unsupportedTags).toEqual([
      '*|FNAME|*',
      '{{{raw}}}',
      '{{#if vip}}',
      '{{/if}}',
      '%%=v(@x)=%%',
      '{% include "footer" %}',
    ]);
    expect(await renderTemplate(source, { email: 'a@b.c' })).toBe(
      '*|FNAME|* {{#if vip}}VIP{{/if}} {{{raw}}} %%=v(@x)=%% {% include "footer" %} a@b.c',
    );
  });

  it('answers a syntax error with a ValidationError naming the field and the problem', () => {
    const error = (() => {
      try {
        analyzeTemplate('<p>{{ firstName </p>', 'content');
      } catch (e) {
        return e;
      }
    })();
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

  it('derives a plain-text part from HTML, links kept', () => {
    const text = htmlToText(
      '<h1>News</h1><p>Hello <b>Ann</b></p><p><a href="https://x.test/u">Unsubscribe</a></p>',
    );
    expect(text).toContain('NEWS');
    expect(text).toContain('Hello Ann');
    expect(text).toContain('Unsubscribe [https://x.test/u]');
  });
});
