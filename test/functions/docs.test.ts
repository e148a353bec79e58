/**
 * The `docs` group through the local gateway's HTTP server, as `npm start`
 * serves it: the OpenAPI document and its reference page, without a key,
 * their assets served by us and nothing loaded from elsewhere.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDOC_BUNDLE } from '../../functions/docs/assets.ts';
import { endpointGroups } from '../../functions/groups.ts';
import { createGateway } from '../../infra/local/gateway.ts';
import { buildOpenApi } from '../../shared/http/openapi.ts';
import { localDeps } from '../../shared/runtime/local.ts';

// The docs read nothing: the engines are never called.
const PUBLIC_API_URL = 'https://mail.example.test/api/v1';
const deps = await localDeps({
  dynamodb: 'http://127.0.0.1:1',
  tableName: 'unused',
  mailbox: 'http://127.0.0.1:1',
  dnsServer: '127.0.0.1:1',
  providerStateFile: '/nonexistent/provider.json',
  publicApiUrl: PUBLIC_API_URL,
  linkSecret: 'x'.repeat(32),
  addressKeySecret: 'k'.repeat(32),
});

describe('the API reference (docs group)', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createGateway(endpointGroups, deps);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });

  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it('serves the OpenAPI document without a key, as built from the declarations, not in the envelope', async () => {
    // Act
    const response = await fetch(`${base}/openapi.json`);
    // Assert
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'application/json; charset=utf-8',
    );
    expect(await response.json()).toEqual(
      JSON.parse(
        JSON.stringify(
          buildOpenApi(endpointGroups, { serverUrl: PUBLIC_API_URL }),
        ),
      ),
    );
  });

  it('names the deployment’s own API as the server', async () => {
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
      servers: unknown;
    };
    expect(document.servers).toEqual([
      { url: PUBLIC_API_URL, description: 'This deployment' },
    ]);
  });

  it('serves the reference page with a policy that allows our own scripts and nothing remote', async () => {
    // Act
    const response = await fetch(`${base}/docs`);
    const html = await response.text();
    // Assert
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'text/html; charset=utf-8',
    );
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'/);
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    // Every address of the page is relative: ours, whatever the stage.
    expect(html).toContain('spec-url="openapi.json"');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<script>/);
  });

  it('serves the renderer the page loads, from npm, with a name that changes with its content', async () => {
    // Arrange
    const html = await (await fetch(`${base}/docs`)).text();
    const script = /<script src="(docs\/[^"]+)"><\/script>/.exec(html)?.[1];
    // Act
    const response = await fetch(`${base}/${script}`);
    // Assert
    expect(script).toMatch(/^docs\/redoc\.standalone\.[0-9a-f]{12}\.js$/);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'text/javascript; charset=utf-8',
    );
    expect(response.headers.get('cache-control')).toBe(
      'public, max-age=31536000',
    );
    expect(await response.text()).toBe(
      readFileSync(
        createRequire(import.meta.url).resolve(REDOC_BUNDLE),
        'utf8',
      ),
    );
  });

  it('answers 404 for any other asset', async () => {
    // Act
    const response = await fetch(`${base}/docs/redoc.standalone.js`);
    // Assert
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('text/html');
  });
});
