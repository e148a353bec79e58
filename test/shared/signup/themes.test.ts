import type { Document, Element } from 'domhandler';
import { describe, expect, it } from 'vitest';
import {
  captchaSources,
  type FormState,
  isThemeName,
  type PageContent,
  type PageMeta,
  renderThemePage,
  THEMES,
} from '../../../shared/signup/themes.ts';
import { byId, elements, named, only, parse, textOf } from './dom.ts';

const CONTENT: PageContent = {
  headline: 'The Tuesday Letter',
  intro: 'One short email a week.\n\nNo spam, ever.',
  fields: { firstName: true, lastName: true },
  consentText:
    'By subscribing you agree to receive our newsletter. You can unsubscribe at any time.',
  submitLabel: 'Subscribe',
  successMessage:
    'Almost done: check your inbox and click the link to confirm.',
};

const STATE: FormState = {
  values: {},
  errors: {},
  hidden: { token: 'signed.fill.token' },
  honeypot: 'website',
  done: false,
};

const META: PageMeta = { title: 'Subscribe', organizationName: 'Acme Co' };

const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&';

const isVisibleInput = (element: { name: string; attribs: object }) =>
  element.name === 'input' &&
  (element.attribs as Record<string, string>).type !== 'hidden';

describe('the themes', () => {
  it('offers at least three themes, each with a label and a description', () => {
    // Arrange
    const names = THEMES.map((theme) => theme.name);

    // Act
    const known = names.map(isThemeName);

    // Assert
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(new Set(names).size).toBe(names.length);
    expect(known.every(Boolean)).toBe(true);
    expect(isThemeName('fancy')).toBe(false);
    for (const theme of THEMES) {
      expect(theme.label).not.toBe('');
      expect(theme.description).not.toBe('');
    }
  });

  it('names the CAPTCHA providers’ sources for the CSP, none without one', () => {
    // Arrange
    const turnstile = { provider: 'turnstile', siteKey: 'k' } as const;
    const hcaptcha = { provider: 'hcaptcha', siteKey: 'k' } as const;

    // Act
    const sources = [undefined, turnstile, hcaptcha].map(captchaSources);

    // Assert
    expect(sources).toEqual([
      { script: [], frame: [], connect: [] },
      {
        script: ['https://challenges.cloudflare.com'],
        frame: ['https://challenges.cloudflare.com'],
        connect: [],
      },
      {
        script: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
        frame: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
        connect: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
      },
    ]);
  });
});

describe.each(THEMES.map((theme) => theme.name))('the %s theme', (theme) => {
  it('renders a whole document: lang, title, one h1, a main landmark', async () => {
    // Act
    const english = parse(await renderThemePage(theme, CONTENT, STATE, META));
    const french = parse(
      await renderThemePage(theme, CONTENT, STATE, { ...META, lang: 'fr' }),
    );

    // Assert
    expect(only(english, (e) => e.name === 'html').attribs.lang).toBe('en');
    expect(only(french, (e) => e.name === 'html').attribs.lang).toBe('fr');
    expect(textOf(only(english, (e) => e.name === 'title'))).toBe('Subscribe');
    expect(textOf(only(english, (e) => e.name === 'h1'))).toBe(
      'The Tuesday Letter',
    );
    expect(named(english, 'main')).toHaveLength(1);
    expect(
      named(english, 'p')
        .map(textOf)
        .filter((text) => text.includes('spam') || text.includes('short')),
    ).toEqual(['One short email a week.', 'No spam, ever.']);
  });

  it('escapes hostile text in every content, meta and state value', async () => {
    // Arrange
    const content: PageContent = {
      headline: HOSTILE,
      intro: HOSTILE,
      fields: { firstName: true, lastName: true },
      consentText: HOSTILE,
      submitLabel: HOSTILE,
      successMessage: HOSTILE,
    };
    const state: FormState = {
      values: { email: HOSTILE, firstName: HOSTILE, lastName: HOSTILE },
      errors: { email: HOSTILE, firstName: HOSTILE },
      hidden: { [HOSTILE]: HOSTILE },
      honeypot: HOSTILE,
      done: false,
    };
    const meta = { title: HOSTILE, organizationName: HOSTILE, lang: HOSTILE };

    // Act
    const pages = [
      await renderThemePage(theme, content, state, meta),
      await renderThemePage(theme, content, { ...state, done: true }, meta),
    ].map(parse);

    // Assert: nothing became markup, every text reads as typed.
    for (const page of pages) {
      expect(named(page, 'script')).toEqual([]);
      expect(named(page, 'img')).toEqual([]);
      for (const element of elements(page)) {
        expect(
          Object.keys(element.attribs).filter((name) => name.startsWith('on')),
        ).toEqual([]);
      }
      expect(textOf(only(page, (e) => e.name === 'h1'))).toBe(HOSTILE);
      expect(textOf(only(page, (e) => e.name === 'title'))).toBe(HOSTILE);
    }
    const [form] = pages;
    if (!form) throw new Error('no page');
    expect(textOf(only(form, (e) => e.name === 'button'))).toBe(HOSTILE);
    expect(
      named(form, 'input')
        .filter((input) => input.attribs.name === 'email')
        .map((input) => input.attribs.value),
    ).toEqual([HOSTILE]);
    expect(
      named(form, 'input').find((input) => input.attribs.type === 'hidden')
        ?.attribs,
    ).toMatchObject({ name: HOSTILE, value: HOSTILE });
    expect(textOf(byId(form, 'signup-email-error') as never)).toBe(
      `Error: ${HOSTILE}`,
    );
  });

  it('labels every visible control with a <label for> and the right autocomplete', async () => {
    // Act
    const page = parse(await renderThemePage(theme, CONTENT, STATE, META));

    // Assert
    const labels = named(page, 'label');
    for (const input of named(page, 'input').filter(isVisibleInput)) {
      const label = labels.find((l) => l.attribs.for === input.attribs.id);
      expect(label, `label of ${input.attribs.name}`).toBeDefined();
      expect(textOf(label as never)).not.toBe('');
    }
    const byName = (name: string) =>
      only(page, (e) => e.name === 'input' && e.attribs.name === name).attribs;
    expect(byName('email')).toMatchObject({
      type: 'email',
      autocomplete: 'email',
      required: '',
    });
    expect(byName('firstName')).toMatchObject({
      type: 'text',
      autocomplete: 'given-name',
    });
    expect(byName('lastName')).toMatchObject({
      type: 'text',
      autocomplete: 'family-name',
    });
    expect(byName('firstName').required).toBeUndefined();
  });

  it('asks only the email when the names are not asked', async () => {
    // Arrange
    const content = {
      ...CONTENT,
      fields: { firstName: false, lastName: true },
    };

    // Act
    const page = parse(await renderThemePage(theme, content, STATE, META));

    // Assert
    expect(
      named(page, 'input')
        .filter(isVisibleInput)
        .map((input) => input.attribs.name),
    ).toEqual(['website', 'email', 'lastName']);
  });

  it('posts back to the page: method post, novalidate, no action, our hidden inputs', async () => {
    // Act
    const page = parse(
      await renderThemePage(
        theme,
        CONTENT,
        { ...STATE, hidden: { token: 't1', started: '42' } },
        META,
      ),
    );

    // Assert
    const form = only(page, (e) => e.name === 'form');
    expect(form.attribs.method).toBe('post');
    expect(form.attribs.novalidate).toBe('');
    expect(form.attribs).not.toHaveProperty('action');
    expect(
      named(form, 'input')
        .filter((input) => input.attribs.type === 'hidden')
        .map(({ attribs }) => [attribs.name, attribs.value]),
    ).toEqual([
      ['token', 't1'],
      ['started', '42'],
    ]);
    expect(only(form, (e) => e.name === 'button').attribs.type).toBe('submit');
  });

  it('hides the honeypot from everyone: aria-hidden, off-screen, out of the tab order', async () => {
    // Act
    const page = parse(await renderThemePage(theme, CONTENT, STATE, META));

    // Assert
    const input = only(
      page,
      (e) => e.name === 'input' && e.attribs.name === 'website',
    );
    expect(input.attribs).toMatchObject({
      type: 'text',
      tabindex: '-1',
      autocomplete: 'off',
      value: '',
    });
    const wrapper = input.parent as never as {
      attribs: Record<string, string>;
    };
    expect(wrapper.attribs['aria-hidden']).toBe('true');
    expect(wrapper.attribs.class).toBe('signup-hp');
    const style = textOf(only(page, (e) => e.name === 'style'));
    expect(style).toMatch(
      /\.signup-hp\{position:absolute!important;left:-10000px/,
    );
    const label = only(
      page,
      (e) => e.name === 'label' && e.attribs.for === input.attribs.id,
    );
    expect(textOf(label)).toBe('Leave this field empty');
  });

  it('ties each error to its field and focuses the first invalid one', async () => {
    // Arrange
    const state: FormState = {
      ...STATE,
      values: { email: 'ada@', lastName: 'Lovelace' },
      errors: {
        lastName: 'Enter a shorter last name',
        email: 'Enter an email address like name@example.com',
      },
    };

    // Act
    const page = parse(await renderThemePage(theme, CONTENT, state, META));

    // Assert
    const input = (name: string) =>
      only(page, (e) => e.name === 'input' && e.attribs.name === name);
    for (const [name, message] of [
      ['email', 'Enter an email address like name@example.com'],
      ['lastName', 'Enter a shorter last name'],
    ] as const) {
      const { attribs } = input(name);
      expect(attribs['aria-invalid']).toBe('true');
      const error = byId(page, attribs['aria-describedby'] ?? '');
      expect(textOf(error as never)).toBe(`Error: ${message}`);
    }
    expect(input('email').attribs.autofocus).toBe('');
    expect(input('lastName').attribs).not.toHaveProperty('autofocus');
    expect(input('firstName').attribs).not.toHaveProperty('aria-invalid');
    expect(input('email').attribs.value).toBe('ada@');
    expect(input('lastName').attribs.value).toBe('Lovelace');
    const summary = only(page, (e) => e.attribs.role === 'alert');
    expect(named(summary, 'a').map((a) => [a.attribs.href, textOf(a)])).toEqual(
      [
        ['#signup-email', 'Enter an email address like name@example.com'],
        ['#signup-lastName', 'Enter a shorter last name'],
      ],
    );
  });

  it('focuses a later field when it is the only invalid one, and shows no alert without errors', async () => {
    // Act
    const invalid = parse(
      await renderThemePage(
        theme,
        CONTENT,
        { ...STATE, errors: { firstName: 'Enter a shorter first name' } },
        META,
      ),
    );
    const valid = parse(await renderThemePage(theme, CONTENT, STATE, META));

    // Assert
    expect(
      named(invalid, 'input')
        .filter((input) => 'autofocus' in input.attribs)
        .map((input) => input.attribs.name),
    ).toEqual(['firstName']);
    expect(elements(valid).filter((e) => e.attribs.role === 'alert')).toEqual(
      [],
    );
    expect(elements(valid).filter((e) => 'aria-invalid' in e.attribs)).toEqual(
      [],
    );
    expect(elements(valid).filter((e) => 'autofocus' in e.attribs)).toEqual([]);
  });

  it('replaces the form by the success message in role=status once done', async () => {
    // Act
    const page = parse(
      await renderThemePage(
        theme,
        CONTENT,
        {
          ...STATE,
          done: true,
          captcha: { provider: 'turnstile', siteKey: 'k' },
        },
        META,
      ),
    );

    // Assert
    expect(named(page, 'form')).toEqual([]);
    expect(named(page, 'input')).toEqual([]);
    expect(named(page, 'script')).toEqual([]);
    const status = only(page, (e) => e.attribs.role === 'status');
    expect(textOf(status)).toBe(CONTENT.successMessage);
    expect(named(page, 'h1')).toHaveLength(1);
  });

  it('shows a CAPTCHA widget and its script only when one is configured', async () => {
    // Act
    const [none, turnstile, hcaptcha] = await Promise.all(
      [
        undefined,
        { provider: 'turnstile', siteKey: 'turnstile-key' } as const,
        { provider: 'hcaptcha', siteKey: 'hcaptcha-key' } as const,
      ].map(async (captcha) =>
        parse(
          await renderThemePage(
            theme,
            CONTENT,
            captcha ? { ...STATE, captcha } : STATE,
            META,
          ),
        ),
      ),
    );
    if (!none || !turnstile || !hcaptcha) throw new Error('missing page');

    // Assert
    const widgets = (page: Document | Element) =>
      elements(page).filter((e) => 'data-sitekey' in e.attribs);
    expect(named(none, 'script')).toEqual([]);
    expect(widgets(none)).toEqual([]);
    expect(widgets(turnstile).map((e) => e.attribs)).toEqual([
      { class: 'cf-turnstile', 'data-sitekey': 'turnstile-key' },
    ]);
    expect(named(turnstile, 'script').map((e) => e.attribs)).toEqual([
      {
        src: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
        async: '',
        defer: '',
      },
    ]);
    expect(widgets(hcaptcha).map((e) => e.attribs)).toEqual([
      { class: 'h-captcha', 'data-sitekey': 'hcaptcha-key' },
    ]);
    expect(named(hcaptcha, 'script').map((e) => e.attribs.src)).toEqual([
      'https://js.hcaptcha.com/1/api.js',
    ]);
    const form = only(turnstile, (e) => e.name === 'form');
    expect(widgets(form)).toHaveLength(1);
  });

  it('loads nothing from elsewhere: no external URL, font or stylesheet', async () => {
    // Act
    const html = await renderThemePage(
      theme,
      CONTENT,
      { ...STATE, errors: { email: 'Enter an email address' } },
      META,
    );
    const page = parse(html);

    // Assert
    for (const element of elements(page)) {
      for (const name of ['src', 'href', 'action', 'srcset', 'poster']) {
        const value = element.attribs[name];
        if (value !== undefined) expect(value).toMatch(/^#/);
      }
    }
    expect(named(page, 'link')).toEqual([]);
    expect(named(page, 'script')).toEqual([]);
    const css = named(page, 'style').map(textOf).join('\n');
    expect(css).not.toMatch(/url\(|@import|@font-face|https?:/i);
  });
});

/** A form asking one custom field of each type (issue 31). */
const CUSTOM: NonNullable<FormState['custom']> = {
  inputs: [
    { key: 'company', label: 'Company', type: 'text', required: true },
    { key: 'seats', label: 'Seats', type: 'number', required: false },
    { key: 'birthday', label: 'Birthday', type: 'date', required: false },
    {
      key: 'plan',
      label: 'Plan',
      type: 'option',
      options: ['Free', 'Pro'],
      required: true,
    },
    { key: 'vip', label: 'I am a VIP', type: 'boolean', required: false },
  ],
  values: {},
  errors: {},
};

describe.each(THEMES.map((theme) => theme.name))(
  'the %s theme: custom fields (issue 31)',
  (theme) => {
    const render = (state: FormState, content = CONTENT) =>
      renderThemePage(theme, content, state, META);

    it('draws one control per asked field, after the names, fitting its type, each labelled (label for=) and required when the page says so', async () => {
      // Act
      const page = parse(await render({ ...STATE, custom: CUSTOM }));

      // Assert
      const controls = elements(page).filter(
        (e) =>
          (e.name === 'input' || e.name === 'select') &&
          (e.attribs.name ?? '').startsWith('fields.'),
      );
      expect(
        controls.map(({ name, attribs }) => [
          attribs.name,
          name === 'select' ? 'select' : attribs.type,
          'required' in attribs,
        ]),
      ).toEqual([
        ['fields.company', 'text', true],
        ['fields.seats', 'number', false],
        ['fields.birthday', 'date', false],
        ['fields.plan', 'select', true],
        ['fields.vip', 'checkbox', false],
      ]);
      expect(
        named(page, 'input')
          .filter(isVisibleInput)
          .map((input) => input.attribs.name)
          .slice(0, 4),
      ).toEqual(['website', 'email', 'firstName', 'lastName']);
      const labels = named(page, 'label');
      for (const control of controls) {
        const label = labels.find((l) => l.attribs.for === control.attribs.id);
        expect(label, `label of ${control.attribs.name}`).toBeDefined();
      }
      const byName = (name: string) =>
        only(page, (e) => e.attribs.name === name).attribs;
      expect(byName('fields.company').maxlength).toBe('255');
      expect(byName('fields.seats').step).toBe('any');
      expect(byName('fields.birthday')).toMatchObject({
        min: '1000-01-01',
        max: '9999-12-31',
      });
      expect(byName('fields.vip').value).toBe('true');
      expect(
        named(page, 'option').map((o) => [o.attribs.value, textOf(o)]),
      ).toEqual([
        ['', 'Choose one'],
        ['Free', 'Free'],
        ['Pro', 'Pro'],
      ]);
      const labelOf = (name: string) =>
        textOf(labels.find((l) => l.attribs.for === byName(name).id) as never);
      expect(labelOf('fields.company')).toBe('Company');
      expect(labelOf('fields.seats')).toBe('Seats (optional)');
      expect(labelOf('fields.vip')).toBe('I am a VIP');
    });

    it('escapes the organization’s labels and options, and what was typed', async () => {
      // Arrange
      const custom: NonNullable<FormState['custom']> = {
        inputs: [
          { key: 'company', label: HOSTILE, type: 'text', required: false },
          {
            key: 'plan',
            label: HOSTILE,
            type: 'option',
            options: [HOSTILE, 'Pro'],
            required: false,
          },
          { key: 'vip', label: HOSTILE, type: 'boolean', required: false },
        ],
        values: { company: HOSTILE, plan: HOSTILE },
        errors: { company: HOSTILE },
      };

      // Act
      const page = parse(await render({ ...STATE, custom }));

      // Assert
      expect(named(page, 'script')).toEqual([]);
      expect(named(page, 'img')).toEqual([]);
      for (const element of elements(page)) {
        expect(
          Object.keys(element.attribs).filter((name) => name.startsWith('on')),
        ).toEqual([]);
      }
      expect(
        named(page, 'label')
          .map(textOf)
          .filter((text) => text.startsWith('<')),
      ).toEqual([`${HOSTILE} (optional)`, `${HOSTILE} (optional)`, HOSTILE]);
      const company = only(page, (e) => e.attribs.name === 'fields.company');
      expect(company.attribs.value).toBe(HOSTILE);
      const [, hostile] = named(page, 'option');
      expect(hostile?.attribs).toMatchObject({ value: HOSTILE, selected: '' });
      expect(textOf(hostile as never)).toBe(HOSTILE);
      expect(textOf(byId(page, 'signup-field-company-error') as never)).toBe(
        `Error: ${HOSTILE}`,
      );
    });

    it('ties each custom field’s error to it, lists it after the names’ and focuses it when no earlier field is invalid; keeps a ticked box and a choice', async () => {
      // Arrange
      const custom = {
        ...CUSTOM,
        values: { seats: 'ten', plan: 'Pro', vip: 'true' },
        errors: {
          seats: 'Seats: enter a number, like 42 or 3.5.',
          company: 'Company: this is required.',
        },
      };

      // Act
      const alone = parse(await render({ ...STATE, custom }));
      const withEmail = parse(
        await render({
          ...STATE,
          errors: { email: 'Enter your email address.' },
          custom,
        }),
      );

      // Assert
      const control = (name: string) =>
        only(alone, (e) => e.attribs.name === name).attribs;
      for (const [name, message] of [
        ['fields.company', 'Company: this is required.'],
        ['fields.seats', 'Seats: enter a number, like 42 or 3.5.'],
      ] as const) {
        const attribs = control(name);
        expect(attribs['aria-invalid']).toBe('true');
        expect(
          textOf(byId(alone, attribs['aria-describedby'] ?? '') as never),
        ).toBe(`Error: ${message}`);
      }
      expect(
        elements(alone)
          .filter((e) => 'autofocus' in e.attribs)
          .map((e) => e.attribs.name),
      ).toEqual(['fields.company']);
      expect(control('fields.seats').value).toBe('ten');
      expect(control('fields.vip').checked).toBe('');
      expect(
        named(alone, 'option')
          .filter((o) => 'selected' in o.attribs)
          .map((o) => o.attribs.value),
      ).toEqual(['Pro']);
      const summary = only(withEmail, (e) => e.attribs.role === 'alert');
      expect(
        named(summary, 'a').map((a) => [a.attribs.href, textOf(a)]),
      ).toEqual([
        ['#signup-email', 'Enter your email address.'],
        ['#signup-field-company', 'Company: this is required.'],
        ['#signup-field-seats', 'Seats: enter a number, like 42 or 3.5.'],
      ]);
      expect(
        elements(withEmail)
          .filter((e) => 'autofocus' in e.attribs)
          .map((e) => e.attribs.name),
      ).toEqual(['email']);
    });

    it('draws a form asking no custom field exactly as before: no control, no style of theirs', async () => {
      // Act
      const before = await render(STATE);
      const none = await render({
        ...STATE,
        custom: { inputs: [], values: {}, errors: {} },
      });
      const asked = await render({ ...STATE, custom: CUSTOM });

      // Assert
      expect(none).toBe(before);
      expect(before).not.toMatch(/select|field-checkbox|fields\./);
      expect(asked).toMatch(/\.field select\{/);
    });
  },
);
