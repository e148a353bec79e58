/**
 * The in-process test client: the whole pipeline of each endpoint group
 * (the real `createHandler`, as the Lambda and the local gateway run it),
 * invoked with the REST proxy event API Gateway sends, built field for field
 * as the local gateway builds it (and answering what the gateway answers
 * itself: 400 for a path that does not decode, 404 for no route, 413), over
 * test deps on the embedded DynamoDB engine. No server, no spawned process.
 */

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { inject } from 'vitest';
import { type EndpointGroup, endpointGroups } from '../../functions/groups.ts';
import { parseInvocation } from '../../infra/admin/commands.ts';
import type { LocalAsync } from '../../infra/local/async.ts';
import {
  buildRouteTable,
  matchRoute,
  rawPathOf,
} from '../../infra/local/gateway.ts';
import type { AdminDeps } from '../../shared/access/ports.ts';
import type { Deps } from '../../shared/deps.ts';
import { type Route, resourcePath, routeKey } from '../../shared/http/route.ts';
import type { QueueSenders } from '../../shared/ports.ts';
import type { ReputationThresholds } from '../../shared/reputation/model.ts';
import type { SignupFormSettings } from '../../shared/signup/ports.ts';
import { contractProblems } from './contract.ts';
import {
  createTestDeps,
  type fixedClock,
  scanTable,
  TEST_PUBLIC_API_URL,
} from './dynamo.ts';
import { lambdaContext } from './events.ts';

/** What a call answers: status, headers and the parsed body. */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely and assert its shape
  json: any;
  /** The raw body (HTML pages, or to compare bodies byte for byte). */
  body: string;
}

/** Options of one call. */
export interface CallOptions {
  key?: string;
  body?: unknown;
  /** A body sent as is (not JSON-encoded). */
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  sourceIp?: string;
  /** `pages`: a path of the hosted pages' origin (no `/api/v1`). */
  origin?: 'api' | 'pages';
}

/** The in-process client of one test table. */
export interface ApiClient {
  deps: Deps;
  adminDeps: AdminDeps;
  tableName: string;
  events: Awaited<ReturnType<typeof createTestDeps>>['events'];
  providerStateFile: string;
  /** A request below `/api/v1`, e.g. `call('POST', '/lists', {key, body})`. */
  call(method: string, path: string, options?: CallOptions): Promise<ApiAnswer>;
  get(path: string, options?: CallOptions): Promise<ApiAnswer>;
  post(path: string, options?: CallOptions): Promise<ApiAnswer>;
  patch(path: string, options?: CallOptions): Promise<ApiAnswer>;
  delete(path: string, options?: CallOptions): Promise<ApiAnswer>;
  /**
   * An admin CLI command run in process, e.g. `admin('org', 'create', '--name', 'Acme')`.
   * `local …` commands act on this client's provider state file and on the
   * DNS server shared by the run (`local dns clear` is refused).
   */
  admin(...argv: string[]): Promise<Record<string, string>>;
  /** Every item of the table, sorted by key: to prove a call wrote nothing. */
  scan(): Promise<Record<string, unknown>[]>;
  /**
   * The writes this client's deps sent so far, rate-limit logs aside: when
   * a call leaves the count as it was, it wrote nothing (no scan needed).
   */
  writes(): number;
  /**
   * The table as `scan()` reads it, the last one read again while this
   * client sent no write since: for tests where it is the table's only
   * writer (route sweeps proving, call after call, that nothing changed).
   */
  snapshot(): Promise<Record<string, unknown>[]>;
}

/** An organization with an owner key, a member key and its id. */
export interface TestOrganization {
  orgId: string;
  ownerKey: string;
  memberKey: string;
}

/** API Gateway's payload limit (and the local gateway's). */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

const gatewayJson = (status: number, json: Record<string, unknown>) => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  json,
  body: JSON.stringify(json),
});

/**
 * The route of a request target, or what the gateway answers itself (as
 * infra/local/gateway.ts does): 400 for a path that does not decode, 404
 * for no declared route, 413 for a body over 10 MB.
 */
const gatewayAnswer = (
  table: ReturnType<typeof buildRouteTable>,
  method: string,
  target: string,
  bodyBytes: number,
): ApiAnswer | NonNullable<ReturnType<typeof matchRoute>> => {
  const path = rawPathOf(target);
  try {
    decodeURIComponent(path);
  } catch {
    return gatewayJson(400, {
      error: 'The path has a malformed percent-encoding',
      code: 'request.invalid',
      details: [{ field: 'path', message: 'malformed percent-encoding' }],
    });
  }
  const match = matchRoute(table, method, path);
  if (!match) {
    return gatewayJson(404, {
      error: `No route ${method} ${path}`,
      code: 'route.notFound',
    });
  }
  if (bodyBytes > MAX_BODY_BYTES) {
    return gatewayJson(413, {
      error: 'Request body over 10 MB',
      code: 'request.tooLarge',
    });
  }
  return match;
};

/**
 * The REST proxy event of a request, field for field as the local gateway
 * builds it (and API Gateway sends it): headers as sent and their
 * multi-value form, the decoded query and its multi-value form, the path as
 * sent, the request context with the caller's address.
 */
const gatewayEvent = (request: {
  method: string;
  target: string;
  resource: string;
  params: Record<string, string>;
  headers: Map<string, string>;
  body: Buffer;
  sourceIp: string;
}): APIGatewayProxyEvent => {
  const path = rawPathOf(request.target);
  const url = new URL(request.target, 'http://localhost');
  // Own properties for any name, `__proto__` and `constructor` included,
  // as API Gateway's JSON gives them.
  const multiQuery = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) {
    multiQuery.set(name, [...(multiQuery.get(name) ?? []), value]);
  }
  const query = Object.fromEntries(
    [...multiQuery].map(([name, values]) => [name, values.at(-1) ?? '']),
  );
  const hasQuery = Object.keys(query).length > 0;
  const requestId = randomUUID();
  return {
    resource: request.resource,
    path,
    httpMethod: request.method,
    headers: Object.fromEntries(request.headers),
    multiValueHeaders: Object.fromEntries(
      [...request.headers].map(([name, value]) => [name, [value]]),
    ),
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery
      ? Object.fromEntries(multiQuery)
      : null,
    pathParameters: Object.keys(request.params).length ? request.params : null,
    stageVariables: null,
    body: request.body.length ? request.body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      path,
      stage: 'local',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: request.resource,
      resourcePath: request.resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: request.headers.get('x-api-key') ?? null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userAgent: request.headers.get('user-agent') ?? null,
        userArn: null,
      },
    },
  };
};

/**
 * A client over a fresh table. With `groups`, only those groups are served
 * (default: every group of the API).
 */
export const createApiClient = async (
  options: {
    clock?: ReturnType<typeof fixedClock>;
    groups?: readonly EndpointGroup[];
    /** The sign-up form's defences (default: the shipped defaults). */
    signupForms?: Partial<SignupFormSettings>;
    providerStatusTtlSeconds?: number;
    /** The reputation guardrail's thresholds (default ours). */
    reputationThresholds?: ReputationThresholds;
    /**
     * The asynchronous half (`prepareLocalAsync`): its queues, scheduler
     * and simulated SES events; start its pollers with `client.deps`.
     */
    asyncHalf?: Pick<LocalAsync, 'mailerWith' | 'senders' | 'scheduler'> & {
      sentLogFile?: string;
    };
    /** Links' base URLs, when a test serves the gateway over HTTP. */
    publicApiUrl?: string;
    pagesUrl?: string;
    /**
     * Stand-ins for the consumer queues (by group name) without the
     * asynchronous half: a test records what a route sends.
     */
    queues?: QueueSenders<string>;
  } = {},
): Promise<ApiClient> => {
  const created = await createTestDeps({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.providerStatusTtlSeconds !== undefined
      ? { providerStatusTtlSeconds: options.providerStatusTtlSeconds }
      : {}),
    ...(options.reputationThresholds
      ? { reputationThresholds: options.reputationThresholds }
      : {}),
    ...(options.asyncHalf ? { asyncHalf: options.asyncHalf } : {}),
    ...(options.signupForms ? { signupForms: options.signupForms } : {}),
    ...(options.publicApiUrl ? { publicApiUrl: options.publicApiUrl } : {}),
    ...(options.pagesUrl ? { pagesUrl: options.pagesUrl } : {}),
    ...(options.queues ? { queues: options.queues } : {}),
  });
  let lastSnapshot:
    | { writes: number; table: Record<string, unknown>[] }
    | undefined;
  const { admin, tableName } = created;
  const scheduler = options.asyncHalf?.scheduler;
  const deps = scheduler ? { ...created.deps, scheduler } : created.deps;
  const groups = options.groups ?? endpointGroups;
  const table = buildRouteTable(groups, deps);
  const declared = new Map<string, Route>(
    groups.flatMap((group) =>
      group.routes.map((r) => [routeKey(r.method, resourcePath(r)), r]),
    ),
  );

  const call = async (
    method: string,
    path: string,
    o: CallOptions = {},
  ): Promise<ApiAnswer> => {
    // The request as a client puts it on the wire: the query encoded by
    // URLSearchParams, the body as UTF-8 (a lone surrogate becomes U+FFFD).
    const search = o.query ? new URLSearchParams(o.query).toString() : '';
    const base = o.origin === 'pages' ? '' : '/api/v1';
    const target = `${base}${path}${search ? `?${search}` : ''}`;
    const text =
      o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
    const bytes = Buffer.from(text ?? '', 'utf8');
    const headers = new Map<string, string>([
      ['host', 'api.example.test'],
      ['accept', '*/*'],
      ['user-agent', 'in-process-client'],
    ]);
    if (o.key) headers.set('x-api-key', o.key);
    if (text !== undefined || o.contentType) {
      headers.set('content-type', o.contentType ?? 'application/json');
    }
    if (text !== undefined) headers.set('content-length', String(bytes.length));
    // A header of the options replaces the one of the same name, any case.
    for (const [name, value] of Object.entries(o.headers ?? {})) {
      for (const sent of [...headers.keys()]) {
        if (sent.toLowerCase() === name.toLowerCase()) headers.delete(sent);
      }
      headers.set(name, value);
    }
    // What the gateway answers itself, or the route it invokes.
    const answered = gatewayAnswer(table, method, target, bytes.length);
    if ('status' in answered) return answered;
    const event = gatewayEvent({
      method,
      target,
      resource: answered.route.resource,
      params: answered.params,
      headers,
      body: bytes,
      sourceIp: o.sourceIp ?? '203.0.113.7',
    });
    const result = await answered.route.invoke(event, lambdaContext());
    // Every answer keeps the route's declared contract, or the test fails.
    const route = declared.get(routeKey(method, answered.route.resource));
    const problems = route
      ? contractProblems(route, {
          statusCode: result.statusCode,
          headers: (result.headers ?? {}) as Record<string, string>,
          body: result.body,
        })
      : [`no declared route ${method} ${answered.route.resource}`];
    if (problems.length) {
      throw new Error(`Contract broken: ${problems.join('; ')}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(result.body);
    } catch {
      json = undefined;
    }
    return {
      status: result.statusCode,
      headers: Object.fromEntries(
        Object.entries(result.headers ?? {}).map(([k, v]) => [
          k.toLowerCase(),
          String(v),
        ]),
      ),
      json,
      body: result.body,
    };
  };

  return {
    deps,
    adminDeps: admin,
    tableName,
    events: created.events,
    providerStateFile: created.providerStateFile,
    call,
    get: (path, o) => call('GET', path, o),
    post: (path, o) => call('POST', path, o),
    patch: (path, o) => call('PATCH', path, o),
    delete: (path, o) => call('DELETE', path, o),
    admin: async (...argv) => {
      const { command, flags } = parseInvocation(argv);
      if (command.local) {
        // The DNS server is shared by the run: clearing it would remove
        // the records of other test files.
        if (command.words === 'local dns clear') {
          throw new Error(`"${command.words}" would clear the shared DNS`);
        }
        return (await command.run(
          {
            dnsRecordsFile: inject('dnsRecordsFile'),
            providerStateFile: created.providerStateFile,
            // No simulated SES events in process yet: an empty sent log,
            // and no stack.json in the scratch dir.
            sentLogFile:
              options.asyncHalf?.sentLogFile ??
              join(inject('scratchDir'), `sent-${tableName}.jsonl`),
            dataDir: inject('scratchDir'),
            // A clock of this client's own (the deps keep their own Clock).
            clockFile: created.providerStateFile.replace(
              /\.json$/,
              '.clock.json',
            ),
          },
          flags,
        )) as unknown as Record<string, string>;
      }
      return (await command.run(admin, flags)) as Record<string, string>;
    },
    scan: () => scanTable(tableName),
    writes: () => created.writes.count,
    snapshot: async () => {
      const writes = created.writes.count;
      if (lastSnapshot?.writes !== writes) {
        lastSnapshot = { writes, table: await scanTable(tableName) };
      }
      return lastSnapshot.table;
    },
  };
};

/**
 * Creates an organization (on the sending allowlist) with an owner and a
 * member, each with a key, through the admin commands.
 */
export const createOrganizationWithKeys = async (
  client: ApiClient,
  name = 'Acme',
): Promise<TestOrganization> => {
  const org = await client.admin('org', 'create', '--name', name);
  const orgId = String(org.id);
  await client.admin('org', 'allow', '--org', orgId);
  const stamp = orgId.slice(-12);
  const owner = `owner-${stamp}@example.test`;
  const member = `member-${stamp}@example.test`;
  await client.admin(
    'member',
    'add',
    '--org',
    orgId,
    '--email',
    owner,
    '--role',
    'owner',
  );
  await client.admin(
    'member',
    'add',
    '--org',
    orgId,
    '--email',
    member,
    '--role',
    'member',
  );
  const ownerKey = await client.admin(
    'key',
    'create',
    '--org',
    orgId,
    '--email',
    owner,
  );
  const memberKey = await client.admin(
    'key',
    'create',
    '--org',
    orgId,
    '--email',
    member,
  );
  return {
    orgId,
    ownerKey: String(ownerKey.apiKey),
    memberKey: String(memberKey.apiKey),
  };
};

/**
 * The shape of a running local stack (test/support/local-stack.ts) served
 * in process: the same `call`, `admin` and `fetch` of public links, so a
 * test written against the HTTP API runs without a server.
 */
export interface InProcessStack {
  client: ApiClient;
  /** The organization's id, and an owner key (as the demo key). */
  orgId: string;
  demoKey: string;
  info: { api: string; mailbox: string };
  call(
    path: string,
    options?: { key?: string; method?: string; body?: unknown },
    // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely and assert its shape
  ): Promise<{ status: number; headers: Headers; json: any }>;
  admin(...args: string[]): Promise<Record<string, string>>;
  /** A request to an absolute URL of the API (a link from an email). */
  fetch(
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; headers: Headers; text(): Promise<string> }>;
}

/** An organization allowed to send, with an owner key, served in process. */
export const createInProcessStack = async (
  name = 'In-process stack',
): Promise<InProcessStack> => {
  const client = await createApiClient();
  const org = await createOrganizationWithKeys(client, name);
  const base = TEST_PUBLIC_API_URL;
  const headersOf = (answer: ApiAnswer) => new Headers(answer.headers);
  return {
    client,
    orgId: org.orgId,
    demoKey: org.ownerKey,
    info: { api: base, mailbox: inject('mailboxUrl') },
    call: async (path, { key, method = 'GET', body } = {}) => {
      const url = new URL(`${base}${path}`);
      const answer = await client.call(method, url.pathname.slice(7), {
        ...(key ? { key } : {}),
        ...(body === undefined
          ? {}
          : typeof body === 'string'
            ? { rawBody: body }
            : { body }),
        ...(url.search ? { query: Object.fromEntries(url.searchParams) } : {}),
        sourceIp: '127.0.0.1',
      });
      return {
        status: answer.status,
        headers: headersOf(answer),
        json: answer.json,
      };
    },
    admin: (...args) => client.admin(...args),
    fetch: async (link, init = {}) => {
      if (!link.startsWith(base)) throw new Error(`not an API URL: ${link}`);
      const url = new URL(link);
      const answer = await client.call(
        init.method ?? 'GET',
        url.pathname.slice(new URL(base).pathname.length),
        {
          ...(url.search
            ? { query: Object.fromEntries(url.searchParams) }
            : {}),
          ...(init.body !== undefined ? { rawBody: init.body } : {}),
          ...(init.headers?.['content-type']
            ? { contentType: init.headers['content-type'] }
            : {}),
          sourceIp: '127.0.0.1',
        },
      );
      return {
        status: answer.status,
        headers: headersOf(answer),
        text: async () => answer.body,
      };
    },
  };
};
