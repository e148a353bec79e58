/**
 * Property-based fuzzing of every declared route (fast-check): whatever a
 * client sends in path, query and body, the answer is never a 5xx, and a
 * 4xx leaves the table exactly as it was. Runs start from each route's
 * example (test/support/route-examples.ts) with one field made hostile, or
 * from inputs of any shape.
 *
 * Deeper runs: FUZZ_RUNS=500 FUZZ_SEED=<n> npx vitest run test/routes/fuzz.test.ts
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
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
  seedOrganization,
} from '../support/route-examples.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

const routes = endpointGroups.flatMap((group) =>
  group.routes.map((route) => ({
    ...route,
    key: `${route.method} ${route.path}`,
  })),
);

/** Strings that have broken parsers, headers, renderers and stores. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'a\r\nBcc: victim@example.test',
    'nul\u0000byte',
    'lone \uD800 surrogate',
    'trail \uDC00',
    '\uE0000\uE001',
    '\uE000x\uE001',
    '\u0085\u2028\u2029',
    '"><script>alert(1)</script>',
    '{{ 1 | append: x }}{% for i in (1..1000000) %}x{% endfor %}',
    '*|FNAME|*',
    '__proto__',
    'constructor',
    '../../etc/passwd',
    '%2e%2e%2f',
    'x'.repeat(5_000),
    '€'.repeat(120_000),
    'ADA@EXAMPLE.TEST',
    'not-an-email@',
    '00000000-0000-7000-8000-000000000000',
    '1e309',
    '-1',
    '0',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** Any JSON value, hostile strings included, a few levels deep. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 8 }), fc.constant('__proto__')),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

/** The example with one of its fields (or a new one) made hostile. */
const mutated = (example: Example): fc.Arbitrary<Example> => {
  const places = (['params', 'query', 'body'] as const).filter(
    (place) => example[place] !== undefined,
  );
  if (places.length === 0) return fc.constant(example);
  return fc
    .record({
      place: fc.constantFrom(...places),
      field: fc.nat(),
      extra: fc.string({ maxLength: 8 }),
      stringValue: hostileString,
      anything: anyValue,
    })
    .map(({ place, field, extra, stringValue, anything }) => {
      const current = { ...(example[place] ?? {}) } as Record<string, unknown>;
      const names = Object.keys(current);
      const name = names.length
        ? (names[field % names.length] ?? extra)
        : extra;
      // Path and query values are strings on the wire; bodies are JSON.
      current[name] = place === 'body' ? anything : stringValue;
      return { ...example, [place]: current } as Example;
    });
};

/** Inputs of any shape in every place the route reads. */
const shapeless = (example: Example): fc.Arbitrary<Example> =>
  fc.record({
    params: fc
      .constant(example.params ?? {})
      .chain((params) =>
        fc.record(
          Object.fromEntries(
            Object.keys(params).map((name) => [name, hostileString]),
          ),
        ),
      ),
    query: fc.dictionary(fc.string({ maxLength: 10 }), hostileString, {
      maxKeys: 4,
    }),
    body: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 5 }),
      anyValue,
    ),
  }) as fc.Arbitrary<Example>;

const clock = fixedClock('2030-05-06T08:00:00.000Z');
let calls = 0;
let fourHundreds = 0;

describe('fuzzing every declared route', () => {
  let client: ApiClient;
  let seeded: Seeded;

  beforeAll(async () => {
    client = await createApiClient({ clock });
    seeded = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Fuzz'),
      'fuzz',
    );
  }, 60_000);

  afterAll(() => {
    console.log(
      `route fuzzing: ${routes.length} routes, ${calls} cases (${fourHundreds} answered 4xx), ${RUNS} runs a route, seed ${SEED}`,
    );
  });

  it.each(routes.map((route) => [route.key, route] as const))(
    '%s never answers 5xx, and a 4xx writes nothing',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(seeded);
      if (!example) throw new Error(`no example for ${route.key}`);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(mutated(example), shapeless(example)),
          async (input) => {
            clock.advance(1000);
            const before = await client.scan();
            const body =
              input.body === undefined
                ? {}
                : typeof input.body === 'object' && input.body !== null
                  ? { body: input.body }
                  : { rawBody: JSON.stringify(input.body) };
            const answer = await client.call(
              route.method,
              pathOf(route.path, input.params as Record<string, string>),
              {
                ...(route.role === 'public' ? {} : { key: seeded.ownerKey }),
                ...(input.query ? { query: input.query } : {}),
                ...body,
              },
            );
            calls++;
            const seen = `${route.key} ${JSON.stringify(input).slice(0, 300)} → ${answer.status} ${answer.body.slice(0, 200)}`;
            expect(answer.status, seen).toBeLessThan(500);
            if (answer.status >= 400) {
              fourHundreds++;
              expect(await client.scan(), seen).toEqual(before);
            }
          },
        ),
        { numRuns: RUNS, seed: SEED },
      );
    },
  );
});
