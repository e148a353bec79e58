import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpCaptchaVerifier } from '../../../shared/adapters/http-captcha-verifier.ts';

/** A stand-in siteverify endpoint: it records each check and answers as told. */
describe('HttpCaptchaVerifier (siteverify over HTTP)', () => {
  let server: Server;
  let url: string;
  const seen: URLSearchParams[] = [];
  let answer: { status: number; body: string } = { status: 200, body: '' };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        seen.push(new URLSearchParams(body));
        response.writeHead(answer.status, {
          'content-type': 'application/json',
        });
        response.end(answer.body);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
  });

  afterAll(() => new Promise((done) => server.close(done)));

  const verifier = () =>
    new HttpCaptchaVerifier('turnstile', 'site-1', async () => 'secret-1', url);

  it('posts the secret, the answer and the address (and, to hCaptcha, the site key), and believes {success: true}', async () => {
    // Arrange
    answer = { status: 200, body: JSON.stringify({ success: true }) };
    // Act
    const accepted = await verifier().verify('token-1', '192.0.2.4');
    // Assert
    expect(accepted).toBe(true);
    expect(Object.fromEntries(seen.at(-1) ?? [])).toEqual({
      secret: 'secret-1',
      response: 'token-1',
      remoteip: '192.0.2.4',
    });
    await new HttpCaptchaVerifier(
      'hcaptcha',
      'site-2',
      async () => 's',
      url,
    ).verify('t', undefined);
    expect(seen.at(-1)?.get('sitekey')).toBe('site-2');
  });

  it('refuses on {success: false}, an error status, a body that is not the answer, or no provider', async () => {
    // Arrange
    const cases = [
      { status: 200, body: JSON.stringify({ success: false }) },
      { status: 500, body: JSON.stringify({ success: true }) },
      { status: 200, body: 'not json' },
      { status: 200, body: JSON.stringify({ success: 'yes' }) },
    ];
    // Act / Assert
    for (const next of cases) {
      answer = next;
      expect(await verifier().verify('token', undefined), next.body).toBe(
        false,
      );
    }
    const unreachable = new HttpCaptchaVerifier(
      'hcaptcha',
      'site',
      async () => 'secret',
      'http://127.0.0.1:1/siteverify',
    );
    expect(await unreachable.verify('token', undefined)).toBe(false);
  });
});
