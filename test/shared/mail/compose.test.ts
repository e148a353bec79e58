import { convert } from 'html-to-text';
import { describe, expect, it } from 'vitest';
import { JoseLinkSigner } from '../../../shared/adapters/jose-link-signer.ts';
import { RuleViolationError, ValidationError } from '../../../shared/errors.ts';
import {
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
  publicLinkUrl,
} from '../../../shared/links/public-links.ts';
import {
  type ComposeInput,
  composeMessage,
  listUnsubscribeHeaders,
  type MessageContent,
  prepareMessage,
} from '../../../shared/mail/compose.ts';
import type { OutgoingMessage } from '../../../shared/ports.ts';
import {
  analyzeTemplate,
  renderTemplate,
  renderText,
} from '../../../shared/rendering/engine.ts';
import { fixedClock, TEST_LINK_SECRET } from '../../support/dynamo.ts';
import { aField, fieldsInMemory } from '../../support/fields.ts';
import { NEWSLETTER_HTML, TINY_HTML } from '../../support/newsletter.ts';

const clock = fixedClock();
const links = new JoseLinkSigner(async () => TEST_LINK_SECRET, clock);
const deps = {
  links,
  clock,
  fields: fieldsInMemory(),
  endpoints: {
    publicApiUrl: 'https://mail.example.test/api/v1',
    appFromAddress: 'no-reply@example.test',
    pagesUrl: 'https://pages.example.test',
  },
};
const contact = {
  id: '01a20000-0000-7000-8000-00000000c0de',
  email: 'ann@example.test',
  firstName: 'Ann <3',
};
const html =
  '<p>Hi {{firstName}}, {{email}}</p><p>{{postalAddress}} © {{currentYear}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? '';

describe('the message composer', () => {
  it('sets List-Unsubscribe (https) and List-Unsubscribe-Post for one-click (RFC 8058)', async () => {
    // Act
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News for {{firstName}}',
      html,
      from: 'Acme <news@acme.test>',
      postalAddress: '1 Main St',
    });
    // Assert
    const unsubscribe = /^<(https:\/\/[^>]+)>$/.exec(
      message.headers?.['List-Unsubscribe'] ?? '',
    )?.[1];
    expect(unsubscribe).toMatch(
      /^https:\/\/mail\.example\.test\/api\/v1\/public\/unsubscribe\?token=/,
    );
    expect(message.headers?.['List-Unsubscribe-Post']).toBe(
      'List-Unsubscribe=One-Click',
    );
    expect(message.html).toContain(
      `href="${unsubscribe?.replaceAll('&', '&amp;')}"`,
    );
    expect(
      await links.verify(LINK_PURPOSES.unsubscribe, tokenOf(unsubscribe ?? '')),
    ).toMatchObject({
      o: 'org-1',
      c: contact.id,
    });
  });

  it('A2: carries the Reply-To senderOf gives (the organization’s address while the From is the application’s)', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News',
      html,
      from: '"Acme" <no-reply@example.test>',
      replyTo: 'news@acme.test',
    });
    const withoutReplyTo = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News',
      html,
      from: 'Acme <news@acme.test>',
    });
    expect(message).toMatchObject({
      from: '"Acme" <no-reply@example.test>',
      replyTo: 'news@acme.test',
    });
    expect(withoutReplyTo).not.toHaveProperty('replyTo');
  });

  it('renders subject, escaped HTML and a text part with the contact and organization values', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News for {{firstName}}',
      html,
      from: 'Acme <news@acme.test>',
      postalAddress: '1 Main St',
    });
    expect(message).toMatchObject({
      from: 'Acme <news@acme.test>',
      to: 'ann@example.test',
      subject: 'News for Ann <3',
    });
    expect(message.html).toContain('Hi Ann &lt;3, ann@example.test');
    expect(message.html).toContain('1 Main St © 2026');
    expect(message.text).toContain('Hi Ann <3, ann@example.test');
    // Long links wrap onto their own line.
    expect(message.text).toMatch(
      /Unsubscribe\s+\[https:\/\/mail\.example\.test\/api\/v1\/public\/unsubscribe\?token=/,
    );
  });

  it('A4: no CR, LF or NUL in a mail header: a merge value folds to one line in the subject', async () => {
    // Arrange: a stored name and a caller value trying to add a header.
    const injected = 'a\r\nBcc: x@evil.test';
    // Act
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact: { ...contact, firstName: injected, lastName: 'b\u2028c\u0085d' },
      subject: 'News for {{firstName}} {{lastName}} {{coupon}}\r\n',
      html,
      from: 'Acme <news@acme.test>',
      variables: { coupon: 'x\u0000\nTo: y@evil.test' },
    });
    // Assert
    expect(message.subject).toBe(
      'News for a Bcc: x@evil.test b c d x To: y@evil.test ',
    );
    // The HTML keeps the value's lines, as <br>: harmless there.
    expect(message.html).toContain('Hi a<br>\nBcc: x@evil.test,');
  });

  it('refuses content with {{topicOptOutUrl}} when no topic is set', async () => {
    await expect(
      composeMessage(deps, {
        orgId: 'org-1',
        contact,
        subject: 's',
        html: `${html}<a href="{{topicOptOutUrl}}">Less of this</a>`,
        from: 'a@b.test',
      }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('signs a topic opt-out link naming the topic', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 's',
      html: '<a href="{{topicOptOutUrl}}">Less of this</a>',
      from: 'a@b.test',
      topicId: 'topic-9',
    });
    const url =
      /href="([^"]+)"/.exec(message.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(url).toContain('/public/topic-opt-out?token=');
    expect(
      await links.verify(LINK_PURPOSES.topicOptOut, tokenOf(url)),
    ).toMatchObject({
      o: 'org-1',
      c: contact.id,
      t: 'topic-9',
    });
  });

  it('lets no merge value replace the links', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 's',
      html,
      from: 'a@b.test',
      variables: { unsubscribeUrl: 'https://evil.test/' },
    });
    expect(message.html).not.toContain('evil.test');
  });

  it('marks the links of a test as test links', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact: { id: 'test', email: 'qa@example.test' },
      subject: 's',
      html,
      from: 'a@b.test',
      test: true,
    });
    const url =
      /<([^>]+)>/.exec(message.headers?.['List-Unsubscribe'] ?? '')?.[1] ?? '';
    expect(
      (await links.verify(LINK_PURPOSES.unsubscribe, tokenOf(url))).x,
    ).toBe('test');
  });
});

/**
 * The composer as it was before messages were prepared: everything per
 * message, the text part converted by html-to-text from each HTML. Kept
 * here only, as the reference the prepared path must equal byte for byte.
 */
const composedOneByOne = async (
  input: ComposeInput,
): Promise<OutgoingMessage> => {
  const { variables: used } = await analyzeTemplate(input.html);
  if (used.includes('topicOptOutUrl') && !input.topicId) {
    throw new RuleViolationError('message.topicRequired', 'no topic');
  }
  const claims = {
    o: input.orgId,
    c: input.contact.id,
    ...(input.campaignId ? { k: input.campaignId } : {}),
    ...(input.test ? { x: 'test' } : {}),
  };
  const sign = (purpose: string, extra: Record<string, string> = {}) =>
    links.sign(purpose, { ...claims, ...extra }, MESSAGE_LINK_TTL_SECONDS);
  const { publicApiUrl } = deps.endpoints;
  const unsubscribeUrl = publicLinkUrl(
    publicApiUrl,
    'unsubscribe',
    await sign(LINK_PURPOSES.unsubscribe),
  );
  const topicOptOutUrl =
    input.topicId && used.includes('topicOptOutUrl')
      ? publicLinkUrl(
          publicApiUrl,
          'topicOptOut',
          await sign(LINK_PURPOSES.topicOptOut, { t: input.topicId }),
        )
      : '';
  const variables = {
    firstName: input.contact.firstName ?? '',
    lastName: input.contact.lastName ?? '',
    email: input.contact.email,
    ...input.variables,
    unsubscribeUrl,
    topicOptOutUrl,
    postalAddress: input.postalAddress ?? '',
    currentYear: String(clock.now().getUTCFullYear()),
  };
  const html = await renderTemplate(input.html, variables);
  const subject = await renderText(input.subject, variables);
  return {
    from: input.from,
    ...(input.replyTo ? { replyTo: input.replyTo } : {}),
    to: input.contact.email,
    subject,
    html,
    text: convert(html, {
      wordwrap: 78,
      selectors: [
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    }),
    headers: listUnsubscribeHeaders(unsubscribeUrl),
    ...(input.tenantName ? { tenantName: input.tenantName } : {}),
  };
};

/** Contents of every kind a send meets. */
const CORPUS: MessageContent[] = [
  {
    orgId: 'org-1',
    subject: 'November at Acme, {{ firstName }}',
    html: NEWSLETTER_HTML,
    from: 'Acme <news@acme.test>',
    postalAddress: '1 Main St, Springfield',
    topicId: 'topic-1',
    campaignId: 'campaign-1',
    tenantName: 'org-1-tenant',
  },
  {
    orgId: 'org-1',
    subject: 'Sale',
    html: TINY_HTML,
    from: '"Acme" <no-reply@example.test>',
    replyTo: 'news@acme.test',
  },
  {
    orgId: 'org-2',
    subject: 'Hi *|FNAME|* {{ lastName }}\r\nBcc: x@evil.test',
    html: '<p>Hi *|FNAME|*, {{#each items}}{{name}}{{/each}} {{{raw}}} %%=v(@x)=%% {% include "footer" %} {{ firstName }} {{ lastName }}</p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>',
    from: 'a@b.test',
  },
  {
    orgId: 'org-2',
    subject:
      '{% if firstName %}{{ firstName | upcase }}{% else %}Friend{% endif %}: news',
    html: '{% if firstName %}<p>Hi {{ firstName | capitalize }},</p>{% else %}<p>Hi there,</p>{% endif %}<p>{{ coupon }}</p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>',
    from: 'a@b.test',
    postalAddress: '2 High St',
  },
  {
    orgId: 'org-3',
    subject: '{% raw %}{{ firstName }}{% endraw %} {{ coupon }}',
    html: '{% raw %}<p>{{ firstName }}</p>{% endraw %}<p>{{ email }} &amp; {{ coupon }}</p><p><a href="{{ topicOptOutUrl }}">Less of this</a> <a href="{{ unsubscribeUrl }}">{{ unsubscribeUrl }}</a></p><p>{{ postalAddress }}<br>© {{ currentYear }}</p>',
    from: 'a@b.test',
    topicId: 'topic-9',
    postalAddress: 'Rue de la Paix 1, Paris',
  },
  {
    orgId: 'org-3',
    subject: 'Test {{ firstName }}',
    html: `<h1>Hello {{ firstName }}</h1><ul><li>{{ email }}</li></ul><blockquote>${'quoted words '.repeat(12)}{{ lastName }}</blockquote><p>${'A long paragraph of plain words '.repeat(6)}{{ firstName }} {{ lastName }} ${'and more words '.repeat(8)}</p><p><a href="{{ topicOptOutUrl }}">Fewer</a> <a href="{{ unsubscribeUrl }}">Unsubscribe</a></p>`,
    from: 'a@b.test',
    topicId: 'test',
    test: true,
  },
];

/** Recipients: HTML specials, missing and long names, line breaks. */
const RECIPIENTS: [ComposeInput['contact'], Record<string, unknown>?][] = [
  [{ id: 'c-1', email: 'ann@example.test', firstName: 'Ann <3' }],
  [
    {
      id: 'c-2',
      email: 'o.neil@example.test',
      firstName: `O'Neil & "Co"`,
      lastName: 'Smith-Jones',
    },
    { coupon: '<b>50%</b> & more' },
  ],
  [{ id: 'c-3', email: 'nobody@example.test' }],
  [
    {
      id: 'c-4',
      email: `${'long'.repeat(20)}@example.test`,
      firstName: 'Marie-Christine Élodie de la Tour du Pin',
      lastName: 'ß'.repeat(30),
    },
    { coupon: 42 },
  ],
  [
    {
      id: 'c-5',
      email: 'inject@example.test',
      firstName: 'a\r\nBcc: x@evil.test',
      lastName: '  ',
    },
    {
      coupon: 'x\u0000\nTo: y@evil.test',
      unsubscribeUrl: 'https://evil.test/',
    },
  ],
  [{ id: 'c-6', email: 'bo@example.test', firstName: 'Bo', lastName: '' }],
];

describe('the prepared composer', () => {
  it('composes, for every recipient of a batch, the message composed one by one gave, byte for byte (corpus)', async () => {
    for (const content of CORPUS) {
      // Arrange
      const compose = await prepareMessage(deps, content);
      for (const [contact, variables] of RECIPIENTS) {
        // Act
        const message = await compose(contact, variables);
        // Assert
        expect(message, `${content.html.slice(0, 60)} → ${contact.id}`).toEqual(
          await composedOneByOne({ ...content, contact, variables }),
        );
      }
    }
  });

  it('composes as composeMessage does', async () => {
    // Arrange
    const content = CORPUS[0] as MessageContent;
    const [contact] = RECIPIENTS[1] ?? [];
    if (!contact) throw new Error('no recipient');
    // Act
    const compose = await prepareMessage(deps, content);
    await compose(contact);
    // Assert: the second message comes from the text plan.
    expect(await compose(contact)).toEqual(
      await composeMessage(deps, { ...content, contact }),
    );
  });

  it('refuses content with {{topicOptOutUrl}} and no topic once, before any recipient', async () => {
    await expect(
      prepareMessage(deps, {
        orgId: 'org-1',
        subject: 's',
        html: '<a href="{{ topicOptOutUrl }}">Less</a>',
        from: 'a@b.test',
      }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('refuses a subject that does not parse with each message, as composing one by one did', async () => {
    // Arrange
    const compose = await prepareMessage(deps, {
      orgId: 'org-1',
      subject: 'Hi {{ firstName',
      html,
      from: 'a@b.test',
    });
    // Act, Assert
    await expect(compose(contact)).rejects.toThrow(ValidationError);
    await expect(compose(contact)).rejects.toMatchObject({
      details: [{ field: 'subject' }],
    });
  });
});

describe('custom fields in the composer', () => {
  const FIELDS = [
    aField({ key: 'company', type: 'text' }),
    aField({
      key: 'plan',
      type: 'option',
      options: ['free', 'pro'],
      defaultValue: 'free',
    }),
    aField({ key: 'seats', type: 'number' }),
    aField({ key: 'vip', type: 'boolean' }),
  ];
  const content: MessageContent = {
    orgId: 'org-1',
    subject: '{{ fields.company }}: your {{ fields.plan }} plan',
    html: '<p>Hi {{ firstName }} of {{ fields.company }}, {{ fields.seats | default: "no" }} seats on {{ fields.plan }}{% if fields.vip %} (VIP){% endif %}.</p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>',
    from: 'a@b.test',
  };

  it('merges a contact’s values, escaped in the HTML as names are, plain in the subject and the text part', async () => {
    // Arrange
    const store = fieldsInMemory(FIELDS);
    const compose = await prepareMessage({ ...deps, fields: store }, content);
    // Act
    const message = await compose({
      id: 'c-1',
      email: 'ann@example.test',
      firstName: '<b>&"',
      fields: { company: '<b>&"', plan: 'pro', seats: 12, vip: true },
    });
    // Assert
    expect(message.subject).toBe('<b>&": your pro plan');
    expect(message.html).toContain(
      '<p>Hi &lt;b&gt;&amp;&#34; of &lt;b&gt;&amp;&#34;, 12 seats on pro (VIP).</p>',
    );
    expect(message.text).toContain('Hi <b>&" of <b>&", 12 seats on pro (VIP).');
  });

  it('shows a field’s default to a contact without a value, else nothing (or Liquid’s default), and never a deleted field’s value', async () => {
    // Arrange
    const compose = await prepareMessage(
      { ...deps, fields: fieldsInMemory(FIELDS) },
      content,
    );
    // Act
    const message = await compose({
      id: 'c-2',
      email: 'bo@example.test',
      firstName: 'Bo',
      // `old` belonged to a field deleted since; `seats` is of another type.
      fields: { old: 'stale', seats: 'many' as unknown as number },
    });
    // Assert
    expect(message.subject).toBe(': your free plan');
    expect(message.html).toContain('<p>Hi Bo of , no seats on free.</p>');
    expect(message.html).not.toContain('stale');
  });

  it('reads the organization’s fields once per batch, whatever its size, and not at all for content that reads none', async () => {
    // Arrange
    const store = fieldsInMemory(FIELDS);
    const withFields = await prepareMessage(
      { ...deps, fields: store },
      content,
    );
    // Act
    for (let i = 0; i < 25; i++) {
      await withFields({
        id: `c-${i}`,
        email: `r${i}@example.test`,
        fields: { company: `Co ${i}` },
      });
    }
    const none = fieldsInMemory(FIELDS);
    const without = await prepareMessage(
      { ...deps, fields: none },
      { ...content, subject: 'News', html },
    );
    await without({ ...contact, fields: { company: 'Acme' } });
    // Assert
    expect(store.reads()).toBe(1);
    expect(none.reads()).toBe(0);
  });

  it('reads them not at all when the caller read them already, and merges a field the subject alone reads', async () => {
    // Arrange
    const store = fieldsInMemory(FIELDS);
    const definitions = new Map(FIELDS.map((f) => [f.key, f]));
    // Act
    const message = await composeMessage(
      { ...deps, fields: store },
      {
        ...content,
        html,
        subject: 'For {{ fields.company }}',
        contact: { ...contact, fields: { company: 'Acme' } },
        fieldDefinitions: definitions,
      },
    );
    // Assert
    expect(message.subject).toBe('For Acme');
    expect(store.reads()).toBe(0);
  });

  it('lets a preview’s fields.<key> values fill fields over the contact’s, but never replace the fields namespace', async () => {
    // Act
    const message = await composeMessage(
      { ...deps, fields: fieldsInMemory(FIELDS) },
      {
        ...content,
        contact: { id: 'test', email: 'qa@example.test' },
        variables: {
          'fields.company': 'Preview Co',
          'fields.seats': 3,
          fields: 'not an object',
          // Not a key: dropped, never the namespace's prototype.
          'fields.__proto__': 'x',
        },
        test: true,
      },
    );
    // Assert
    expect(message.subject).toBe('Preview Co: your free plan');
    expect(message.html).toContain('of Preview Co, 3 seats on free.');
  });
});
