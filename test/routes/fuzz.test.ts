/**
 * Property-based fuzzing of every declared route (fast-check): whatever a
 * client sends in path, query, body and `Idempotency-Key`, the answer is
 * never a 5xx, and a 4xx leaves the table exactly as it was (but for the
 * key's record, which keeps a write's refusal as its answer). Each route first runs its
 * example (test/support/route-examples.ts) past every rule, field by field
 * (hostile endings, sizes in UTF-8 bytes, arrays past their caps), then
 * random runs: some of its declared fields (read from the route's valibot
 * schemas) made hostile or pushed past a limit, inputs of any shape, raw
 * bodies no JSON encoder builds. Every case starts from the same seeded
 * table (put back after a write), so a failure replays on its own.
 *
 * Deeper runs: FUZZ_RUNS=500 FUZZ_SEED=<n> npx vitest run test/routes/fuzz.test.ts
 * A failure prints the FUZZ_SEED, FUZZ_PATH and -t that replay it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import type { Route } from '../../shared/http/route.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { fixedClock, restoreTable } from '../support/dynamo.ts';
import {
  type Example,
  pathOf,
  ROUTE_EXAMPLES,
  type Seeded,
  seedOrganization,
} from '../support/route-examples.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** With -t naming one route: replays the failure fast-check reported. */
const REPLAY_PATH = process.env.FUZZ_PATH;

/** An error's message with every long run of one character cut. */
const shorten = (error: unknown): string =>
  String(error instanceof Error ? error.message : error)
    .replace(
      /(.)\1{40,}/gsu,
      (run, c: string) =>
        `${c.repeat(8)}…(${run.length} × ${JSON.stringify(c)})`,
    )
    .slice(0, 3_000);

/** What a call wrote: the keys of the items added, removed and changed. */
const written = (
  before: Record<string, unknown>[],
  after: Record<string, unknown>[],
): string => {
  const keyOf = (item: Record<string, unknown>) => `${item.PK} ${item.SK}`;
  const old = new Map(before.map((item) => [keyOf(item), item]));
  const now = new Map(after.map((item) => [keyOf(item), item]));
  const added = [...now.keys()].filter((key) => !old.has(key));
  const removed = [...old.keys()].filter((key) => !now.has(key));
  const changed = [...now.keys()].filter(
    (key) =>
      old.has(key) &&
      JSON.stringify(old.get(key)) !== JSON.stringify(now.get(key)),
  );
  return JSON.stringify({ added, removed, changed }).slice(0, 1_000);
};

const routes = endpointGroups.flatMap((group) =>
  group.routes.map((route) => ({
    ...route,
    key: `${route.method} ${route.path}`,
  })),
);

type Place = 'params' | 'query' | 'body';

/** The field names a route's schema declares for one place. */
const declaredFields = (route: Route, place: Place): string[] => {
  const schema = route[place] as { entries?: Record<string, unknown> };
  return Object.keys(schema?.entries ?? {});
};

/** An object nested `depth` levels deep. */
const deep = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

/** Strings that have broken parsers, headers, renderers and stores. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'a\r\nBcc: victim@example.test',
    'a\rb',
    'a\nb',
    'nul\u0000byte',
    'tab\tand\u0007bell\u007f',
    'lone \uD800 surrogate',
    'trail \uDC00',
    '\uDBFF',
    '\uE0000\uE001',
    '\uE000x\uE001',
    '{{ unsubscribeUrl }}\uE0000\uE001',
    '\u0085\u2028\u2029\u200B\uFEFF',
    '"><script>alert(1)</script>',
    '{{ 1 | append: x }}{% for i in (1..1000000) %}x{% endfor %}',
    '{% raw %}{{x}}{% endraw %}{% endraw %}',
    '*|FNAME|*',
    '__proto__',
    'constructor',
    'toString',
    '../../etc/passwd',
    '%2e%2e%2f',
    '%00',
    'x'.repeat(5_000),
    '€'.repeat(120_000),
    '😀'.repeat(2_000),
    'Ünïcødé 名前 ☃',
    'ADA@EXAMPLE.TEST',
    'a@b.c\r\n',
    '"quoted"@example.test',
    'not-an-email@',
    '00000000-0000-7000-8000-000000000000',
    '1e309',
    '-1',
    '0',
    '9007199254740993',
    'true',
    'null',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
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
    fc.constantFrom(deep(64), deep(2_000), Array(600).fill('x')),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.constantFrom('__proto__', 'constructor', 'prototype'),
      ),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

/** Raw bodies no JSON encoder builds from an object. */
const rawBody = fc.constantFrom(
  '',
  '{',
  'null',
  '[]',
  '"a string"',
  '12',
  '{"__proto__":{"role":"owner","isDefault":true}}',
  '{"constructor":{"prototype":{"role":"owner"}}}',
  '{"a":1,"a":2}',
  '\uFEFF{}',
  `{"x":"${'\\ud800'}"}`,
  `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
  '{"name":"\\u0000"}',
);

/** Sets an own property, even one named `__proto__`. */
const withField = (
  object: Record<string, unknown> | undefined,
  name: string,
  value: unknown,
): Record<string, unknown> => {
  const copy = { ...(object ?? {}) };
  Object.defineProperty(copy, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
};

/**
 * A copy of a value told apart by `i`: strings get a suffix (an address a
 * `+i` tag, unless `sameAddresses`), so grown arrays hold distinct items.
 */
const varied = (value: unknown, i: number, sameAddresses: boolean): unknown => {
  if (typeof value === 'string') {
    if (!value.includes('@')) return `${value} ${i}`;
    return sameAddresses ? value : value.replace('@', `+${i}@`);
  }
  if (Array.isArray(value)) {
    return value.map((item) => varied(item, i, sameAddresses));
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [
        name,
        varied(item, i, sameAddresses),
      ]),
    );
  }
  return value;
};

/** Sizes around the limits (50 tags, 100 names, 500 lines). */
const counts = fc.constantFrom(2, 3, 49, 50, 51, 99, 100, 101, 500, 501);

/**
 * A valid value made hostile while keeping its shape: a string with
 * something hostile around it or grown past a size, an array grown past a
 * limit (distinct items, or the same addresses), a field of an object
 * changed in turn.
 */
const derived = (value: unknown, depth = 0): fc.Arbitrary<unknown> => {
  if (depth > 3) return anyValue;
  if (typeof value === 'string') {
    return fc.oneof(
      { weight: 2, arbitrary: hostileString.map((h) => `${value}${h}`) },
      { weight: 1, arbitrary: hostileString.map((h) => `${h}${value}`) },
      // Past a limit in characters or in UTF-8 bytes (3 bytes a "€").
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(34, 67, 100, 134, 1_000, 70_000, 100_001, 150_000)
          .map((n) => `${value}${'€'.repeat(n)}`),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          value.toUpperCase(),
          ` ${value} `,
          `${value}\r\n${value}`,
          value.repeat(1_000),
        ),
      },
    );
  }
  if (Array.isArray(value) && value.length > 0) {
    return fc.oneof(
      fc
        .tuple(counts, derived(value[0], depth + 1), fc.boolean())
        .map(([n, item, sameAddresses]) =>
          Array.from({ length: n }, (_, i) => varied(item, i, sameAddresses)),
        ),
      fc
        .tuple(fc.nat(value.length - 1), fc.constant(value))
        .chain(([i]) =>
          derived(value[i], depth + 1).map((item) =>
            value.map((old, j) => (i === j ? item : old)),
          ),
        ),
      fc.constant([]),
    );
  }
  if (typeof value === 'object' && value !== null) {
    const names = Object.keys(value);
    if (names.length === 0) return anyValue;
    return fc
      .constantFrom(...names)
      .chain((name) =>
        derived((value as Record<string, unknown>)[name], depth + 1).map(
          (item) => withField(value as Record<string, unknown>, name, item),
        ),
      );
  }
  return anyValue;
};

/** The hostile endings every string field is tried with. */
const ENDINGS = [
  '€'.repeat(150_000),
  '\r\nBcc: victim@example.test',
  '\u0000',
  '\uD800',
  ' \uE0000\uE001 ',
];

/**
 * Each value one step past a rule, field by field, nested fields
 * included: every string with each hostile ending, every array grown past
 * 50, 100 and 500 (distinct items), and an array of objects as two items
 * of the same address, each with its own arrays grown to 50.
 */
const boundaryVariants = (value: unknown, depth = 0): unknown[] => {
  if (depth > 3) return [];
  if (typeof value === 'string') return ENDINGS.map((end) => value + end);
  if (Array.isArray(value) && value.length > 0) {
    const [first, ...rest] = value;
    const grown = [51, 101, 501].map((n) =>
      Array.from({ length: n }, (_, i) => varied(first, i, false)),
    );
    const nested =
      typeof first === 'object' && first !== null && !Array.isArray(first)
        ? [
            [0, 1].map((i) =>
              varied(
                Object.fromEntries(
                  Object.entries(first).map(([name, item]) => [
                    name,
                    Array.isArray(item) && item.length > 0
                      ? Array.from({ length: 50 }, (_, j) =>
                          varied(item[0], j, true),
                        )
                      : item,
                  ]),
                ),
                i,
                true,
              ),
            ),
          ]
        : [];
    return [
      ...grown,
      ...nested,
      ...boundaryVariants(first, depth + 1).map((item) => [item, ...rest]),
    ];
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([name, item]) =>
      boundaryVariants(item, depth + 1).map((variant) =>
        withField(value as Record<string, unknown>, name, variant),
      ),
    );
  }
  return [];
};

/** The example past each rule, one field at a time (fast-check examples). */
const boundaryInputs = (example: Example): Input[] => [
  ...(['params', 'query'] as const).flatMap((place) =>
    Object.entries(example[place] ?? {}).flatMap(([name, value]) =>
      ['\r\n', '\uD800', '€'.repeat(1_000)].map((end) => ({
        ...example,
        [place]: { ...example[place], [name]: value + end },
      })),
    ),
  ),
  ...(example.body
    ? boundaryVariants(example.body).map((body) => ({ ...example, body }))
    : []),
];

/** A fuzzed input: any values where the example has its own, or a raw body. */
interface Input {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  raw?: string;
  /** An `Idempotency-Key` header: a valid key, or anything. */
  idempotencyKey?: string;
}

/** Sometimes an `Idempotency-Key`: a fresh valid one, or anything. */
const withIdempotencyKey = (inputs: fc.Arbitrary<Input>): fc.Arbitrary<Input> =>
  fc
    .tuple(inputs, fc.option(fc.oneof(fc.uuid(), hostileString), { freq: 3 }))
    .map(([input, key]) =>
      key === null ? input : { ...input, idempotencyKey: key },
    );

/** The items of a table but the records of Idempotency-Keys. */
const withoutKeyRecords = (items: Record<string, unknown>[]) =>
  items.filter((item) => item._type !== 'IdempotencyRecord');

/**
 * The example with some declared fields (or a new one) made hostile, or
 * left out. Path and query values are strings on the wire; bodies are JSON.
 */
const mutated = (route: Route, example: Example): fc.Arbitrary<Input> => {
  const fieldsOf = (place: Place) => [
    ...new Set([
      ...Object.keys(example[place] ?? {}),
      ...declaredFields(route, place),
    ]),
  ];
  const targets = (['params', 'query', 'body'] as const).flatMap((place) =>
    fieldsOf(place).map((name) => ({ place, name })),
  );
  const change = (place: Place, name: string) => {
    const current = (example[place] as Record<string, unknown> | undefined)?.[
      name
    ];
    const hostile = place === 'body' ? anyValue : hostileString;
    return fc.oneof(
      { weight: 2, arbitrary: hostile },
      {
        weight: current === undefined ? 0 : 3,
        arbitrary: current === undefined ? hostile : derived(current),
      },
      // Left out (a path parameter cannot be: an empty segment is no route).
      {
        weight: 1,
        arbitrary: fc.constant(place === 'params' ? ' ' : undefined),
      },
    );
  };
  const one = fc.record({
    place: fc.constantFrom<Place>('params', 'query', 'body'),
    name: fc.string({ maxLength: 8 }),
  });
  // Mostly one field at a time (a defect shows alone), sometimes several.
  const chosenTargets = targets.length
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...targets).map((t) => [t]) },
        { weight: 1, arbitrary: fc.subarray(targets, { minLength: 1 }) },
      )
    : fc.constant([] as typeof targets);
  return fc
    .tuple(chosenTargets, fc.option(one, { freq: 3 }))
    .chain(([chosen, extra]) =>
      fc
        .tuple(
          ...[...chosen, ...(extra ? [extra] : [])].map((target) =>
            change(target.place, target.name).map((value) => ({
              ...target,
              value,
            })),
          ),
        )
        .map((changes) => {
          const input: Input = { ...example };
          for (const { place, name, value } of changes) {
            const fields = { ...(input[place] ?? {}) } as Record<
              string,
              unknown
            >;
            if (value === undefined) delete fields[name];
            input[place] =
              value === undefined ? fields : withField(fields, name, value);
          }
          return input;
        }),
    );
};

/** Inputs of any shape in every place the route reads. */
const shapeless = (example: Example): fc.Arbitrary<Input> =>
  fc.record({
    params: fc.record(
      Object.fromEntries(
        Object.keys(example.params ?? {}).map((name) => [name, hostileString]),
      ),
    ),
    query: fc.dictionary(fc.string({ maxLength: 10 }), hostileString, {
      maxKeys: 4,
    }),
    body: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 5 }),
      anyValue,
    ),
  }) as fc.Arbitrary<Input>;

/** The example's path and query, with a raw body. */
const raw = (example: Example): fc.Arbitrary<Input> =>
  rawBody.map((text) => ({ ...example, body: undefined, raw: text }));

/**
 * How many examples past each rule a route has, known before anything is
 * seeded: they depend on the example's shape, not on the ids in it.
 */
const boundaryCount = (routeKey: string): number => {
  const placeholders = new Proxy({} as Seeded, {
    get: (_, name) => `placeholder-${String(name)}`,
  });
  const example = ROUTE_EXAMPLES[routeKey]?.(placeholders);
  return example ? boundaryInputs(example).length : 0;
};

/**
 * A route's time limit guards against a hang, not a busy machine: 2 s for
 * each case of the route with the most (its random runs and its examples
 * past each rule), where a machine at load 8 took under 0.5 s a case.
 */
const TIMEOUT =
  30_000 +
  2_000 * (RUNS + Math.max(...routes.map((route) => boundaryCount(route.key))));

const clock = fixedClock('2030-05-06T08:00:00.000Z');
let calls = 0;
let fourHundreds = 0;
let boundaryCases = 0;
/** Cases that sent a write: the table was scanned and put back. */
let scannedCases = 0;

describe('fuzzing every declared route', () => {
  let client: ApiClient;
  let seeded: Seeded;
  /** The seeded table: every case starts from it. */
  let seededTable: Record<string, unknown>[];

  beforeAll(async () => {
    client = await createApiClient({ clock });
    seeded = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Fuzz'),
      'fuzz',
    );
    seededTable = await client.scan();
  });

  afterAll(() => {
    console.log(
      `route fuzzing: ${routes.length} routes, ${calls} cases (${fourHundreds} answered 4xx, ${scannedCases} sent a write and were scanned): ${boundaryCases} past each rule, field by field, and ${RUNS} random runs a route, seed ${SEED} (FUZZ_RUNS, FUZZ_SEED)`,
    );
  });

  it.each(routes.map((route) => [route.key, route] as const))(
    '%s never answers 5xx, and a 4xx writes nothing',
    async (_, route) => {
      const example = ROUTE_EXAMPLES[route.key]?.(seeded);
      if (!example) throw new Error(`no example for ${route.key}`);
      const boundaries = boundaryInputs(example);
      boundaryCases += boundaries.length;
      const details = await fc.check(
        fc.asyncProperty(
          withIdempotencyKey(
            fc.oneof(
              { weight: 3, arbitrary: mutated(route, example) },
              { weight: 1, arbitrary: shapeless(example) },
              { weight: 1, arbitrary: raw(example) },
            ),
          ),
          async (input) => {
            // A second a call: the key never reaches the rate limit.
            clock.advance(1000);
            const writesBefore = client.writes();
            const body =
              input.raw !== undefined
                ? { rawBody: input.raw }
                : input.body === undefined
                  ? {}
                  : typeof input.body === 'object' && input.body !== null
                    ? { body: input.body }
                    : { rawBody: JSON.stringify(input.body) };
            const answer = await client.call(
              route.method,
              pathOf(route.path, input.params as Record<string, string>),
              {
                ...(route.role === 'public' ? {} : { key: seeded.ownerKey }),
                ...(input.query
                  ? { query: input.query as Record<string, string> }
                  : {}),
                ...(input.idempotencyKey !== undefined
                  ? { headers: { 'Idempotency-Key': input.idempotencyKey } }
                  : {}),
                ...body,
              },
            );
            calls++;
            // Every case starts from the seeded table (put back after a
            // write): cases do not depend on each other, and the table
            // stays small to scan. A call that sent no write request left
            // it as it was: no scan.
            const wrote = client.writes() !== writesBefore;
            if (wrote) scannedCases++;
            const table = wrote ? await client.scan() : seededTable;
            // Put back before asserting, so a failure never leaks into
            // the next case (or route).
            const restored =
              wrote &&
              (await restoreTable(client.tableName, seededTable, table)) > 0;
            const seen = () =>
              `${route.key} ${JSON.stringify(input)?.slice(0, 300)} → ${answer.status} ${answer.body.slice(0, 200)}`;
            if (answer.status >= 500) expect.fail(seen());
            if (answer.status >= 400) {
              fourHundreds++;
              expect(
                withoutKeyRecords(table),
                `${seen()}\nwrote: ${written(seededTable, table)}`,
              ).toEqual(seededTable);
            }
            if (restored) expect(await client.scan()).toEqual(seededTable);
          },
        ),
        {
          // fast-check counts the examples among the runs.
          numRuns: RUNS + boundaries.length,
          seed: SEED,
          examples: boundaries.map((input) => [input] as [Input]),
          ...(REPLAY_PATH ? { path: REPLAY_PATH, endOnFailure: true } : {}),
        },
      );
      // Reported short (a counterexample can hold 450 KB strings), with
      // what replays it.
      expect(
        details.failed,
        details.failed
          ? `${shorten(details.errorInstance)}\nreplay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} npx vitest run test/routes/fuzz.test.ts -t '${route.key} '`
          : '',
      ).toBe(false);
    },
    TIMEOUT,
  );
});
