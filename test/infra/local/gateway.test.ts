import { describe, expect, it } from 'vitest';
import { endpointGroups } from '../../../functions/groups.ts';
import { buildRouteTable, matchRoute } from '../../../infra/local/gateway.ts';
import { localDeps } from '../../../shared/runtime/local.ts';

const table = buildRouteTable(
  endpointGroups,
  localDeps({
    dynamodb: 'http://127.0.0.1:1',
    tableName: 'unused',
    mailbox: 'http://127.0.0.1:1',
    dnsServer: '127.0.0.1:1',
    providerStateFile: '/nonexistent/provider.json',
    publicApiUrl: 'http://127.0.0.1:1/api/v1',
    linkSecret: 'x'.repeat(32),
  }),
);

describe('local gateway routing', () => {
  it('serves every declared route under /api/v1, and nothing else', () => {
    const declared = endpointGroups.flatMap((g) =>
      g.routes.map((r) => `${r.method} /api/v1${r.path}`),
    );
    expect(table.map((r) => `${r.method} ${r.resource}`).sort()).toEqual(
      declared.sort(),
    );
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
