/**
 * Sign-up pages in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), served under the CSP the public route sends: axe-core
 * finds no WCAG 2.2 AA violation in any theme (form, errors, success) nor
 * in a pasted page, nothing is loaded from elsewhere or refused by the CSP,
 * and a keyboard user fills and submits the form with Tab and Enter.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  renderPastedPage,
  sanitizePastedHtml,
} from '../../../shared/signup/pasted.ts';
import {
  type FormState,
  type PageContent,
  type PageMeta,
  renderThemePage,
  THEMES,
} from '../../../shared/signup/themes.ts';

const CHROMIUM = '/usr/bin/chromium';
const PAGE_URL = 'https://signup.test/p/acme/tuesday';
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

const CONTENT: PageContent = {
  headline: 'The Tuesday Letter',
  intro: 'One short email a week about what we make.\n\nNo spam, ever.',
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

const META: PageMeta = {
  title: 'Subscribe to the Tuesday Letter',
  organizationName: 'Acme Co',
};

const ERRORS: Partial<FormState> = {
  values: { email: 'ada@', firstName: 'Ada' },
  errors: {
    email: 'Enter an email address like name@example.com',
    lastName: 'Enter a last name of at most 100 characters',
  },
};

const PASTED = `<main style="max-width:32rem;margin:2rem auto;font-family:system-ui,sans-serif">
<h1>Join the Tuesday Letter</h1><p>One short email a week.</p>
<form><label for="email">Email address</label>
<input id="email" type="email" name="email" autocomplete="email" required>
<label for="first">First name</label><input id="first" name="firstName" autocomplete="given-name">
<button type="submit">Subscribe</button></form></main>`;

/** The name of the focused element (evaluated in the page). */
const FOCUSED_NAME = "document.activeElement.getAttribute('name')";

/** What a page shows under our CSP: requests it made, CSP refusals, posts. */
interface Served {
  page: Page;
  elsewhere: string[];
  refusals: string[];
  posts: string[];
}

describe('sign-up pages in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `No Chromium at ${CHROMIUM}: install Debian's package with "sudo apt-get install -y --no-install-recommends chromium"`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** Opens `html` as the public route serves it; a post answers `after`. */
  const serve = async (html: string, after = html): Promise<Served> => {
    const page = await browser.newPage({
      viewport: { width: 390, height: 844 },
    });
    const served: Served = { page, elsewhere: [], refusals: [], posts: [] };
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) {
        served.refusals.push(message.text());
      }
    });
    await page.route('**/*', (route) => {
      const request = route.request();
      if (request.url() !== PAGE_URL) {
        served.elsewhere.push(request.url());
        return route.abort();
      }
      if (request.method() === 'POST')
        served.posts.push(request.postData() ?? '');
      return route.fulfill({
        contentType: 'text/html; charset=utf-8',
        headers: { 'content-security-policy': CSP },
        body: request.method() === 'POST' ? after : html,
      });
    });
    await page.goto(PAGE_URL);
    return served;
  };

  /** The WCAG 2.2 A and AA violations axe-core finds, by rule and target. */
  const violationsOf = async (page: Page): Promise<string[]> => {
    // Evaluated by the browser's debugger: the page's CSP does not apply.
    await page.evaluate(AXE_SOURCE);
    // A string: the browser's globals are not in this project's types.
    return page.evaluate<string[]>(`(async () => {
      const { violations } = await axe.run(document, {
        runOnly: {
          type: 'tag',
          values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'],
        },
      });
      return violations.flatMap((violation) =>
        violation.nodes.map((node) => violation.id + ': ' + node.target),
      );
    })()`);
  };

  describe.each(THEMES.map((theme) => theme.name))('the %s theme', (theme) => {
    it.each([
      ['an empty form', {}],
      ['a form with errors', ERRORS],
      ['the success message', { done: true }],
    ] as const)('has no WCAG 2.2 AA violation with %s', async (_, state) => {
      // Arrange
      const html = await renderThemePage(
        theme,
        CONTENT,
        { ...STATE, ...state },
        META,
      );

      // Act
      const served = await serve(html);
      const violations = await violationsOf(served.page);

      // Assert
      expect(violations).toEqual([]);
      expect(served.elsewhere).toEqual([]);
      expect(served.refusals).toEqual([]);
      await served.page.close();
    });

    it('is filled and submitted with the keyboard alone, never reaching the honeypot', async () => {
      // Arrange
      const form = await renderThemePage(theme, CONTENT, STATE, META);
      const done = await renderThemePage(
        theme,
        CONTENT,
        { ...STATE, done: true },
        META,
      );
      const { page, posts } = await serve(form, done);
      const focused = () => page.evaluate<string | null>(FOCUSED_NAME);

      // Act
      const visited: (string | null)[] = [];
      for (const text of ['ada@example.com', 'Ada', 'Lovelace']) {
        await page.keyboard.press('Tab');
        visited.push(await focused());
        await page.keyboard.type(text);
      }
      await page.keyboard.press('Tab');
      const onButton = await page.evaluate<string>(
        'document.activeElement.tagName',
      );
      await page.keyboard.press('Enter');
      await page.getByRole('status').waitFor();

      // Assert
      expect(visited).toEqual(['email', 'firstName', 'lastName']);
      expect(onButton).toBe('BUTTON');
      expect(posts).toHaveLength(1);
      expect(Object.fromEntries(new URLSearchParams(posts[0]))).toEqual({
        token: 'signed.fill.token',
        website: '',
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      await page.close();
    });

    it('puts the focus on the first invalid field when the page loads', async () => {
      // Arrange
      const html = await renderThemePage(
        theme,
        CONTENT,
        { ...STATE, ...ERRORS },
        META,
      );

      // Act
      const { page } = await serve(html);
      const focused = await page.evaluate<string | null>(FOCUSED_NAME);

      // Assert
      expect(focused).toBe('email');
      await page.close();
    });
  });

  it('serves a pasted page with no WCAG 2.2 AA violation, with errors or once done', async () => {
    // Arrange
    const sanitized = sanitizePastedHtml(PASTED);
    if (!sanitized.ok) throw new Error('the pasted page was refused');
    const pages = [
      { ...STATE, ...ERRORS },
      { ...STATE, done: true },
    ].map((state) => renderPastedPage(sanitized.html, CONTENT, state, META));

    // Act
    const results = [];
    for (const html of pages) {
      const served = await serve(html);
      results.push({
        violations: await violationsOf(served.page),
        elsewhere: served.elsewhere,
        refusals: served.refusals,
      });
      await served.page.close();
    }

    // Assert
    for (const result of results) {
      expect(result).toEqual({ violations: [], elsewhere: [], refusals: [] });
    }
  });
});
