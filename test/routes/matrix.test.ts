/**
 * The route matrix: tenancy, roles, scopes and keys, checked on every
 * declared route (functions/groups.ts) through the in-process client. A
 * route added later is covered by adding its example to
 * test/support/route-examples.ts.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import { SCOPES, type Scope, scopesAllow } from '../../shared/access/scopes.ts';
import { takesIdempotencyKey } from '../../shared/http/route.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { fixedClock } from '../support/dynamo.ts';
import {
  type Example,
  pathOf,
  ROUTE_EXAMPLES,
  type Seeded,
  seededAddresses,
  seededIds,
  seedOrganization,
} from '../support/route-examples.ts';

const routes = endpointGroups.flatMap((group) =>
  group.routes.map((route) => ({
    ...route,
    key: `${route.method} ${route.path}`,
  })),
);
const keyed = routes.filter((route) => route.role !== 'public');
// Every role above member (admin today): a member key must be refused.
const adminOnly = keyed.filter((route) => route.role !== 'member');

// A clock in the future (DynamoDB Local deletes items whose TTL is past),
// moved on a second per call so no key reaches the rate limit.
const clock = fixedClock('2030-03-04T09:00:00.000Z');
const cases = {
  foreign: 0,
  role: 0,
  noKey: 0,
  scopeRefused: 0,
  scopePassed: 0,
};

/**
 * Query ids that only filter what a route reads: an unknown or another
 * organization's id matches nothing (an empty page), it is not a 404. Every
 * other id (path, body, a query id naming what is read) must be a 404.
 */
/**
 * Examples the seeded organization refuses by design, with the code they
 * must answer: a seeded organization has a declared, unverified domain, so
 * it cannot send (its readiness reports `domain_not_verified`). The 202 of
 * a send is tested in test/functions/campaigns.test.ts.
 */
const REFUSED_BY_SEED: Record<string, string> = {
  'POST /campaigns/{campaignId}/send': 'sending.blocked',
  // The seeded campaign is a draft.
  'POST /campaigns/{campaignId}/unschedule': 'campaign.notScheduled',
  'POST /campaigns/{campaignId}/pause': 'campaign.notSending',
  'POST /campaigns/{campaignId}/resume': 'campaign.notSending',
  'POST /campaigns/{campaignId}/cancel': 'campaign.notSending',
};

const FILTER_IDS: Record<string, string[]> = {
  'GET /contacts': ['tagId'],
  // The spec: "an id from another organization matches nothing".
  'GET /signup-pages': ['listId'],
};

/** Every id-valued field of an example, where it sits. */
const idFieldsOf = (example: Example, ids: Set<string>) => [
  ...Object.entries(example.params ?? {})
    .filter(([, value]) => ids.has(value))
    .map(([name]) => ({ in: 'params' as const, name })),
  ...Object.entries(example.query ?? {})
    .filter(([, value]) => ids.has(value))
    .map(([name]) => ({ in: 'query' as const, name })),
  ...Object.entries(example.body ?? {})
    .filter(([, value]) => typeof value === 'string' && ids.has(value))
    .map(([name]) => ({ in: 'body' as const, name })),
];

describe('the route matrix (every declared route)', () => {
  let client: ApiClient;
  let a: Seeded;
  let b: Seeded;
  let revokedKey: string;
  /** Owner keys of organization B, each narrowed to one scope. */
  const scopedKeys = {} as Record<Scope, string>;

  const send = (
    route: { method: string; path: string },
    example: Example,
    key?: string,
    headers?: Record<string, string>,
  ) => {
    clock.advance(1000);
    return client.call(route.method, pathOf(route.path, example.params), {
      ...(key ? { key } : {}),
      ...(example.query ? { query: example.query } : {}),
      ...(example.body !== undefined ? { body: example.body } : {}),
      ...(headers ? { headers } : {}),
    });
  };

  beforeAll(async () => {
    client = await createApiClient({ clock });
    a = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Org A'),
      'orga',
    );
    b = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Org B'),
      'orgb',
    );
    const revoked = await client.admin(
      'key',
      'create',
      '--org',
      b.orgId,
      '--email',
      `owner-${b.orgId.slice(-12)}@example.test`,
    );
    await client.admin('key', 'revoke', '--key', String(revoked.keyId));
    revokedKey = String(revoked.apiKey);
    for (const scope of SCOPES) {
      const made = await client.admin(
        'key',
        'create',
        '--org',
        b.orgId,
        '--email',
        `owner-${b.orgId.slice(-12)}@example.test`,
        '--name',
        `only ${scope}`,
        '--scopes',
        scope,
      );
      scopedKeys[scope] = String(made.apiKey);
    }
  });

  afterAll(() => {
    console.log(
      `route matrix: ${keyed.length} keyed routes, ${cases.foreign} foreign-id cases, ${cases.role} member-on-admin cases, ${cases.scopeRefused} refused and ${cases.scopePassed} admitted route × scope cases, ${cases.noKey} missing, malformed, forged or revoked key cases`,
    );
  });

  it('has an example for every declared route', () => {
    const missing = routes
      .map((route) => route.key)
      .filter((key) => !(key in ROUTE_EXAMPLES));
    expect(missing, 'add them to test/support/route-examples.ts').toEqual([]);
  });

  it('has examples whose path parameters are ids of seeded resources (so the tenancy cases cover every one)', () => {
    const ids = new Set(Object.values(seededIds(b)));
    const loose = keyed.flatMap((route) =>
      Object.entries(ROUTE_EXAMPLES[route.key]?.(b).params ?? {})
        .filter(([, value]) => !ids.has(value))
        .map(([name]) => `${route.key} {${name}}`),
    );
    expect(loose, 'seed the resource in route-examples.ts').toEqual([]);
  });

  it('has examples that are valid requests: each answers its owner a 2xx (deletions last)', async () => {
    // Arrange: an organization of its own, as the examples change it.
    const c = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Org C'),
      'orgc',
    );
    // Deletions last, the deepest resource first.
    const ordered = [
      ...routes.filter((route) => route.method !== 'DELETE'),
      ...routes
        .filter((route) => route.method === 'DELETE')
        .sort((x, y) => y.path.length - x.path.length),
    ];
    // Act
    const refused: string[] = [];
    for (const route of ordered) {
      const example = ROUTE_EXAMPLES[route.key]?.(c);
      if (!example) continue;
      const answer = await send(
        route,
        example,
        route.role === 'public' ? undefined : c.ownerKey,
      );
      const expected = REFUSED_BY_SEED[route.key];
      if (expected) {
        if (answer.status !== 409 || !answer.body.includes(expected)) {
          refused.push(`${route.key} → ${answer.status} ${answer.body}`);
        }
      } else if (answer.status >= 300) {
        refused.push(`${route.key} → ${answer.status} ${answer.body}`);
      }
    }
    // Assert
    expect(refused).toEqual([]);
  });

  it('Idempotency-Key: every write answers a repeat as it answered first, marked, writing nothing; the key for another request is a 422 writing nothing (deletions last)', async () => {
    // Arrange: an organization of its own, as the examples change it.
    const d = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Org D'),
      'orgd',
    );
    const writes = routes.filter(takesIdempotencyKey);
    const ordered = [
      ...writes.filter((route) => route.method !== 'DELETE'),
      ...writes
        .filter((route) => route.method === 'DELETE')
        .sort((x, y) => y.path.length - x.path.length),
    ];
    // Act
    const wrong: string[] = [];
    for (const route of ordered) {
      const example = ROUTE_EXAMPLES[route.key]?.(d);
      if (!example) continue;
      const headers = { 'Idempotency-Key': randomUUID() };
      const first = await send(route, example, d.ownerKey, headers);
      const before = await client.snapshot();
      const again = await send(route, example, d.ownerKey, headers);
      // The same key, the request with one more query parameter.
      const other = await send(
        route,
        { ...example, query: { ...example.query, again: '1' } },
        d.ownerKey,
        headers,
      );
      const after = await client.snapshot();
      const expected = REFUSED_BY_SEED[route.key];
      if (
        (expected ? first.status !== 409 : first.status >= 300) ||
        again.status !== first.status ||
        again.body !== first.body ||
        again.headers['idempotent-replayed'] !== 'true' ||
        other.status !== 422 ||
        other.json.code !== 'idempotency.keyReused' ||
        !isDeepStrictEqual(after, before)
      ) {
        wrong.push(
          `${route.key} → ${first.status}, again ${again.status} (${again.headers['idempotent-replayed']}), other ${other.status}, table ${isDeepStrictEqual(after, before) ? 'unchanged' : 'changed'}`,
        );
      }
    }
    // Assert
    expect(wrong).toEqual([]);
  });

  it('Idempotency-Key, a run that stopped before keeping its answer: every create, run again once its lease is over, finds what the first created — the same resource, no item more', async () => {
    // Arrange: an organization of its own; a store whose runs die after
    // the operation's writes, before the answer is kept.
    const e = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Org E'),
      'orge',
    );
    const store = client.deps.idempotency;
    const complete = store.complete.bind(store);
    const keysOf = (items: Record<string, unknown>[]) =>
      items
        .filter((item) => item._type !== 'IdempotencyRecord')
        .map((item) => `${item.PK} ${item.SK}`);
    const creates = routes.filter(
      (route) => takesIdempotencyKey(route) && route.responses[201],
    );
    // Upserts by address or name: run again, they find the contact (the
    // tag) and answer 200 "already there", as a retry without the key
    // always did (decision 0055).
    const upserts: Record<string, (data: { id?: string }) => unknown> = {
      'POST /lists/{listId}/contacts': (data) => data.id,
      'POST /contacts/{contactId}/tags': (data) =>
        (data as { tag?: { id?: string } }).tag?.id,
    };
    // A key's value is shown once and kept nowhere: run again, the create
    // revokes the key the lost run made and makes another (decision 0055).
    const remade = new Set(['POST /api-keys']);
    // Act
    const wrong: string[] = [];
    let compared = 0;
    for (const route of creates) {
      const example = ROUTE_EXAMPLES[route.key]?.(e);
      if (!example) continue;
      const headers = { 'Idempotency-Key': randomUUID() };
      store.complete = async () => {
        throw new Error('the process died');
      };
      const lost = await send(route, example, e.ownerKey, headers).finally(
        () => {
          store.complete = complete;
        },
      );
      if (lost.status !== 201) continue;
      const afterLost = keysOf(await client.scan());
      clock.advance(31_000);
      const rerun = await send(route, example, e.ownerKey, headers);
      const afterRerun = keysOf(await client.scan());
      compared++;
      if (remade.has(route.key)) {
        // Its value reached no one: that key is revoked, another made.
        const earlier = await client.get(`/api-keys/${lost.json.data.id}`, {
          key: e.ownerKey,
        });
        if (
          rerun.status !== 201 ||
          rerun.json.data.id === lost.json.data.id ||
          !rerun.json.data.apiKey ||
          earlier.json.data?.revokedAt === null
        ) {
          wrong.push(
            `${route.key} → ${rerun.status} ${rerun.body.slice(0, 200)}`,
          );
        }
        continue;
      }
      const upsert = upserts[route.key];
      const idOf = upsert ?? ((data: { id?: string }) => data.id);
      if (
        rerun.status !== (upsert ? 200 : 201) ||
        rerun.headers['idempotent-replayed'] !== undefined ||
        idOf(rerun.json.data) !== idOf(lost.json.data) ||
        !isDeepStrictEqual(afterRerun, afterLost)
      ) {
        wrong.push(
          `${route.key} → ${rerun.status} ${rerun.body.slice(0, 200)}; new items: ${afterRerun.filter((key) => !afterLost.includes(key)).join(', ')}`,
        );
      }
    }
    // Assert
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(15);
  });

  it.each(keyed.map((route) => [route.key, route] as const))(
    'Tenancy: %s answers another organization’s id exactly as an unknown id (404, or an empty page for a filter), and writes nothing',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(b);
      if (!example) throw new Error(`no example for ${route.key}`);
      // Ids, and addresses (a person named in a body), alike.
      const seeded = (s: Seeded) => ({
        ...seededIds(s),
        ...seededAddresses(s),
      });
      const ownIds = new Set(Object.values(seeded(b)));
      const foreignOf = Object.fromEntries(
        Object.entries(seeded(b)).map(([name, id]) => [
          id,
          seeded(a)[name] ?? '',
        ]),
      );
      for (const field of idFieldsOf(example, ownIds)) {
        const swap = (value: string) => ({
          ...example,
          [field.in]: { ...example[field.in], [field.name]: value },
        });
        const own = String(example[field.in]?.[field.name]);
        const foreign = foreignOf[own] ?? '';
        // An address (the suppression list's) or an id nobody has.
        const unknown = own.includes('@')
          ? `${randomUUID()}@unknown.example`
          : randomUUID();
        const before = await client.snapshot();
        // Act
        const answerForeign = await send(route, swap(foreign), b.ownerKey);
        const answerUnknown = await send(route, swap(unknown), b.ownerKey);
        // Assert
        const where = `${route.key} with another organization's ${field.in}.${field.name}`;
        expect(answerForeign.status, where).toBe(answerUnknown.status);
        expect(
          JSON.stringify(answerForeign.json).replaceAll(foreign, unknown),
          where,
        ).toBe(JSON.stringify(answerUnknown.json));
        if (
          field.in === 'query' &&
          FILTER_IDS[route.key]?.includes(field.name)
        ) {
          expect(answerUnknown.status, where).toBe(200);
          expect(answerUnknown.json.pagination.total, where).toBe(0);
        } else {
          expect(answerUnknown.status, where).toBe(404);
          expect(answerUnknown.json.code, where).toMatch(/\.notFound$/);
        }
        expect(await client.snapshot(), where).toEqual(before);
        cases.foreign++;
      }
    },
  );

  it.each(adminOnly.map((route) => [route.key, route] as const))(
    'Roles: a member key on %s answers 403 and the table is unchanged',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(b);
      if (!example) throw new Error(`no example for ${route.key}`);
      const before = await client.snapshot();
      const answer = await send(route, example, b.memberKey);
      expect(answer.status).toBe(403);
      expect(answer.json.code).toBe('auth.roleTooLow');
      expect(await client.snapshot()).toEqual(before);
      cases.role++;
    },
  );

  it.each(
    adminOnly
      .filter((route) => route.body !== undefined)
      .map((route) => [route.key, route] as const),
  )(
    'Roles before body (issue 29, defect 6): a member key on %s with a body the owner is refused (400) answers 403, as with a valid one',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(b);
      if (!example) throw new Error(`no example for ${route.key}`);
      // A string is no route's body: each declares an object.
      const invalid = { ...example, body: 'not an object' as never };
      const before = await client.snapshot();
      // Act
      const asOwner = await send(route, invalid, b.ownerKey);
      const asMember = await send(route, invalid, b.memberKey);
      // Assert
      expect(asOwner.status).toBe(400);
      expect(asMember.status).toBe(403);
      expect(asMember.json.code).toBe('auth.roleTooLow');
      expect(await client.snapshot()).toEqual(before);
    },
  );

  it('declares a scope on every keyed route (a route without one is open to full-access keys only)', () => {
    const unscoped = keyed
      .filter((route) => route.scope === undefined)
      .map((route) => route.key);
    expect(unscoped, 'routeFor<Deps>({ scope }) in its routes.ts').toEqual([]);
  });

  it.each(
    keyed.flatMap((route) =>
      SCOPES.map((scope) => [route.key, scope, route] as const),
    ),
  )(
    'Scopes: %s with a key narrowed to %s answers 403 auth.scopeMissing and writes nothing when the scope does not cover it, and passes the scope step when it does',
    async (_, scope, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(b);
      if (!example) throw new Error(`no example for ${route.key}`);
      const key = scopedKeys[scope];
      const before = await client.snapshot();
      if (!scopesAllow([scope], route)) {
        // Act
        const answer = await send(route, example, key);
        // Assert
        expect(answer.status).toBe(403);
        expect(answer.json.code).toBe('auth.scopeMissing');
        expect(answer.json.error).toContain(`needs the ${route.scope} scope`);
        expect(await client.snapshot()).toEqual(before);
        cases.scopeRefused++;
        return;
      }
      // A GET is run as it is (a read); a write is sent invalid, so that
      // its 400 (validation, after the scope step) proves the step passed
      // without doing anything.
      const request =
        route.method === 'GET'
          ? example
          : route.body
            ? { ...example, body: 'not an object' as never }
            : {
                ...example,
                params: Object.fromEntries(
                  Object.keys(example.params ?? {}).map((name) => [
                    name,
                    'not-an-id',
                  ]),
                ),
              };
      // Act
      const answer = await send(route, request, key);
      // Assert (a read may refresh what it shows: GET /me, the sending
      // state it keeps, so only the refused writes are held to the table)
      if (route.method === 'GET') expect(answer.status).toBe(200);
      else {
        expect(answer.status).toBe(400);
        expect(answer.json.code).toBe('request.invalid');
        expect(await client.snapshot()).toEqual(before);
      }
      cases.scopePassed++;
    },
  );

  it.each(keyed.map((route) => [route.key, route] as const))(
    'Authentication: %s answers 401 without a key, with a malformed, a forged or a revoked one, and writes nothing',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(b);
      if (!example) throw new Error(`no example for ${route.key}`);
      const before = await client.snapshot();
      // Act
      const missing = await send(route, example);
      const malformed = await send(route, example, 'hello');
      const forged = await send(
        route,
        example,
        `emk_${'0'.repeat(32)}_${'A'.repeat(43)}`,
      );
      const revoked = await send(route, example, revokedKey);
      // Assert
      expect(missing.status).toBe(401);
      expect(missing.json.code).toBe('auth.missingKey');
      expect(malformed.status).toBe(401);
      expect(forged.status).toBe(401);
      // A revoked key reads exactly as one that never existed.
      expect(revoked.status).toBe(401);
      expect(revoked.json).toEqual(forged.json);
      expect(await client.snapshot()).toEqual(before);
      cases.noKey += 4;
    },
  );
});
