/**
 * Hosted sign-up pages end to end, in headless Chromium (Debian's
 * `chromium`, driven by playwright-core): the local gateway serves the API
 * and the pages over HTTP on a free port, over a fresh table on the shared
 * engine, so the links of the confirmation email open in the browser.
 *
 * For each theme a keyboard user (Tab, typing, Enter: no click, no fill)
 * sends a malformed address, is brought back to the field with its error,
 * fixes it and signs up; the confirmation link subscribes the contact with
 * its consent record confirmed. axe-core finds no WCAG 2.2 AA violation in
 * the fresh form (wide and narrow), the form with two errors, the success
 * message and the confirmation page; nothing is requested from elsewhere
 * and the CSP refuses nothing; Tab never reaches the honeypot, which is
 * posted empty. A pasted page gets the same checks, and so does each theme
 * asking a custom field of every type (issue 31).
 * Screenshots: test/e2e/__screenshots__/signup-<theme>.png (committed),
 * written again only with UPDATE_SCREENSHOTS=1.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import getPort from 'get-port';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { createGateway } from '../../infra/local/gateway.ts';
import { THEMES } from '../../shared/signup/themes.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { uniqueEmail } from '../support/audience.ts';
import { confirmationLinkOf, mailTo } from '../support/mailbox.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(
  new URL('./__screenshots__/', import.meta.url),
);
/** The committed screenshots are rewritten only when asked. */
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const WIDE = { width: 1200, height: 800 };
const NARROW = { width: 390, height: 844 };
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
/** A last name over the 100 characters a field takes. */
const TOO_LONG = 'L'.repeat(101);
/**
 * The form's minimum fill time here (1 s; 3 s shipped, tested in
 * test/functions/signup-form.test.ts), and the wait a typist leaves past it.
 */
const MIN_FILL_SECONDS = 1;
const FILL_WAIT_MS = MIN_FILL_SECONDS * 1000 + 500;

const CONTENT = {
  headline: 'The Tuesday Letter',
  intro: 'One short email a week about what we make.\n\nNo spam, ever.',
  fields: { firstName: true, lastName: true },
  consentText:
    'By subscribing you agree to receive our newsletter. You can unsubscribe at any time.',
  submitLabel: 'Subscribe',
  successMessage:
    'Almost done: check your inbox and click the link to confirm.',
};

/** One custom field of each type (issue 31). */
const CUSTOM_FIELDS = [
  { key: 'company', label: 'Company', type: 'text' },
  { key: 'seats', label: 'Seats', type: 'number' },
  { key: 'birthday', label: 'Birthday', type: 'date' },
  { key: 'plan', label: 'Plan', type: 'option', options: ['Free', 'Pro'] },
  { key: 'vip', label: 'VIP', type: 'boolean' },
];

const PASTED = `<main style="max-width:32rem;margin:2rem auto;font-family:system-ui,sans-serif">
<h1>Join the Tuesday Letter</h1><p>One short email a week.</p>
<form><label for="email">Email address</label>
<input id="email" type="email" name="email" autocomplete="email" required>
<label for="first">First name</label><input id="first" name="firstName" autocomplete="given-name">
<button type="submit">Subscribe</button></form></main>`;

/** What a browser tab saw: requests refused for leaving, CSP refusals. */
interface Watched {
  page: Page;
  elsewhere: string[];
  refusals: string[];
}

/** The WCAG 2.2 A/AA violations axe-core finds, one line per node. */
const violationsOf = async (page: Page): Promise<string[]> => {
  const { violations } = await new AxeBuilder({ page })
    .withTags(WCAG_TAGS)
    .analyze();
  return violations.flatMap((violation) =>
    violation.nodes.map(
      (node) =>
        `${violation.id} (${violation.impact}): ${node.target.join(' ')}: ${node.failureSummary ?? violation.help}`,
    ),
  );
};

/** Asserts axe finds nothing, naming what it found otherwise. */
const expectAccessible = async (page: Page, state: string) => {
  const violations = await violationsOf(page);
  expect(
    violations,
    `axe violations (${state}):\n${violations.join('\n')}`,
  ).toEqual([]);
};

/** The `name` (or tag) of the focused element. */
const focused = (page: Page) =>
  page.evaluate<string>(
    "document.activeElement?.getAttribute('name') ?? document.activeElement?.tagName ?? ''",
  );

/**
 * Presses Enter; answers the status of the form's post and the fields it
 * sent, once the answer (a new document) has loaded and been rendered.
 */
const submitWithEnter = async (
  page: Page,
): Promise<{ status: number; sent: Record<string, string> }> => {
  const posted = page.waitForResponse(
    (response) => response.request().method() === 'POST',
  );
  const loaded = page.waitForEvent('load');
  await page.keyboard.press('Enter');
  const response = await posted;
  await loaded;
  // Browsers apply `autofocus` while updating the rendering, which may come
  // after `load`: two animation frames later it has surely run.
  await page.evaluate(
    'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))',
  );
  return {
    status: response.status(),
    sent: Object.fromEntries(
      new URLSearchParams(response.request().postData() ?? ''),
    ),
  };
};

describe('hosted sign-up pages in Chromium, over HTTP', () => {
  let server: Server;
  let origin: string;
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;
  let browser: Browser;
  /** Whether the organization's custom fields are defined yet. */
  let fieldsDefined = false;

  /** A keyed JSON call to the API over HTTP. */
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: {
        'x-api-key': org.ownerKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely and assert its shape
    const json = (await response.json()) as any;
    if (!response.ok) {
      throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
    }
    return json.data;
  };

  /** Creates and publishes a page; answers its id and public URL. */
  const publishedPage = async (
    page: Record<string, unknown>,
    content: Record<string, unknown> = CONTENT,
  ): Promise<{ id: string; publicUrl: string }> => {
    const created = await api('POST', '/signup-pages', {
      listId,
      ...content,
      ...page,
    });
    await api('POST', `/signup-pages/${created.id}/publish`);
    return created;
  };

  /** A tab that may reach only our origin, watching CSP refusals. */
  const openTab = async (): Promise<Watched> => {
    // A context of its own: axe-core's builder opens a page beside it.
    const context = await browser.newContext({ viewport: WIDE });
    const page = await context.newPage();
    const watched: Watched = { page, elsewhere: [], refusals: [] };
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) {
        watched.refusals.push(message.text());
      }
    });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url === origin || url.startsWith(`${origin}/`)) {
        return route.continue();
      }
      watched.elsewhere.push(url);
      return route.abort();
    });
    return watched;
  };

  /** Tabs through the form, typing `texts` into the fields it reaches. */
  const typeThrough = async (page: Page, texts: string[]) => {
    const visited: string[] = [];
    for (const text of texts) {
      await page.keyboard.press('Tab');
      visited.push(await focused(page));
      await page.keyboard.type(text);
    }
    await page.keyboard.press('Tab');
    visited.push(await focused(page));
    return visited;
  };

  /** The contact of `email` on the list, through the API. */
  const contactOf = async (email: string) => {
    const found = await api(
      'GET',
      `/contacts?${new URLSearchParams({ listId, search: email })}`,
    );
    return found[0];
  };

  /** Waits for the confirmation email of `email` and answers its link. */
  const confirmationLinkFor = async (email: string): Promise<string> => {
    await expect
      .poll(async () => (await mailTo(email)).length, { timeout: 15_000 })
      .toBeGreaterThan(0);
    return confirmationLinkOf((await mailTo(email))[0]);
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `No Chromium at ${CHROMIUM}: install Debian's package with "sudo apt-get install -y --no-install-recommends chromium"`,
      );
    }
    // The port first: the deps put the server's address in every link.
    const port = await getPort({ host: '127.0.0.1' });
    origin = `http://127.0.0.1:${port}`;
    client = await createApiClient({
      groups: [...endpointGroups, ...pageGroups],
      publicApiUrl: `${origin}/api/v1`,
      pagesUrl: origin,
      signupForms: { minFillSeconds: MIN_FILL_SECONDS },
    });
    org = await createOrganizationWithKeys(client, 'Acme Co');
    server = createGateway([...endpointGroups, ...pageGroups], client.deps);
    await new Promise<void>((listening) =>
      server.listen(port, '127.0.0.1', listening),
    );
    listId = (await api('POST', '/lists', { name: 'The Tuesday Letter' })).id;
    browser = await chromium.launch({ executablePath: CHROMIUM });
    if (UPDATE_SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((closed) => server?.close(closed));
  });

  it.each(THEMES.map((theme) => theme.name))(
    'the %s theme: a keyboard user corrects a mistake, signs up and confirms; no WCAG 2.2 AA violation',
    async (theme) => {
      // Arrange
      const created = await publishedPage({
        name: `Newsletter (${theme})`,
        theme,
        slug: `tuesday-${theme}`,
      });
      const email = uniqueEmail(`e2e-${theme}`);
      const { page, elsewhere, refusals } = await openTab();

      // Act: the fresh page, wide and narrow.
      await page.goto(created.publicUrl);
      if (UPDATE_SCREENSHOTS) {
        await page.screenshot({ path: `${SCREENSHOTS}signup-${theme}.png` });
      }
      await expectAccessible(page, `${theme}, fresh, ${WIDE.width}px`);
      await page.setViewportSize(NARROW);
      await expectAccessible(page, `${theme}, fresh, ${NARROW.width}px`);
      await page.setViewportSize(WIDE);

      // Act: a malformed address and a last name too long, keyboard alone.
      const visited = await typeThrough(page, ['ada@', '', TOO_LONG]);
      const invalid = await submitWithEnter(page);
      const errorFocus = await focused(page);
      const emailInput = page.locator('input[name="email"]');
      const errorText = await page.locator('#signup-email-error').innerText();
      const describedBy = await emailInput.getAttribute('aria-describedby');
      const ariaInvalid = await emailInput.getAttribute('aria-invalid');
      const lastNameError = await page
        .locator('#signup-lastName-error')
        .innerText();
      if (UPDATE_SCREENSHOTS && theme === 'classic') {
        await page.screenshot({
          path: `${SCREENSHOTS}signup-${theme}-error.png`,
        });
      }
      await expectAccessible(page, `${theme}, with errors`);

      // Act: the fixes (focus is on the address), sent after the fill time.
      const shownAt = Date.now();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type('Ada');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type('Lovelace');
      await page.waitForTimeout(
        Math.max(0, FILL_WAIT_MS - (Date.now() - shownAt)),
      );
      const valid = await submitWithEnter(page);
      const statusText = await page.getByRole('status').innerText();
      const successFocus = await page.evaluate<string | null>(
        "document.activeElement?.getAttribute('role') ?? null",
      );
      await expectAccessible(page, `${theme}, success`);
      const pending = await contactOf(email);

      // Act: the link of the confirmation email, in the browser.
      const link = await confirmationLinkFor(email);
      await page.goto(link);
      const heading = await page.getByRole('heading', { level: 1 }).innerText();
      await expectAccessible(page, `${theme}, confirmation page`);
      const confirmed = await contactOf(email);

      // Assert
      expect(created.publicUrl).toBe(`${origin}/p/acme-co/tuesday-${theme}`);
      expect(visited).toEqual(['email', 'firstName', 'lastName', 'BUTTON']);
      expect(invalid.status).toBe(400);
      expect(errorFocus).toBe('email');
      expect(errorText).toContain(
        'Enter an email address in the form name@example.com.',
      );
      expect(lastNameError).toContain('Use at most 100 characters');
      expect(describedBy).toBe('signup-email-error');
      expect(ariaInvalid).toBe('true');
      expect(valid.status).toBe(200);
      // The honeypot went empty, the form's token with it.
      expect(valid.sent).toEqual({
        form_token: expect.any(String),
        website: '',
        email,
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      expect(statusText).toBe(CONTENT.successMessage);
      expect(successFocus).toBe('status');
      expect(pending).toMatchObject({
        email,
        firstName: 'Ada',
        lastName: 'Lovelace',
        status: 'pending',
      });
      expect(link.startsWith(`${origin}/api/v1/public/confirm?token=`)).toBe(
        true,
      );
      expect(heading).toBe('Subscription confirmed');
      expect(confirmed.status).toBe('subscribed');
      expect(confirmed.consents).toHaveLength(1);
      expect(confirmed.consents[0]).toMatchObject({
        pageId: created.id,
        consentText: CONTENT.consentText,
        ip: '127.0.0.1',
      });
      expect(confirmed.consents[0].confirmedAt).toEqual(expect.any(String));
      expect(confirmed.consents[0].confirmedAt).toBe(confirmed.confirmedAt);
      expect(elsewhere).toEqual([]);
      expect(refusals).toEqual([]);
      await page.context().close();
    },
    120_000,
  );

  it.each(THEMES.map((theme) => theme.name))(
    'the %s theme asking custom fields (issue 31): a keyboard user fills a text, a number, a date, a select and a checkbox, past a mistake; no WCAG 2.2 AA violation',
    async (theme) => {
      // Arrange: one field of each type (defined once for the organization).
      if (!fieldsDefined) {
        for (const field of CUSTOM_FIELDS) await api('POST', '/fields', field);
        fieldsDefined = true;
      }
      const created = await publishedPage({
        name: `Newsletter with fields (${theme})`,
        theme,
        slug: `tuesday-fields-${theme}`,
        fields: { firstName: false, lastName: false },
        customFields: [
          { key: 'company', required: true },
          { key: 'seats' },
          { key: 'birthday' },
          { key: 'plan', required: true },
          { key: 'vip', label: 'Send me the VIP letter too' },
        ],
      });
      const email = uniqueEmail(`e2e-fields-${theme}`);
      const { page, elsewhere, refusals } = await openTab();

      // Act: the fresh page, wide and narrow.
      await page.goto(created.publicUrl);
      await expectAccessible(page, `${theme} with fields, fresh`);
      await page.setViewportSize(NARROW);
      await expectAccessible(page, `${theme} with fields, ${NARROW.width}px`);
      await page.setViewportSize(WIDE);

      // Act: every field by keyboard but the required company, left empty.
      const shownAt = Date.now();
      const visited: string[] = [];
      /** Tabs on to the next control (a date input's parts are one). */
      const tab = async () => {
        const from = await focused(page);
        for (let press = 0; press < 5; press++) {
          await page.keyboard.press('Tab');
          if ((await focused(page)) !== from) break;
        }
        visited.push(await focused(page));
      };
      await tab();
      await page.keyboard.type(email);
      await tab();
      await tab();
      await page.keyboard.type('12');
      await tab();
      // A date input takes its parts as typed digits (month, day, year here).
      await page.keyboard.type('12101815');
      await tab();
      // A closed select picks the option its typed letter starts.
      await page.keyboard.type('P');
      await tab();
      await page.keyboard.press('Space');
      await tab();
      await page.waitForTimeout(
        Math.max(0, FILL_WAIT_MS - (Date.now() - shownAt)),
      );
      const invalid = await submitWithEnter(page);
      const errorFocus = await focused(page);
      const companyError = await page
        .locator('#signup-field-company-error')
        .innerText();
      const kept = await page.evaluate<Record<string, string>>(
        'Object.fromEntries(new FormData(document.forms[0]))',
      );
      if (UPDATE_SCREENSHOTS && theme === 'classic') {
        await page.screenshot({
          path: `${SCREENSHOTS}signup-${theme}-fields-error.png`,
          fullPage: true,
        });
      }
      await expectAccessible(page, `${theme} with fields, with an error`);

      // Act: the company typed (focus is on it), sent with Enter.
      await page.keyboard.type('Analytical Engines');
      const valid = await submitWithEnter(page);
      const pending = await contactOf(email);

      // Assert
      expect(visited).toEqual([
        'email',
        'fields.company',
        'fields.seats',
        'fields.birthday',
        'fields.plan',
        'fields.vip',
        'BUTTON',
      ]);
      expect(invalid.status).toBe(400);
      expect(errorFocus).toBe('fields.company');
      expect(companyError).toContain('Company: this is required.');
      // The form shown again keeps every value given.
      expect(kept).toMatchObject({
        email,
        'fields.seats': '12',
        'fields.birthday': '1815-12-10',
        'fields.plan': 'Pro',
        'fields.vip': 'true',
      });
      expect(valid.status).toBe(200);
      expect(valid.sent).toMatchObject({
        email,
        'fields.company': 'Analytical Engines',
        'fields.seats': '12',
        'fields.birthday': '1815-12-10',
        'fields.plan': 'Pro',
        'fields.vip': 'true',
      });
      expect(pending.fields).toEqual({
        company: 'Analytical Engines',
        seats: 12,
        birthday: '1815-12-10',
        plan: 'Pro',
        vip: true,
      });
      expect(pending.consents[0].askedFields).toEqual([
        { key: 'company', label: 'Company', required: true },
        { key: 'seats', label: 'Seats', required: false },
        { key: 'birthday', label: 'Birthday', required: false },
        { key: 'plan', label: 'Plan', required: true },
        { key: 'vip', label: 'Send me the VIP letter too', required: false },
      ]);
      expect(elsewhere).toEqual([]);
      expect(refusals).toEqual([]);
      await page.context().close();
    },
    120_000,
  );

  it('a pasted page: keyboard sign-up past a mistake, no WCAG 2.2 AA violation, nothing from elsewhere', async () => {
    // Arrange
    // A pasted page's fields and consent wording are its form's own.
    const { fields: _fields, consentText: _wording, ...said } = CONTENT;
    const created = await publishedPage(
      { name: 'Newsletter (pasted)', html: PASTED, slug: 'tuesday-pasted' },
      said,
    );
    const email = uniqueEmail('e2e-pasted');
    const { page, elsewhere, refusals } = await openTab();

    // Act: the visitor comes from a post linking to the page.
    await page.goto(created.publicUrl, {
      referer: 'https://blog.example.test/tuesday',
    });
    await expectAccessible(page, 'pasted, fresh');
    const visited = await typeThrough(page, ['ada@', 'Ada']);
    const invalid = await submitWithEnter(page);
    const errorFocus = await focused(page);
    await expectAccessible(page, 'pasted, with errors');
    const shownAt = Date.now();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(email);
    await page.waitForTimeout(
      Math.max(0, FILL_WAIT_MS - (Date.now() - shownAt)),
    );
    const valid = await submitWithEnter(page);
    const statusText = await page.getByRole('status').innerText();
    await expectAccessible(page, 'pasted, success');
    const link = await confirmationLinkFor(email);
    const pending = await contactOf(email);

    // Assert
    expect(visited).toEqual(['email', 'firstName', 'BUTTON']);
    expect(invalid.status).toBe(400);
    expect(errorFocus).toBe('email');
    expect(valid.status).toBe(200);
    expect(valid.sent).toEqual({
      form_token: expect.any(String),
      website: '',
      email,
      firstName: 'Ada',
    });
    expect(statusText).toBe(CONTENT.successMessage);
    expect(link.startsWith(`${origin}/api/v1/public/confirm?token=`)).toBe(
      true,
    );
    expect(pending.consents).toEqual([
      expect.objectContaining({
        consentText: 'Email address First name Subscribe',
        referrer: 'https://blog.example.test/tuesday',
      }),
    ]);
    expect(elsewhere).toEqual([]);
    expect(refusals).toEqual([]);
    await page.context().close();
  }, 120_000);
});
