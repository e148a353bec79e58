/**
 * The webhook HTTP client's guard against request forgery, against a real
 * server on loopback and resolvers the tests control: every address a
 * host resolves to is checked, the connection goes to the address checked
 * (a DNS answer that changes afterwards is never used), and an attempt is
 * bounded: 5 s in all, no redirect followed, a few KB of the answer read.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GuardedWebhookSender,
  type ResolveHost,
} from '../../../shared/adapters/guarded-webhook-sender.ts';

/** What the test server received. */
interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('the guarded webhook sender', () => {
  let server: Server;
  let port: number;
  const received: Received[] = [];
  let answer: (response: import('node:http').ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        answer(response);
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    port = (server.address() as AddressInfo).port;
  });

  afterEach(() => {
    received.length = 0;
    answer = (response) => response.writeHead(200).end('ok');
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const request = (url: string) => ({
    url,
    headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
    body: '{"hello":"world"}',
  });

  /** A resolver answering each call with the next answer (the last repeats). */
  const resolverOf = (...answers: string[][]) => {
    const calls: string[] = [];
    const resolveHost: ResolveHost = async (hostname) => {
      calls.push(hostname);
      const addresses =
        answers[Math.min(calls.length, answers.length) - 1] ?? [];
      return addresses.map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
    };
    return { resolveHost, calls };
  };

  it('posts the body and headers to an allowed address and reads the answer', async () => {
    // Arrange
    answer = (response) =>
      response.writeHead(202, { 'content-type': 'text/plain' }).end('taken');
    const sender = new GuardedWebhookSender({ rules: { allowLoopback: true } });

    // Act
    const response = await sender.post(
      request(`http://127.0.0.1:${port}/in?x=1`),
    );

    // Assert
    expect(response).toMatchObject({ statusCode: 202, body: 'taken' });
    expect(response.error).toBeUndefined();
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(received).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/in?x=1',
        body: '{"hello":"world"}',
      }),
    ]);
    expect(received[0]?.headers).toMatchObject({
      'webhook-id': 'evt_1',
      'content-length': '17',
    });
  });

  it('refuses a host that resolves to a private address, and connects nowhere', async () => {
    // Arrange
    const { resolveHost } = resolverOf(['10.0.0.7']);
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: false },
      resolveHost,
    });

    // Act
    const response = await sender.post(
      request(`http://hooks.example.test:${port}/in`),
    );

    // Assert
    expect(response.statusCode).toBeUndefined();
    expect(response.error).toBe(
      'Refused: hooks.example.test resolves to 10.0.0.7, which is a private address',
    );
    expect(received).toEqual([]);
  });

  it('refuses a host when one of its addresses is forbidden, though another is allowed', async () => {
    // Arrange
    const { resolveHost } = resolverOf(['127.0.0.1', '169.254.169.254']);
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: true },
      resolveHost,
    });

    // Act
    const response = await sender.post(
      request(`http://two.example.test:${port}/in`),
    );

    // Assert
    expect(response.error).toContain('169.254.169.254');
    expect(response.error).toContain('metadata');
    expect(received).toEqual([]);
  });

  it('connects to the address it checked: a DNS answer changed afterwards (rebinding) is never used', async () => {
    // Arrange: the first answer is allowed; every later one is private.
    const { resolveHost, calls } = resolverOf(['127.0.0.1'], ['10.9.9.9']);
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: true },
      resolveHost,
    });

    // Act
    const first = await sender.post(
      request(`http://rebind.example.test:${port}/in`),
    );
    const second = await sender.post(
      request(`http://rebind.example.test:${port}/in`),
    );

    // Assert: one lookup per attempt, and the connection went where it said.
    expect(first.statusCode).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]?.headers.host).toBe(`rebind.example.test:${port}`);
    expect(second.error).toContain('10.9.9.9');
    expect(calls).toEqual(['rebind.example.test', 'rebind.example.test']);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://100.64.1.1/',
  ])('refuses %s even where loopback is allowed', async (url) => {
    // Arrange
    const sender = new GuardedWebhookSender({ rules: { allowLoopback: true } });

    // Act
    const response = await sender.post(request(url));

    // Assert
    expect(response.error).toMatch(/^Refused: /);
  });

  it('refuses loopback, as an address or written as IPv6, where it is not allowed', async () => {
    // Arrange
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: false },
    });

    // Act
    const answers = await Promise.all([
      sender.post(request(`http://127.0.0.1:${port}/in`)),
      sender.post(request(`http://[::ffff:127.0.0.1]:${port}/in`)),
      sender.post(request(`http://[::1]:${port}/in`)),
    ]);

    // Assert
    expect(answers.map((a) => a.error)).toEqual([
      'Refused: 127.0.0.1 is a loopback address',
      // The URL parser writes it ::ffff:7f00:1: still 127.0.0.1.
      'Refused: ::ffff:7f00:1 is a loopback address',
      'Refused: ::1 is a loopback address',
    ]);
    expect(received).toEqual([]);
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    // Arrange
    answer = (response) =>
      response.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    const sender = new GuardedWebhookSender({ rules: { allowLoopback: true } });

    // Act
    const response = await sender.post(request(`http://127.0.0.1:${port}/in`));

    // Assert
    expect(response.statusCode).toBe(302);
    expect(received).toHaveLength(1);
  });

  it('times the whole attempt out: an endpoint that never answers', async () => {
    // Arrange
    answer = () => {};
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: true },
      timeoutMs: 300,
    });

    // Act
    const started = Date.now();
    const response = await sender.post(request(`http://127.0.0.1:${port}/in`));

    // Assert
    expect(response.error).toBe('Timed out: no complete answer within 0.3 s');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('times a lookup that never ends out too', async () => {
    // Arrange
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: true },
      resolveHost: () => new Promise(() => {}),
      timeoutMs: 200,
    });

    // Act
    const response = await sender.post(
      request('https://slow-dns.example.test/in'),
    );

    // Assert
    expect(response.error).toBe('Timed out: no complete answer within 0.2 s');
  });

  it('reads a few KB of a long answer, and drops the rest unread', async () => {
    // Arrange
    answer = (response) => {
      response.writeHead(200);
      response.write('x'.repeat(64 * 1024));
      // Never ends: only the bound lets the attempt finish.
    };
    const sender = new GuardedWebhookSender({
      rules: { allowLoopback: true },
      timeoutMs: 2_000,
      maxResponseBytes: 4096,
    });

    // Act
    const response = await sender.post(request(`http://127.0.0.1:${port}/in`));

    // Assert
    expect(response.statusCode).toBe(200);
    expect(response.error).toBeUndefined();
    expect(response.body?.length).toBe(4096);
  });

  it('says a refused connection in a line', async () => {
    // Arrange: a port nothing listens on.
    const closed = createServer();
    await new Promise<void>((resolve) =>
      closed.listen(0, '127.0.0.1', resolve),
    );
    const free = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const sender = new GuardedWebhookSender({ rules: { allowLoopback: true } });

    // Act
    const response = await sender.post(request(`http://127.0.0.1:${free}/in`));

    // Assert
    expect(response.error).toBe('Connection refused');
  });
});
