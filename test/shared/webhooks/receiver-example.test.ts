/**
 * The receiver example of the webhooks page, run as written: its code is
 * taken from the page, the package it imports resolved, and it verifies a
 * real delivery — signed by our signing code, sent over HTTP by the
 * delivery client — and refuses a tampered one.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GuardedWebhookSender } from '../../../shared/adapters/guarded-webhook-sender.ts';
import { newSecret, webhookHeaders } from '../../../shared/webhooks/signing.ts';

/** The example's code: the js block between the page's receiver markers. */
const exampleCode = async (): Promise<string> => {
  const page = await readFile(
    new URL('../../../docs/features/webhooks.md', import.meta.url),
    'utf8',
  );
  const section = page.slice(
    page.indexOf('<!-- receiver:start -->'),
    page.indexOf('<!-- receiver:end -->'),
  );
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('the page has no receiver example');
  return code;
};

/** The example as a module, its `standardwebhooks` import resolved. */
const loadExample = async (): Promise<{
  receive: (
    secret: string,
    body: string,
    headers: IncomingHttpHeaders,
  ) => unknown;
}> => {
  const resolved = pathToFileURL(
    createRequire(import.meta.url).resolve('standardwebhooks'),
  ).href;
  const code = (await exampleCode()).replace(
    "from 'standardwebhooks'",
    `from '${resolved}'`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'receiver-example-'));
  const file = join(dir, 'receiver.mjs');
  await writeFile(file, code);
  try {
    return await import(/* @vite-ignore */ pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

describe('the receiver example of the webhooks page', () => {
  it('verifies a real delivery, and refuses one whose body was changed', async () => {
    // Arrange: a receiver running the example, and a delivery to it.
    const { receive } = await loadExample();
    const secret = newSecret({
      secret: (bytes) => Buffer.alloc(bytes, 9).toString('base64url'),
    });
    const outcomes: unknown[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        try {
          outcomes.push(receive(secret, raw, request.headers));
          response.writeHead(204).end();
        } catch (error) {
          outcomes.push(error instanceof Error ? error.message : error);
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const sender = new GuardedWebhookSender({ rules: { allowLoopback: true } });
    const id = `evt_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({
      id,
      type: 'contact.created',
      timestamp: new Date().toISOString(),
      organizationId: 'org-1',
      data: { contact: { id: 'c-1' } },
    });
    const headers = webhookHeaders({
      id,
      body,
      secrets: [secret],
      now: new Date(),
    });

    // Act
    const good = await sender.post({ url, headers, body });
    const tampered = await sender.post({
      url,
      headers,
      body: body.replace('c-1', 'c-2'),
    });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));

    // Assert
    expect(good.statusCode).toBe(204);
    expect(outcomes[0]).toEqual(JSON.parse(body));
    expect(tampered.statusCode).toBe(400);
    expect(outcomes[1]).toBe('No matching signature found');
  });
});
