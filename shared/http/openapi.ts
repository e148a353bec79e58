/**
 * The OpenAPI 3.1 document of the API, derived from the route declarations
 * of the endpoint groups: paths and parameters from their schemas, answers
 * per declared status in the spec's envelopes, error answers per status
 * with the codes each operation can answer, the key scheme, the role of
 * each operation, the rate-limit headers and, on every write, the
 * `Idempotency-Key` header and the marks of a replayed answer. Nothing in
 * it is written by hand: a route changes, the document changes with it.
 */
import {
  type ConversionConfig,
  type JsonSchema,
  toJsonSchema,
  toJsonSchemaDefs,
} from '@valibot/to-json-schema';
import {
  type HeaderObject,
  type OpenAPIObject,
  OpenApiBuilder,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type ResponsesObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import * as v from 'valibot';
import { SCOPES, scopesCovering } from '../access/scopes.ts';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import {
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENTS,
  type WebhookEventType,
} from '../webhooks/events.ts';
import {
  webhookPayloadSchema,
  webhookPayloadTitle,
} from '../webhooks/payloads.ts';
import { ErrorEnvelope, pageEnvelope, successEnvelope } from './envelopes.ts';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_PATTERN,
  REPLAYED_HEADER,
} from './idempotency.ts';
import {
  type Answer,
  API_PREFIX,
  errorsOf,
  type MinimumRole,
  type Route,
  takesIdempotencyKey,
} from './route.ts';
import { schemaRules } from './schema-rules.ts';

/** What the document reads of an endpoint group. */
export interface DocumentedGroup {
  name: string;
  /** What the group is about: the description of its tag. */
  description?: string;
  routes: readonly Route[];
}

/** Options of {@link buildOpenApi}. */
export interface OpenApiOptions {
  /**
   * The API's base URL, ending in `/api/v1`; without it the document names
   * the relative `/api/v1`.
   */
  serverUrl?: string;
}

type AnySchema = v.GenericSchema;

/** Names of the reusable parts of the document. */
const SECURITY_SCHEME = 'apiKey';
const HEADERS = {
  limit: 'RateLimit-Limit',
  remaining: 'RateLimit-Remaining',
  reset: 'RateLimit-Reset',
  retryAfter: 'Retry-After',
  replayed: REPLAYED_HEADER,
} as const;

/** The reusable request header of every write. */
const IDEMPOTENCY_KEY_PARAMETER = 'IdempotencyKey';

const schemaRef = (name: string): ReferenceObject => ({
  $ref: `#/components/schemas/${name}`,
});
const headerRef = (name: string): ReferenceObject => ({
  $ref: `#/components/headers/${name}`,
});
const parameterRef = (name: string): ReferenceObject => ({
  $ref: `#/components/parameters/${name}`,
});

/** The title a schema carries (`v.title`), if any. */
const titleOf = (schema: AnySchema): string | undefined => {
  if (!('pipe' in schema) || !Array.isArray(schema.pipe)) return undefined;
  let title: string | undefined;
  for (const item of schema.pipe as { type?: string; title?: string }[]) {
    if (item.type === 'title') title = item.title;
  }
  return title;
};

/** The schemas nested in a schema: entries, items, options, wrapped… */
const childrenOf = (schema: AnySchema): AnySchema[] => {
  const s = schema as unknown as Record<string, unknown>;
  const children: unknown[] = [];
  if (Array.isArray(s.pipe)) {
    children.push(
      ...(s.pipe as { kind?: string }[]).filter(
        (item, i) => i > 0 && item.kind === 'schema',
      ),
    );
  }
  if (s.entries && typeof s.entries === 'object') {
    children.push(...Object.values(s.entries));
  }
  for (const key of ['item', 'wrapped', 'rest', 'key', 'value']) {
    if (s[key] && typeof s[key] === 'object') children.push(s[key]);
  }
  for (const key of ['options', 'items']) {
    if (Array.isArray(s[key])) children.push(...(s[key] as unknown[]));
  }
  return children.filter(
    (child): child is AnySchema =>
      typeof child === 'object' &&
      child !== null &&
      (child as { kind?: string }).kind === 'schema',
  );
};

/**
 * Every titled schema reachable from `roots`, by title: they become named
 * component schemas. Two different schemas under one title are a mistake
 * of the declarations (one view, one schema), so it throws.
 */
const titledSchemas = (roots: AnySchema[]): Map<string, AnySchema> => {
  const found = new Map<string, AnySchema>();
  const seen = new Set<AnySchema>();
  const visit = (schema: AnySchema) => {
    if (seen.has(schema)) return;
    seen.add(schema);
    const title = titleOf(schema);
    if (title !== undefined) {
      const known = found.get(title);
      if (known && known !== schema) {
        throw new Error(
          `Two different schemas are titled ${title}: a view has one schema, reuse it (or give the other its own title)`,
        );
      }
      found.set(title, schema);
    }
    for (const child of childrenOf(schema)) visit(child);
  };
  for (const root of roots) visit(root);
  return found;
};

/** Drops what a component or a property does not need to say. */
const tidy = (schema: JsonSchema): SchemaObject => {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    // A constant says its type too (renderers show `any` otherwise).
    if ('const' in value && !('type' in value)) {
      const constant: unknown = value.const;
      out.type =
        constant === null
          ? 'null'
          : typeof constant === 'number'
            ? Number.isInteger(constant)
              ? 'integer'
              : 'number'
            : typeof constant;
    }
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$schema' || key === '$defs') continue;
      if (key === 'required' && Array.isArray(inner) && inner.length === 0) {
        continue;
      }
      out[key] = walk(inner);
    }
    return out;
  };
  return walk(schema) as SchemaObject;
};

/**
 * Converts schemas to JSON Schema 2020-12 (the dialect of OpenAPI 3.1).
 * Answers (views) describe their output and name their titled schemas as
 * components; requests describe their input, what a client sends before
 * any transform (a query string's digits, an address before trimming).
 */
class SchemaConverter {
  private readonly definitions: Record<string, AnySchema>;

  constructor(titled: Map<string, AnySchema>) {
    this.definitions = Object.fromEntries(titled);
  }

  private readonly common: ConversionConfig = {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    // What valibot's converter cannot read (shared/http/schema-rules.ts).
    overrideAction: schemaRules(() => this.requestConfig),
  };

  private get requestConfig(): ConversionConfig {
    return { ...this.common, typeMode: 'input' };
  }

  /** Answers name their titled schemas by reference to the components. */
  private get answerConfig(): ConversionConfig {
    return {
      ...this.common,
      overrideRef: ({ referenceId }) => schemaRef(referenceId).$ref,
    };
  }

  /** An answer's schema, with `$ref`s to the titled ones. */
  answer(schema: AnySchema): SchemaObject {
    return tidy(
      toJsonSchema(schema, {
        ...this.answerConfig,
        definitions: this.definitions,
      }),
    );
  }

  /** The component schema of each title. */
  components(): Record<string, SchemaObject> {
    const converted = toJsonSchemaDefs(this.definitions, this.answerConfig);
    return Object.fromEntries(
      Object.keys(converted)
        .sort()
        .map((name) => [name, tidy(converted[name] as JsonSchema)]),
    );
  }

  /** A request's schema (path, query or body), as the client sends it. */
  request(schema: AnySchema): SchemaObject {
    return tidy(toJsonSchema(schema, this.requestConfig));
  }
}

/**
 * A query or path value that the route parses as a whole number (digits,
 * then `Number`): described as an integer with its bounds, as OpenAPI
 * describes numbers in a query string.
 */
const integerParameter = (schema: AnySchema): SchemaObject | undefined => {
  let inner = schema as unknown as Record<string, unknown>;
  let fallback: unknown;
  if (inner.type === 'optional' && inner.wrapped) {
    fallback = inner.default;
    inner = inner.wrapped as Record<string, unknown>;
  }
  if (!Array.isArray(inner.pipe)) return undefined;
  const flat = (pipe: unknown[]): Record<string, unknown>[] =>
    pipe.flatMap((item) => {
      const step = item as Record<string, unknown>;
      return Array.isArray(step.pipe) ? flat(step.pipe as unknown[]) : [step];
    });
  const steps = flat(inner.pipe as unknown[]);
  const digits = steps.some(
    (step) =>
      step.type === 'regex' && String(step.requirement) === String(/^\d+$/),
  );
  const toNumber = steps.findIndex(
    (step) =>
      step.kind === 'transformation' &&
      (step.type === 'transform' || step.type === 'to_number'),
  );
  if (!digits || toNumber === -1) return undefined;
  const result: SchemaObject = { type: 'integer' };
  for (const step of steps.slice(toNumber + 1)) {
    if (step.type === 'min_value') result.minimum = Number(step.requirement);
    if (step.type === 'max_value') result.maximum = Number(step.requirement);
  }
  if (fallback !== undefined && typeof fallback !== 'function') {
    result.default = Number(fallback);
  }
  return result;
};

/** The parameters of an object schema (path or query), one per key. */
const parametersOf = (
  converter: SchemaConverter,
  schema: AnySchema | undefined,
  where: 'path' | 'query',
): ParameterObject[] => {
  if (!schema) return [];
  const entries = (schema as unknown as { entries?: Record<string, AnySchema> })
    .entries;
  if (!entries) return [];
  const object = converter.request(schema);
  const required = new Set(
    Array.isArray(object.required) ? object.required : [],
  );
  return Object.entries(entries).map(([name, entry]) => {
    const converted = {
      ...((object.properties?.[name] as SchemaObject | undefined) ?? {}),
    };
    const { description } = converted;
    delete converted.description;
    const parameter: ParameterObject = {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: integerParameter(entry) ?? converted,
    };
    if (description) parameter.description = description;
    return parameter;
  });
};

const SUCCESS_ENVELOPE_SCHEMAS = {
  json: successEnvelope,
  page: pageEnvelope,
} as const;

/** The response of one declared success status. */
const successResponse = (
  converter: SchemaConverter,
  answer: Answer,
  headers: Record<string, ReferenceObject> | undefined,
): ResponseObject => {
  const withHeaders = (response: ResponseObject): ResponseObject =>
    headers ? { ...response, headers } : response;
  switch (answer.kind) {
    case 'json':
    case 'page':
      return withHeaders({
        description: answer.description,
        content: {
          'application/json': {
            schema: converter.answer(
              SUCCESS_ENVELOPE_SCHEMAS[answer.kind](answer.schema),
            ),
          },
        },
      });
    case 'html':
      return withHeaders({
        description: answer.description,
        content: { 'text/html': { schema: { type: 'string' } } },
      });
    case 'file':
      return withHeaders({
        description: answer.description,
        content: {
          [answer.contentType]: {
            schema:
              answer.contentType === 'application/json'
                ? { type: 'object' }
                : { type: 'string' },
          },
        },
      });
  }
};

/** One error status of an operation: its codes, in the error envelope. */
const errorResponse = (
  route: Pick<Route, 'role'>,
  codes: ErrorCode[],
  headers: Record<string, ReferenceObject> | undefined,
): ResponseObject => {
  const list = codes
    .map((code) => `- \`${code}\`: ${ERROR_CODES[code].meaning}`)
    .join('\n');
  const description = `${codes.length === 1 ? 'Error code' : 'Error codes'}:\n\n${list}`;
  const content: ResponseObject['content'] =
    route.role === 'public' &&
    !codes.every((code) => code.startsWith('rateLimit.'))
      ? // Public routes are pages: their errors are pages too (but the
        // edge's 429s, in the JSON envelope).
        { 'text/html': { schema: { type: 'string' } } }
      : {
          'application/json': {
            schema: {
              allOf: [
                schemaRef(titleOf(ErrorEnvelope) ?? 'Error'),
                {
                  type: 'object',
                  properties: { code: { type: 'string', enum: codes } },
                },
              ],
            },
          },
        };
  return { description, ...(headers ? { headers } : {}), content };
};

/**
 * The error answers of the pipeline, shared by the keyed operations whose
 * own codes add nothing to that status: one reusable response each.
 */
const PIPELINE_RESPONSES: Partial<
  Record<number, { name: string; codes: ErrorCode[] }>
> = {
  400: { name: 'InvalidRequest', codes: ['request.invalid'] },
  401: { name: 'Unauthorized', codes: ['auth.missingKey', 'auth.invalidKey'] },
  403: { name: 'Forbidden', codes: ['auth.roleTooLow', 'auth.scopeMissing'] },
  413: { name: 'BodyTooLarge', codes: ['request.tooLarge'] },
  415: { name: 'UnsupportedMediaType', codes: ['request.mediaType'] },
  429: { name: 'RateLimited', codes: ['rateLimit.exceeded'] },
  500: { name: 'InternalError', codes: ['internal'] },
};

/** The rate-limit headers of an answer to a keyed request with `status`. */
const rateLimitHeaders = (
  role: MinimumRole,
  status: number,
): Record<string, ReferenceObject> | undefined => {
  // Public routes are not counted; a 401 is refused before counting.
  if (role === 'public' || status === 401) return undefined;
  return {
    [HEADERS.limit]: headerRef(HEADERS.limit),
    [HEADERS.remaining]: headerRef(HEADERS.remaining),
    [HEADERS.reset]: headerRef(HEADERS.reset),
    ...(status === 429
      ? { [HEADERS.retryAfter]: headerRef(HEADERS.retryAfter) }
      : {}),
  };
};

/**
 * The statuses a write's answer may be given again with, kept for its
 * `Idempotency-Key`: its successes and its own refusals, never what the
 * pipeline answers before the key is read (a key, a role, a rate, a media
 * type), a refusal of the key itself (422), nor a failure.
 */
const NEVER_REPLAYED = new Set([401, 403, 415, 422, 429, 500, 503]);

/** The headers of an answer of `route` with `status`. */
const answerHeaders = (
  route: Pick<Route, 'method' | 'role' | 'readOnly'>,
  status: number,
): Record<string, ReferenceObject> | undefined => {
  const counted = rateLimitHeaders(route.role, status);
  if (!takesIdempotencyKey(route)) return counted;
  return {
    ...counted,
    ...(NEVER_REPLAYED.has(status)
      ? {}
      : { [HEADERS.replayed]: headerRef(HEADERS.replayed) }),
    // A repeat while the first request runs (`idempotency.inProgress`).
    ...(status === 409
      ? { [HEADERS.retryAfter]: headerRef(HEADERS.retryAfter) }
      : {}),
  };
};

/** The sentence that states who may call an operation. */
const ROLE_SENTENCES: Record<MinimumRole, string> = {
  public:
    '**No API key.** A public route: anyone may call it, without `x-api-key`.',
  member:
    '**Role: member.** Any key of the organization may call it (member, admin or owner).',
  admin:
    "**Role: admin.** An admin's or owner's key; a member's key answers 403 `auth.roleTooLow`.",
};

/**
 * The sentence that states which scoped keys may call an operation (a key
 * without scopes may call every one its role allows).
 */
const scopeSentence = (route: Route): string | undefined => {
  if (route.role === 'public') return undefined;
  if (route.scope === 'none') {
    return '**Scopes: any.** Every key may call it, whatever its scopes.';
  }
  const [own, read] = scopesCovering(route);
  if (!own) {
    return '**Scopes: full access only.** A key narrowed to scopes answers 403 `auth.scopeMissing`.';
  }
  return `**Scope: ${own}${read ? ` (or ${read}: a GET)` : ''}.** A key narrowed to other scopes answers 403 \`auth.scopeMissing\`.`;
};

const camel = (words: string[]): string =>
  words
    .flatMap((word) => word.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word, i) =>
      i === 0
        ? word.charAt(0).toLowerCase() + word.slice(1)
        : word.charAt(0).toUpperCase() + word.slice(1),
    )
    .join('');

const singular = (word: string): string =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : word.endsWith('s')
      ? word.slice(0, -1)
      : word;

const isParameter = (segment: string) => /^\{.+\}$/.test(segment);

/** Whether a GET reads many things: a page or an array (a plural path while undeclared). */
const readsMany = (route: Route, lastWord: string): boolean => {
  const answer = route.responses?.[200];
  if (!answer) return lastWord.endsWith('s');
  if (answer.kind === 'page') return true;
  return answer.kind === 'json' && answer.schema.type === 'array';
};

/**
 * A stable operation id, `group.verbNoun`, from the method and the path:
 * `GET /lists` → `lists.list`, `POST /lists` → `lists.create`,
 * `GET /lists/{listId}` → `lists.get`, `DELETE
 * /contacts/{contactId}/tags/{tagId}` → `contacts.deleteTag`, `GET
 * /docs/{asset}` → `docs.getAsset`, `POST
 * /domains/{domainId}/verify` → `domains.verify` (a POST to a singular
 * word is an action). The group's own name is left out of the noun.
 */
export const operationIdOf = (group: string, route: Route): string => {
  const segments = route.path.split('/').filter(Boolean);
  const last = segments.at(-1) ?? '';
  const lastParam = segments.findLastIndex(isParameter);
  const drop = (words: string[]) =>
    words[0] === group ? words.slice(1) : words;
  let name: string;
  if (isParameter(last)) {
    const noun = segments
      .slice(0, -1)
      .filter((s) => !isParameter(s))
      .at(-1);
    const verb = {
      GET: 'get',
      POST: 'post',
      PUT: 'replace',
      PATCH: 'update',
      DELETE: 'delete',
    }[route.method];
    const parameter = last.slice(1, -1);
    // `{tagId}` names an item of the collection before it; `{asset}` is a
    // thing of its own.
    name = /id$/i.test(parameter)
      ? camel([verb, ...(noun && noun !== group ? [singular(noun)] : [])])
      : camel([verb, parameter]);
  } else {
    const words = drop(segments.slice(lastParam + 1));
    const plural = words.length > 0 && (words.at(-1) ?? '').endsWith('s');
    const empty = words.length === 0;
    switch (route.method) {
      case 'GET':
        name = camel([readsMany(route, last) ? 'list' : 'get', ...words]);
        break;
      case 'POST':
        name =
          empty || plural
            ? camel([
                'create',
                ...words.slice(0, -1),
                singular(words.at(-1) ?? ''),
              ])
            : camel(words);
        break;
      case 'PUT':
        name = camel(['replace', ...words]);
        break;
      case 'PATCH':
        name = camel(['update', ...words]);
        break;
      case 'DELETE':
        name = camel(['delete', ...words]);
        break;
    }
  }
  return `${group}.${name}`;
};

/** The operation of one route. */
const operationOf = (
  converter: SchemaConverter,
  group: DocumentedGroup,
  route: Route,
): OperationObject => {
  const parameters: (ParameterObject | ReferenceObject)[] = [
    ...parametersOf(converter, route.params, 'path'),
    ...parametersOf(converter, route.query, 'query'),
    ...(takesIdempotencyKey(route)
      ? [parameterRef(IDEMPOTENCY_KEY_PARAMETER)]
      : []),
  ];
  const responses: ResponsesObject = {};
  for (const [status, answer] of Object.entries(route.responses)) {
    if (!answer) continue;
    responses[status] = successResponse(
      converter,
      answer,
      answerHeaders(route, Number(status)),
    );
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(route)) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const codes = byStatus.get(status) ?? [];
    const shared = PIPELINE_RESPONSES[status];
    // A write's answer it may give again says so: not the shared one.
    const replayable =
      takesIdempotencyKey(route) && !NEVER_REPLAYED.has(status);
    responses[String(status)] =
      route.role !== 'public' &&
      !replayable &&
      shared &&
      codes.length === shared.codes.length &&
      codes.every((code) => shared.codes.includes(code))
        ? { $ref: `#/components/responses/${shared.name}` }
        : errorResponse(route, codes, answerHeaders(route, status));
  }
  const operation: OperationObject = {
    operationId: operationIdOf(group.name, route),
    tags: [group.name],
    summary: route.summary,
    description: [
      route.description,
      ROLE_SENTENCES[route.role],
      scopeSentence(route),
    ]
      .filter(Boolean)
      .join('\n\n'),
    ...(parameters.length ? { parameters } : {}),
  };
  if (route.body) {
    const body: RequestBodyObject = {
      // A body the schema accepts absent is optional.
      required: !v.safeParse(route.body, undefined).success,
      content: {
        'application/json': { schema: converter.request(route.body) },
      },
    };
    operation.requestBody = body;
  }
  operation.responses = responses;
  if (route.role === 'public') operation.security = [];
  else {
    operation['x-required-role'] = route.role;
    // The scopes, any one of which lets a scoped key call it.
    operation['x-scopes'] =
      route.scope === 'none' ? [...SCOPES] : scopesCovering(route);
  }
  return operation;
};

const ANSWER_HEADERS: Record<string, HeaderObject> = {
  [HEADERS.limit]: {
    description: 'Requests this key may make in a window of 60 seconds (120).',
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADERS.remaining]: {
    description: 'Requests this key has left in the current window.',
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADERS.reset]: {
    description: 'Seconds until the current window ends.',
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADERS.retryAfter]: {
    description:
      'Seconds to wait before the next request (on a 429; on a 409 `idempotency.inProgress`, before repeating the write).',
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADERS.replayed]: {
    description:
      '`true` on an answer given again: the answer of the first request with this `Idempotency-Key`, which did nothing this time. Absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const IDEMPOTENCY_KEY: ParameterObject = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes the write safe to send again. The first request with a key runs; a repeat of the same request (method, path, query and body) within 24 hours gets its answer back, marked `Idempotent-Replayed: true`, and does nothing. The key, with another request, answers 422 `idempotency.keyReused`; while the first runs, 409 `idempotency.inProgress` with `Retry-After`. Keys belong to the API key (and its organization). Use a new random key (a UUID) per operation.',
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
  },
  example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
};

const codeTable = (): string =>
  [
    '| Code | Status | Meaning |',
    '| --- | --- | --- |',
    ...Object.entries(ERROR_CODES).map(
      ([code, { status, meaning }]) =>
        `| \`${code}\` | ${status} | ${meaning.replaceAll('|', '\\|')} |`,
    ),
  ].join('\n');

const overview = (): string =>
  [
    'A multi-tenant email marketing service: lists, contacts, tags, templates, topics, sender settings and domains of an organization.',
    '## Authentication and roles',
    'Every request carries an API key in the `x-api-key` header, except the public routes (links in emails, this reference). A key acts for one organization with the role its creator holds there: a member reads, an admin or owner also writes. Each operation states its role (`x-required-role`).',
    `A key may be narrowed to scopes (${SCOPES.map((scope) => `\`${scope}\``).join(', ')}; \`POST /api-keys\`): \`read\` covers every GET, each other scope the operations of its groups. A key without scopes has full access. Each operation states the scopes that let a scoped key call it (\`x-scopes\`); outside them it answers 403 \`auth.scopeMissing\` and nothing is done.`,
    '## Rate limit',
    'Each key may make 120 requests in any 60 seconds. Answers to a counted request carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 also carries `Retry-After`.',
    '## Idempotency',
    'Every write (`POST`, `PATCH`, `DELETE`; not the reads that take a body, `POST /render` and `POST /exports`) takes an optional `Idempotency-Key` header: 1 to 255 visible ASCII characters, a new random one (a UUID) per operation. The first request with a key runs and its answer is kept for 24 hours — success or refusal, but not a 5xx nor an answer that says to retry. A repeat of the same request (method, path, query, body) gets that answer back with `Idempotent-Replayed: true` and does nothing; the key with another request answers 422 `idempotency.keyReused`; a repeat while the first still runs answers 409 `idempotency.inProgress` with `Retry-After`. Keys belong to the API key that sent them. A request that failed (5xx) may be sent again with its key: it runs again, and finds what it created the first time rather than creating it twice.',
    '## Answers',
    'A success is `{"success": true, "data": …}`; a page of items adds `pagination: {total, page, limit, totalPages}` (`?page=` from 1, `?limit=` from 1 to 100, 20 by default). An error is `{"error": "…", "code": "…"}`; a 400 for invalid input adds `details: [{field, message}]`, one per offending field.',
    '## Error codes',
    codeTable(),
  ].join('\n\n');

/** The headers of a webhook delivery (the Standard Webhooks scheme). */
const WEBHOOK_HEADERS: ParameterObject[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      "The event id (the body's `id`): the same on every attempt, and for the same fact. Drop a repeat.",
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in seconds since the epoch: refuse one too far from your clock (5 minutes).',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      "One or more `v1,<base64>` signatures, space-separated: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` with the endpoint's secret (the bytes of its `whsec_` value, base64-decoded). Two while a rolled secret's old value is still valid. Any one matching is enough; the `standardwebhooks` libraries check it.",
    schema: { type: 'string' },
  },
];

/** `contact.tagged` → `onContactTagged`. */
const webhookOperationId = (type: WebhookEventType) =>
  `on${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}`;

/** The delivery of one event type, as the document's `webhooks` lists it. */
const webhookOperation = (type: WebhookEventType): OperationObject => ({
  operationId: webhookOperationId(type),
  summary: type,
  description: `${WEBHOOK_EVENTS[type]}\n\nPOSTed to each enabled endpoint that takes \`${type}\`, signed; see the webhooks tag.`,
  tags: ['webhooks'],
  security: [],
  parameters: WEBHOOK_HEADERS,
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: schemaRef(webhookPayloadTitle(type)),
      },
    },
  },
  responses: {
    '2XX': {
      description:
        'Received. Any other answer, a redirect included, or none within 5 seconds, is a failure: the delivery is retried.',
    },
  },
});

/**
 * Builds the OpenAPI 3.1 document of `groups`: one operation per route,
 * tagged with its group.
 */
export const buildOpenApi = (
  groups: readonly DocumentedGroup[],
  options: OpenApiOptions = {},
): OpenAPIObject => {
  const routes = groups.flatMap((group) => group.routes);
  const answerSchemas = routes.flatMap((route) =>
    Object.values(route.responses).flatMap((answer) =>
      answer && (answer.kind === 'json' || answer.kind === 'page')
        ? [answer.schema]
        : [],
    ),
  );
  const converter = new SchemaConverter(
    titledSchemas([
      ...answerSchemas,
      ...WEBHOOK_EVENT_TYPES.map(webhookPayloadSchema),
      pageEnvelope(v.unknown()),
      ErrorEnvelope,
    ]),
  );

  const builder = OpenApiBuilder.create()
    .addOpenApiVersion('3.1.0')
    .addInfo({
      title: 'Email marketing API',
      // The version in the paths (`/api/v1`).
      version: API_PREFIX.slice(API_PREFIX.lastIndexOf('/') + 1),
      description: overview(),
    })
    .addServer({
      url: options.serverUrl ?? API_PREFIX,
      description: 'This deployment',
    })
    .addSecurityScheme(SECURITY_SCHEME, {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
      description:
        'An API key of the organization, created with `POST /api-keys` or the admin CLI. It acts with the role its creator holds in the organization, within its scopes if it has any.',
    });
  builder.rootDoc.security = [{ [SECURITY_SCHEME]: [] }];
  for (const [name, header] of Object.entries(ANSWER_HEADERS)) {
    builder.addHeader(name, header);
  }
  builder.addParameter(IDEMPOTENCY_KEY_PARAMETER, IDEMPOTENCY_KEY);
  for (const [status, shared] of Object.entries(PIPELINE_RESPONSES)) {
    if (!shared) continue;
    builder.addResponse(
      shared.name,
      errorResponse(
        { role: 'member' },
        shared.codes,
        rateLimitHeaders('member', Number(status)),
      ),
    );
  }
  for (const [name, schema] of Object.entries(converter.components())) {
    builder.addSchema(name, schema);
  }

  const seen = new Set<string>();
  const paths = new Map<string, Record<string, OperationObject>>();
  for (const group of groups) {
    builder.addTag({
      name: group.name,
      'x-displayName': group.name.charAt(0).toUpperCase() + group.name.slice(1),
      ...(group.description ? { description: group.description } : {}),
    });
    for (const route of group.routes) {
      const operation = operationOf(converter, group, route);
      const id = operation.operationId ?? '';
      if (seen.has(id)) {
        throw new Error(
          `Two operations derive the id ${id}; the second is ${route.method} ${route.path}`,
        );
      }
      seen.add(id);
      const item = paths.get(route.path) ?? {};
      item[route.method.toLowerCase()] = operation;
      paths.set(route.path, item);
    }
  }
  for (const [path, item] of paths) builder.addPath(path, item);
  for (const type of WEBHOOK_EVENT_TYPES) {
    builder.addWebhook(type, { post: webhookOperation(type) });
  }
  return builder.getSpec();
};
