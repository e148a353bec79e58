/**
 * The OpenAPI document against the server: for every operation that takes
 * a body, a query or a path parameter, requests drawn from the document's
 * own JSON Schemas
 * (test/support/json-schema-arbitrary.ts, each value checked by Ajv
 * against the schema it came from) are never refused as invalid (400
 * `request.invalid`) and never answer 5xx. A 404 for a drawn id that does
 * not exist, a 409 for a state, a 400 of a domain rule (its own code) are
 * the server's right: the document allows the request, the data refuses it.
 * Path parameters are mostly the seeded organization's
 * (route-examples.ts), a quarter of the time drawn; a drawn query is laid
 * over the example's (so `GET /contacts` keeps its
 * `listId` unless one is drawn: see KNOWN_REFUSALS). Every case starts from
 * the seeded table, as in fuzz.test.ts.
 *
 * More runs: DOCUMENT_RUNS=50 DOCUMENT_SEED=<n> npx vitest run test/routes/document-requests.test.ts
 */
import fc from 'fast-check';
import type { OperationObject, ParameterObject } from 'openapi3-ts/oas31';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import { buildOpenApi } from '../../shared/http/openapi.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { fixedClock, restoreTable } from '../support/dynamo.ts';
import {
  allowedBy,
  createValidator,
  type JsonSchema,
} from '../support/json-schema-arbitrary.ts';
import {
  pathOf,
  ROUTE_EXAMPLES,
  type Seeded,
  seedOrganization,
} from '../support/route-examples.ts';

const RUNS = Number(process.env.DOCUMENT_RUNS ?? 6);
const SEED = Number(process.env.DOCUMENT_SEED ?? 20261128);
/** A limit against a hang, not a slow machine: generous per run. */
const TIMEOUT = 30_000 + RUNS * 3_000;

/**
 * What the server refuses as invalid that the document cannot say, by
 * operation: the fields the refusal names, and why the document cannot.
 */
const KNOWN_REFUSALS: Record<string, { fields: RegExp; why: string }> = {
  'PATCH /sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}': {
    fields: /^(subject|content|sendTimeMinutes|waitHours)$/,
    why: "a node's fields depend on its type (an email or a wait), which the path names but the body's schema cannot see",
  },
  'GET /contacts': {
    fields: /^cursor$/,
    why: 'a cursor is one the API gave (opaque); parameters cannot say more than a string',
  },
  'GET /contacts/{contactId}/activity': {
    fields: /^cursor$/,
    why: 'a cursor is one the API gave (opaque); parameters cannot say more than a string',
  },
  'GET /suppressions': {
    fields: /^cursor$/,
    why: 'a cursor is one the API gave (opaque); parameters cannot say more than a string',
  },
  'GET /suppressions/lifts': {
    fields: /^cursor$/,
    why: 'a cursor is one the API gave (opaque); parameters cannot say more than a string',
  },
  'GET /webhooks/{webhookId}/deliveries': {
    fields: /^cursor$/,
    why: 'a cursor is one the API gave (opaque); parameters cannot say more than a string',
  },
  'POST /webhooks': {
    fields: /^url$/,
    why: 'the URL rules of the stack (https only on AWS; a host written as a private, loopback or metadata address, or localhost, refused) are the runtime’s, not a schema’s',
  },
  'PATCH /webhooks/{webhookId}': {
    fields: /^url$/,
    why: 'the URL rules of the stack (https only on AWS; a host written as a private, loopback or metadata address, or localhost, refused) are the runtime’s, not a schema’s',
  },
  'POST /segments': {
    fields: /^conditions\.\d+\.(field|operator|value)$/,
    why: "a tag condition names a tag of the organization: an unknown id is refused as the condition's invalid value (400), not a 404; a custom field's condition (`fields.<key>`) names a field of the organization, and which operators and values fit depends on the field's type: the organization's data, not the document",
  },
  'POST /signup-pages': {
    fields: /^html$/,
    why: 'pasted HTML must hold a <form> with an input named email once sanitized: a schema cannot read HTML',
  },
  'PATCH /signup-pages/{pageId}': {
    fields: /^html$/,
    why: 'pasted HTML must hold a <form> with an input named email once sanitized: a schema cannot read HTML',
  },
  'GET /stats': {
    fields: /^from$/,
    why: 'a `from` month after `to` is refused: one parameter compared with another, which parameters cannot say',
  },
  'PATCH /segments/{segmentId}': {
    fields: /^conditions\.\d+\.(field|operator|value)$/,
    why: "a tag condition names a tag of the organization: an unknown id is refused as the condition's invalid value (400), not a 404; a custom field's condition (`fields.<key>`) names a field of the organization, and which operators and values fit depends on the field's type: the organization's data, not the document",
  },
};

const document = buildOpenApi(endpointGroups);
const ajv = createValidator();

interface Operation {
  key: string;
  method: string;
  path: string;
  role: string;
  body?: { schema: JsonSchema; required: boolean };
  query: ParameterObject[];
  pathParameters: ParameterObject[];
}

const operations: Operation[] = endpointGroups
  .flatMap((group) => group.routes)
  .map((route) => {
    const operation = document.paths?.[route.path]?.[
      route.method.toLowerCase() as 'get'
    ] as OperationObject;
    const requestBody = operation.requestBody as
      | { required?: boolean; content: Record<string, { schema: JsonSchema }> }
      | undefined;
    const body = requestBody?.content['application/json']?.schema;
    return {
      key: `${route.method} ${route.path}`,
      method: route.method,
      path: route.path,
      role: route.role,
      ...(body
        ? { body: { schema: body, required: requestBody?.required === true } }
        : {}),
      query: ((operation.parameters ?? []) as ParameterObject[]).filter(
        (parameter) => parameter.in === 'query',
      ),
      pathParameters: (
        (operation.parameters ?? []) as ParameterObject[]
      ).filter((parameter) => parameter.in === 'path'),
    };
  })
  .filter(
    (operation) =>
      operation.body ||
      operation.query.length > 0 ||
      operation.pathParameters.length > 0,
  );

/** A query value as the URL carries it. */
const asQueryValue = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value);

/** The parameters' values the document allows, as strings. */
const parametersOf = (
  parameters: ParameterObject[],
): fc.Arbitrary<Record<string, string>> =>
  fc.record(
    Object.fromEntries(
      parameters.map((parameter) => [
        parameter.name,
        allowedBy(ajv, parameter.schema as JsonSchema).map(asQueryValue),
      ]),
    ),
    {
      requiredKeys: parameters
        .filter((parameter) => parameter.required)
        .map((parameter) => parameter.name),
    },
  );

interface Drawn {
  /** Drawn path parameters, or the example's. */
  params?: Record<string, string>;
  query: Record<string, string>;
  body?: unknown;
}

const drawnFor = (operation: Operation): fc.Arbitrary<Drawn> => {
  const body = operation.body
    ? operation.body.required
      ? allowedBy(ajv, operation.body.schema)
      : fc.option(allowedBy(ajv, operation.body.schema), { nil: undefined })
    : fc.constant(undefined);
  const params = operation.pathParameters.length
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: parametersOf(operation.pathParameters) },
      )
    : fc.constant(undefined);
  return fc
    .record({ params, query: parametersOf(operation.query), body })
    .map(({ params: path, query, body: drawn }) => ({
      ...(path === undefined ? {} : { params: path }),
      query,
      ...(drawn === undefined ? {} : { body: drawn }),
    }));
};

const clock = fixedClock('2030-05-06T08:00:00.000Z');
let calls = 0;
/** How often each status (and error code) answered. */
const outcomes = new Map<string, number>();
/** The refusals of KNOWN_REFUSALS met. */
let knownRefusals = 0;

describe('requests the OpenAPI document allows', () => {
  let client: ApiClient;
  let seeded: Seeded;
  let seededTable: Record<string, unknown>[];

  beforeAll(async () => {
    client = await createApiClient({ clock });
    seeded = await seedOrganization(
      client,
      await createOrganizationWithKeys(client, 'Document'),
      'document',
    );
    seededTable = await client.scan();
  }, 120_000);

  afterAll(() => {
    console.log(
      `document requests: ${operations.length} operations, ${calls} requests drawn from the document (${RUNS} a route, seed ${SEED}); answers ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}, ${knownRefusals} of them refusals the document cannot say`,
    );
  });

  it.each(operations.map((operation) => [operation.key, operation] as const))(
    '%s takes what the document allows (no 400 request.invalid, no 5xx)',
    async (_, operation) => {
      const example = ROUTE_EXAMPLES[operation.key]?.(seeded);
      if (!example) throw new Error(`no example for ${operation.key}`);
      const known = KNOWN_REFUSALS[operation.key];
      await fc.assert(
        fc.asyncProperty(drawnFor(operation), async (drawn) => {
          // A second a call: the key never reaches the rate limit.
          clock.advance(1000);
          const writesBefore = client.writes();
          const query = { ...example.query, ...drawn.query };
          const answer = await client.call(
            operation.method,
            pathOf(operation.path, drawn.params ?? example.params),
            {
              ...(operation.role === 'public' ? {} : { key: seeded.ownerKey }),
              ...(Object.keys(query).length ? { query } : {}),
              ...(drawn.body === undefined ? {} : { body: drawn.body }),
            },
          );
          calls++;
          const outcome =
            answer.status >= 400
              ? `${answer.status} ${answer.json?.code ?? (answer.body.includes('This link is not valid') ? 'link.invalid (page)' : 'page')}`
              : String(answer.status);
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          // Put back the seeded table, if the call sent a write at all.
          if (client.writes() !== writesBefore) {
            await restoreTable(
              client.tableName,
              seededTable,
              await client.scan(),
            );
          }
          const seen = `${operation.key} ${JSON.stringify(drawn).slice(0, 600)} → ${answer.status} ${answer.body.slice(0, 400)}`;
          expect(answer.status, seen).toBeLessThan(500);
          // A public route answers a page: its invalid input is the page
          // of an incomplete link (public-handler.ts), not a bad one.
          const refusedAsInvalid =
            answer.status === 400 &&
            (answer.json?.code === 'request.invalid' ||
              (operation.role === 'public' &&
                answer.body.includes('This link is incomplete')));
          expect(operation.role === 'public' && refusedAsInvalid, seen).toBe(
            false,
          );
          // The bulk import answers 200 and refuses lines in its report:
          // an entry the document allows is never one of them, but for
          // its custom field values, which the organization's fields (its
          // data, not the document) judge: `fields.<key>: …`.
          if (operation.key === 'POST /lists/{listId}/contacts/bulk') {
            if (answer.status === 200) {
              const errors: { reason: string }[] = answer.json.data.errors;
              const unexplained = errors.filter(
                (error) => !/^fields[.:]/.test(error.reason),
              );
              expect(unexplained, seen).toEqual([]);
              knownRefusals += errors.length - unexplained.length;
            }
          }
          if (refusedAsInvalid) {
            const fields: string[] = (answer.json.details ?? []).map(
              (detail: { field: string }) => detail.field,
            );
            const explained =
              known !== undefined &&
              fields.length > 0 &&
              fields.every((field) => known.fields.test(field));
            expect(explained, seen).toBe(true);
            knownRefusals++;
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
    TIMEOUT,
  );
});
