/**
 * The look of the API reference, checked once in headless Chromium
 * (Debian's `chromium`, driven by playwright-core): the page is served by
 * the local gateway's HTTP server as `npm start` serves it, every request
 * to anywhere but our origin is refused, and the operations of several
 * groups must render. The screenshot is written to
 * test/e2e/__screenshots__/docs.png (committed: the page as it looks).
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import { createGateway } from '../../infra/local/gateway.ts';
import { localDeps } from '../../shared/runtime/local.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(
  new URL('./__screenshots__/docs.png', import.meta.url),
);

/** The groups whose first operation must show (every group but the pages). */
const SHOWN = endpointGroups.filter((group) => group.name !== 'public');

describe('the API reference page in Chromium', () => {
  let server: Server;
  let origin: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // The docs read nothing: the engines are never called.
    const deps = await localDeps({
      dynamodb: 'http://127.0.0.1:1',
      tableName: 'unused',
      mailbox: 'http://127.0.0.1:1',
      dnsServer: '127.0.0.1:1',
      providerStateFile: '/nonexistent/provider.json',
      publicApiUrl: 'http://127.0.0.1:1/api/v1',
      linkSecret: 'x'.repeat(32),
      addressKeySecret: 'k'.repeat(32),
    });
    server = createGateway(endpointGroups, deps);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((done) => server.close(done));
  });

  it('renders the operations of every group offline, and saves a screenshot', async () => {
    // Arrange
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `No Chromium at ${CHROMIUM}: install Debian's package with "sudo apt-get install -y --no-install-recommends chromium" (.ci/run does it in CI)`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const page = await browser.newPage({
      viewport: { width: 1440, height: 900 },
    });
    const refused: string[] = [];
    const failures: string[] = [];
    await page.route('**/*', (request) => {
      if (request.request().url().startsWith(origin)) {
        return request.continue();
      }
      refused.push(request.request().url());
      return request.abort();
    });
    page.on('pageerror', (error) => failures.push(error.message));
    page.on('requestfailed', (request) => {
      if (request.url().startsWith(origin)) failures.push(request.url());
    });

    // Act
    await page.goto(`${origin}/api/v1/docs#tag/lists/operation/lists.create`);
    for (const group of SHOWN) {
      const summary = group.routes[0]?.summary ?? '';
      // An operation's heading: its summary (after an anchor link).
      await page
        .locator('h2', { hasText: summary })
        .first()
        .waitFor({ state: 'visible', timeout: 30_000 });
    }
    // Redoc scrolls to the operation of the address once it has rendered.
    await page
      .locator('h2', { hasText: 'Create a list' })
      .first()
      .scrollIntoViewIfNeeded();
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });

    // Assert
    expect(await page.title()).toBe('Email marketing API reference');
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    expect(refused).toEqual([]);
    expect(failures).toEqual([]);
  }, 90_000);
});
