import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../../functions/groups.ts';
import {
  buildRouteTable,
  createGateway,
  matchRoute,
} from '../../../infra/local/gateway.ts';
import { localDeps } from '../../../shared/runtime/local.ts';

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
const table = buildRouteTable(endpointGroups, deps);

/**
 * The API's routes, written out by hand from the contract: an expectation
 * independent of the route declarations. A route added or dropped in the
 * declarations fails the test below until it is listed here too.
 */
const CONTRACT_ROUTES = [
  'GET /me',
  'GET /reputation',
  'POST /lists',
  'GET /lists',
  'GET /lists/{listId}',
  'GET /contacts',
  'GET /contacts/{contactId}',
  'GET /contacts/{contactId}/activity',
  'PATCH /contacts/{contactId}',
  'POST /lists/{listId}/contacts',
  'POST /lists/{listId}/contacts/bulk',
  'POST /contacts/{contactId}/unsubscribe',
  'POST /contacts/{contactId}/resubscribe',
  'POST /contacts/{contactId}/tags',
  'DELETE /contacts/{contactId}/tags/{tagId}',
  'GET /tags',
  'POST /tags',
  'POST /templates',
  'GET /templates',
  'GET /templates/{templateId}',
  'PATCH /templates/{templateId}',
  'DELETE /templates/{templateId}',
  'POST /templates/{templateId}/test-send',
  'POST /render',
  'POST /campaigns',
  'GET /campaigns',
  'GET /campaigns/{campaignId}',
  'PATCH /campaigns/{campaignId}',
  'DELETE /campaigns/{campaignId}',
  'POST /campaigns/{campaignId}/send',
  'GET /campaigns/{campaignId}/stats',
  'POST /campaigns/{campaignId}/test-send',
  'POST /campaigns/{campaignId}/unschedule',
  'POST /campaigns/{campaignId}/pause',
  'POST /campaigns/{campaignId}/resume',
  'POST /campaigns/{campaignId}/cancel',
  'POST /segments',
  'GET /segments',
  'GET /segments/{segmentId}',
  'PATCH /segments/{segmentId}',
  'DELETE /segments/{segmentId}',
  'POST /topics',
  'GET /topics',
  'GET /topics/{topicId}',
  'PATCH /topics/{topicId}',
  'DELETE /topics/{topicId}',
  'GET /topics/{topicId}/opt-outs',
  'POST /topics/{topicId}/opt-outs',
  'DELETE /topics/{topicId}/opt-outs/{contactId}',
  // Custom fields (issue 31): beyond the spec.
  'POST /fields',
  'GET /fields',
  'GET /fields/{fieldId}',
  'PATCH /fields/{fieldId}',
  'DELETE /fields/{fieldId}',
  // A person's data on request (issue 31): beyond the spec.
  'POST /exports',
  'GET /contacts/{contactId}/export',
  // The suppression list (issue 31): beyond the spec.
  'GET /suppressions',
  'GET /suppressions/lifts',
  'GET /suppressions/{email}',
  'POST /suppressions',
  'DELETE /suppressions/{email}',
  'POST /erasures',
  'POST /contacts/{contactId}/erase',
  'GET /erasures',
  'GET /erasures/{erasureId}',
  // Webhooks (issue 32): beyond the spec.
  'POST /webhooks',
  'GET /webhooks',
  'GET /webhooks/{webhookId}',
  'PATCH /webhooks/{webhookId}',
  'DELETE /webhooks/{webhookId}',
  'POST /webhooks/{webhookId}/secret/roll',
  'GET /webhooks/{webhookId}/deliveries',
  'GET /webhooks/{webhookId}/deliveries/{deliveryId}',
  'POST /webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
  'POST /webhooks/{webhookId}/test',
  'POST /sequences',
  'GET /sequences',
  'GET /sequences/{sequenceId}',
  'PATCH /sequences/{sequenceId}',
  'DELETE /sequences/{sequenceId}',
  'POST /series',
  'GET /series',
  'GET /series/{seriesId}',
  'PATCH /series/{seriesId}',
  'DELETE /series/{seriesId}',
  'POST /sequences/{sequenceId}/versions',
  'GET /sequences/{sequenceId}/versions',
  'GET /sequences/{sequenceId}/versions/{versionId}',
  'DELETE /sequences/{sequenceId}/versions/{versionId}',
  'POST /sequences/{sequenceId}/versions/{versionId}/nodes',
  'PATCH /sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}',
  'DELETE /sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}',
  'POST /sequences/{sequenceId}/versions/{versionId}/publish',
  // Statistics a marketer can trust (issue 33): beyond the spec.
  'GET /stats',
  'GET /sequences/{sequenceId}/stats',
  'GET /settings',
  'PATCH /settings/sending',
  'GET /settings/identities',
  'POST /settings/identities',
  'PATCH /settings/identities/{identityId}',
  'DELETE /settings/identities/{identityId}',
  'PATCH /settings/optin',
  'POST /settings/optin/test-send',
  'POST /domains',
  'GET /domains',
  'GET /domains/{domainId}',
  'DELETE /domains/{domainId}',
  'POST /domains/{domainId}/verify',
  'GET /signup-pages',
  'GET /signup-pages/themes',
  'POST /signup-pages',
  'GET /signup-pages/{pageId}',
  'PATCH /signup-pages/{pageId}',
  'DELETE /signup-pages/{pageId}',
  'POST /signup-pages/{pageId}/publish',
  'POST /signup-pages/{pageId}/unpublish',
  // API keys through the API (issue 32): beyond the spec.
  'GET /api-keys',
  'POST /api-keys',
  'GET /api-keys/{keyId}',
  'DELETE /api-keys/{keyId}',
  'GET /public/confirm',
  'GET /public/unsubscribe',
  'POST /public/unsubscribe',
  'GET /public/topic-opt-out',
  'POST /public/topic-opt-out',
  'GET /openapi.json',
  'GET /docs',
  'GET /docs/{asset}',
];

describe('local gateway routing', () => {
  it('serves exactly the routes of the contract under /api/v1, and nothing else', () => {
    // Arrange: every listed path made concrete, tried with every method.
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const paths = [
      ...new Set(CONTRACT_ROUTES.map((route) => route.split(' ')[1])),
    ];
    // Act
    const served = paths.flatMap((path) =>
      methods.flatMap((method) => {
        const concrete = `/api/v1${path}`.replace(/\{\w+\}/g, 'id-1');
        const match = matchRoute(table, method, concrete);
        return match ? [`${method} ${match.route.resource}`] : [];
      }),
    );
    // Assert
    // (A literal path beside a parameter, `/signup-pages/themes` beside
    // `/signup-pages/{pageId}`, reaches the parameter's route with the
    // other methods: each route counts once.)
    expect([...new Set(served)].sort()).toEqual(
      CONTRACT_ROUTES.map((route) => route.replace(' ', ' /api/v1')).sort(),
    );
    expect(table).toHaveLength(CONTRACT_ROUTES.length);
  });

  it('routes a concrete request of every declared route to that route, with its parameters', () => {
    const declared = endpointGroups.flatMap((g) =>
      g.routes.map((r) => ({ group: g.name, ...r })),
    );
    expect(table).toHaveLength(declared.length);
    for (const route of declared) {
      // A concrete path, each parameter a distinct value.
      const values: Record<string, string> = {};
      const path = `/api/v1${route.path}`.replace(
        /\{(\w+)\}/g,
        (_, name: string) => {
          values[name] = `${name}-value`;
          return values[name];
        },
      );
      const match = matchRoute(table, route.method, path);
      expect(match?.route.group, `${route.method} ${path}`).toBe(route.group);
      expect(match?.route.resource).toBe(`/api/v1${route.path}`);
      expect(match?.params).toEqual(values);
    }
  });

  it('prefers a literal segment over a parameter, as API Gateway does', () => {
    expect(
      matchRoute(table, 'POST', '/api/v1/lists/x/contacts/bulk')?.route
        .resource,
    ).toBe('/api/v1/lists/{listId}/contacts/bulk');
    expect(
      matchRoute(table, 'POST', '/api/v1/settings/optin/test-send')?.route
        .resource,
    ).toBe('/api/v1/settings/optin/test-send');
  });

  it('extracts decoded path parameters', () => {
    const match = matchRoute(table, 'GET', '/api/v1/lists/a%20b');
    expect(match?.route.resource).toBe('/api/v1/lists/{listId}');
    expect(match?.params).toEqual({ listId: 'a b' });
  });

  it('matches the method too, and refuses unknown or partial paths', () => {
    expect(matchRoute(table, 'DELETE', '/api/v1/lists')).toBeUndefined();
    expect(matchRoute(table, 'GET', '/api/v1/lists/')).toBeUndefined();
    expect(matchRoute(table, 'GET', '/lists')).toBeUndefined();
    expect(matchRoute(table, 'GET', '/api/v1/me')?.route.group).toBe('me');
  });
});

describe('local gateway over HTTP', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createGateway(endpointGroups, deps);
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** Sends the request target exactly as given (no URL normalization). */
  const rawGet = (target: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: target, method: 'GET' },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.each([
    '/api/v1/lists/%2e%2e/me',
    '/api/v1/lists/%2E%2E/me',
    '/api/v1/lists/../me',
    '/api/v1/lists/./x/../../me',
  ])(
    'A13: does not resolve dot segments (%s), as API Gateway does not',
    async (target) => {
      // Act: GET /me would answer 401 without a key; an unknown path 404.
      const answer = await rawGet(target);
      // Assert
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'route.notFound' });
    },
  );
});
