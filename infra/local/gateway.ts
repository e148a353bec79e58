/**
 * The local gateway: turns each HTTP request into the API Gateway (REST)
 * proxy event that AWS would send, invokes the same handler module, and
 * writes its result back. Routes come from the same declarations as the
 * CDK API, so both expose exactly the same paths.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { EndpointGroup, GroupHandler } from '../../functions/groups.ts';
import type { Deps } from '../../shared/deps.ts';
import type { ErrorCode, FieldIssue } from '../../shared/errors.ts';
import { resourcePath } from '../../shared/http/route.ts';

/** API Gateway's payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface ResolvedRoute {
  group: string;
  method: string;
  resource: string;
  segments: string[];
  invoke: GroupHandler;
}

/** The route table of the gateway: literal segments win over parameters. */
export const buildRouteTable = (
  groups: readonly EndpointGroup[],
  deps: Deps,
): ResolvedRoute[] =>
  groups
    .flatMap((group) => {
      const handler = group.createHandler(deps);
      return group.routes.map((route) => {
        const resource = resourcePath(route);
        return {
          group: group.name,
          method: route.method,
          resource,
          segments: resource.split('/').slice(1),
          invoke: handler,
        };
      });
    })
    .sort(
      (a, b) =>
        a.segments.filter(isParam).length - b.segments.filter(isParam).length,
    );

const isParam = (segment: string) => /^\{.+\}$/.test(segment);

/** Finds the declared route of a request, with its path parameters. */
export const matchRoute = (
  table: ResolvedRoute[],
  method: string,
  path: string,
): { route: ResolvedRoute; params: Record<string, string> } | undefined => {
  const parts = path.split('/').slice(1);
  for (const route of table) {
    if (route.method !== method || route.segments.length !== parts.length) {
      continue;
    }
    const params: Record<string, string> = {};
    const matches = route.segments.every((segment, i) => {
      const part = parts[i] ?? '';
      if (!isParam(segment)) return segment === part;
      if (part === '') return false;
      params[segment.slice(1, -1)] = decodeURIComponent(part);
      return true;
    });
    if (matches) return { route, params };
  }
  return undefined;
};

/** The path of a request target exactly as sent, without its query. */
export const rawPathOf = (target: string | undefined): string => {
  const path = (target ?? '/').split('?')[0] ?? '/';
  return path.startsWith('/') ? path : `/${path}`;
};

const isDecodable = (path: string): boolean => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

const readBody = (request: IncomingMessage): Promise<Buffer | 'too-large'> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () =>
      resolve(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks)),
    );
    request.on('error', reject);
  });

/** An error the gateway answers itself, in the envelope, with a listed code. */
const sendJson = (
  response: ServerResponse,
  statusCode: number,
  body: { error: string; code: ErrorCode; details?: FieldIssue[] },
) => {
  response.writeHead(statusCode, {
    'content-type': 'application/json; charset=utf-8',
  });
  response.end(JSON.stringify(body));
};

/** Builds the REST proxy event API Gateway would send for this request. */
const toEvent = (
  request: IncomingMessage,
  path: string,
  url: URL,
  route: ResolvedRoute,
  params: Record<string, string>,
  body: Buffer,
): APIGatewayProxyEvent => {
  // Maps without a prototype: a header or parameter may be named
  // `constructor` or `__proto__`, which API Gateway passes like any other.
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  const now = Date.now();
  return {
    resource: route.resource,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(params).length ? params : null,
    stageVariables: null,
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: route.method,
      path,
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: now,
      resourceId: route.resource,
      resourcePath: route.resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: headers['x-api-key'] ?? null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
};

const lambdaContext = (functionName: string, requestId: string): Context => {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/local/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
};

/** Serves the declared routes of every group over HTTP. */
export const createGateway = (
  groups: readonly EndpointGroup[],
  deps: Deps,
): Server => {
  const table = buildRouteTable(groups, deps);
  return createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      // The path as sent: WHATWG URL parsing resolves `..` and `%2e%2e`
      // segments, which API Gateway does not; a dot segment must never
      // reach another resource.
      const path = rawPathOf(request.url);
      if (!isDecodable(path)) {
        request.resume();
        sendJson(response, 400, {
          error: 'The path has a malformed percent-encoding',
          code: 'request.invalid',
          details: [{ field: 'path', message: 'malformed percent-encoding' }],
        });
        return;
      }
      const match = matchRoute(table, request.method ?? 'GET', path);
      // API Gateway answers unknown paths and methods before any key check.
      if (!match) {
        request.resume();
        sendJson(response, 404, {
          error: `No route ${request.method} ${path}`,
          code: 'route.notFound',
        });
        return;
      }
      const body = await readBody(request);
      if (body === 'too-large') {
        sendJson(response, 413, {
          error: 'Request body over 10 MB',
          code: 'request.tooLarge',
        });
        return;
      }
      const event = toEvent(
        request,
        path,
        url,
        match.route,
        match.params,
        body,
      );
      const result = await match.route.invoke(
        event,
        lambdaContext(match.route.group, event.requestContext.requestId),
      );
      response.writeHead(result.statusCode, {
        ...(result.headers as Record<string, string> | undefined),
      });
      response.end(
        result.isBase64Encoded
          ? Buffer.from(result.body, 'base64')
          : result.body,
      );
    } catch (error) {
      console.error('Local gateway failure', error);
      if (!response.headersSent) {
        sendJson(response, 500, {
          error: 'Internal server error',
          code: 'internal',
        });
      } else {
        response.end();
      }
    }
  });
};
