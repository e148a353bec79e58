/**
 * The request pipeline shared by every endpoint group, as middy middleware:
 * authentication → rate limit → route → role → JSON body → Idempotency-Key
 * → validation → handler → envelope, with errors mapped in one place. Runtime-neutral: the same
 * handler runs on Lambda and behind the local gateway.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
} from 'aws-lambda';
import * as contentType from 'content-type';
import { createAuthenticator } from '../access/authenticate.ts';
import { type Caller, roleAtLeast } from '../access/model.ts';
import type { AccessDeps } from '../access/ports.ts';
import { consumeRequest, type RateLimitState } from '../access/rate-limit.ts';
import { scopeRefusal } from '../access/scopes.ts';
import {
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';
import type { IdempotencyDeps } from '../idempotency/ports.ts';
import { logger } from '../observability.ts';
import { parse, reservedKeyIssue } from '../validation.ts';
import { toErrorResponse } from './errors.ts';
import { idempotent } from './idempotency.ts';
import { envelopeOf, type HttpResult } from './responses.ts';
import { type Route, resourcePath, routeKey } from './route.ts';

/** What the middlewares learn about a request, for the ones after them. */
/**
 * What the pipeline itself reads: keys, rate counters, time, and the
 * records of Idempotency-Key requests (with the ids a run derives).
 */
export type PipelineDeps = Pick<
  AccessDeps,
  'access' | 'rateLimits' | 'organizations' | 'clock' | 'apiKeyCacheTtlSeconds'
> &
  IdempotencyDeps;

interface PipelineContext extends Context {
  caller?: Caller;
  rateLimit?: RateLimitState;
  route?: Route;
}

type Request = middy.Request<
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Error,
  PipelineContext
>;

type Middleware = middy.MiddlewareObj<
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Error,
  PipelineContext
>;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

const header = (event: APIGatewayProxyEvent, name: string) => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value ?? undefined;
  }
  return undefined;
};

const renderJson = (statusCode: number, body: unknown) => ({
  statusCode,
  headers: { ...JSON_HEADERS },
  body: JSON.stringify(body),
});

const render = (result: HttpResult): APIGatewayProxyResult => {
  if (result.kind === 'html' || result.kind === 'file') {
    throw new Error(`An API route answered a ${result.kind}, not JSON`);
  }
  return renderJson(result.statusCode, envelopeOf(result));
};

/** Adds the RateLimit headers to every response of a counted request. */
const rateLimitHeaders = (): Middleware => {
  const decorate = async (request: Request) => {
    const state = request.context.rateLimit;
    if (!state || !request.response) return;
    request.response.headers = {
      ...request.response.headers,
      'RateLimit-Limit': String(state.limit),
      'RateLimit-Remaining': String(state.remaining),
      'RateLimit-Reset': String(state.resetSeconds),
      ...(state.allowed ? {} : { 'Retry-After': String(state.resetSeconds) }),
    };
  };
  return { after: decorate, onError: decorate };
};

/** Renders every error as the spec's error body; logs the unexpected ones. */
const errorResponses = (): Middleware => ({
  onError: async (request) => {
    const rendered = toErrorResponse(request.error);
    if (rendered.unexpected) {
      logger.error('Unexpected error', {
        error: request.error,
        route: `${request.event.httpMethod} ${request.event.resource}`,
      });
    }
    request.response = renderJson(rendered.statusCode, rendered.body);
  },
});

/** Step 1 and 2: who is calling, and may it call again this minute? */
const authenticateAndCount = (deps: PipelineDeps): Middleware => {
  const authenticate = createAuthenticator(deps);
  return {
    before: async (request) => {
      const caller = await authenticate(header(request.event, 'x-api-key'));
      request.context.caller = caller;
      const state = await consumeRequest(deps, caller.keyId);
      request.context.rateLimit = state;
      if (!state.allowed) throw new RateLimitedError(state.resetSeconds);
    },
  };
};

/**
 * Step 3: the route of the request, and may this key take it? An unknown
 * route, or a public one reached through the keyed pipeline, is a 404; a
 * role too low is a 403 before the body is read, so a member key learns
 * nothing of an admin route's body rules (the same 403 whatever it sent);
 * so is a route outside the scopes a key is narrowed to, after the role.
 */
const findRoute = (routes: readonly Route[]): Middleware => {
  const table = new Map(
    routes.map((r) => [routeKey(r.method, resourcePath(r)), r]),
  );
  return {
    before: async (request) => {
      const { event } = request;
      const found = table.get(routeKey(event.httpMethod, event.resource));
      if (!found || found.role === 'public') {
        throw new NotFoundError(
          'route.notFound',
          `No route ${event.httpMethod} ${event.path}`,
        );
      }
      const caller = request.context.caller;
      if (caller && !roleAtLeast(caller.role, found.role)) {
        throw new ForbiddenError(
          'auth.roleTooLow',
          `This operation needs the ${found.role} role; your key acts as ${caller.role}`,
        );
      }
      const refusal = caller && scopeRefusal(caller.scopes, found);
      if (refusal) throw new ForbiddenError('auth.scopeMissing', refusal);
      request.context.route = found;
    },
  };
};

/**
 * The media type of a body, decided here: JSON (`application/json` or a
 * `+json` type, in any letter case) in UTF-8, or a 415. A header that does
 * not parse is a 415 too: the body cannot be read as anything.
 */
const requireJsonMediaType = (value: string | undefined): string => {
  const refuse = (why: string, cause?: unknown) =>
    new UnsupportedMediaTypeError(
      'request.mediaType',
      `Request bodies must be JSON in UTF-8 (content-type: application/json): ${why}`,
      cause === undefined ? undefined : { cause },
    );
  if (value === undefined) throw refuse('no content-type was sent');
  let parsed: contentType.ContentType;
  try {
    parsed = contentType.parse(value);
  } catch (error) {
    throw refuse(`"${value}" is not a media type`, error);
  }
  // The package lower-cases the type and parameter names, not values.
  const { type, parameters } = parsed;
  if (type !== 'application/json' && !/^application\/[^/]+\+json$/.test(type)) {
    throw refuse(`${type} is not JSON`);
  }
  const charset = parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw refuse(`charset ${parameters.charset} is not UTF-8`);
  }
  return type;
};

/**
 * Step 4: JSON bodies, for the routes that declare one; any other route
 * ignores a body sent to it. A request without a body skips it (a body is
 * optional on some POSTs). The media type is decided first (415); the
 * body is then parsed by @middy/http-json-body-parser, given the media type
 * in the form it expects, so its only failure left is bad JSON (400). A
 * body naming a reserved key (`__proto__`, `constructor`, `prototype`) at
 * any depth is a 400 naming its path: validation would drop it unseen.
 */
const jsonBody = (): Middleware => {
  const parser = httpJsonBodyParser();
  return {
    before: async (request) => {
      const { event } = request;
      if (
        !request.context.route?.body ||
        event.body === null ||
        event.body === undefined ||
        event.body.trim() === ''
      ) {
        (event as { body: unknown }).body = undefined;
        return;
      }
      const type = requireJsonMediaType(header(event, 'content-type'));
      event.headers = Object.fromEntries(
        Object.entries(event.headers ?? {}).filter(
          ([name]) => name.toLowerCase() !== 'content-type',
        ),
      );
      event.headers['Content-Type'] = type;
      try {
        // The parser's own request type is looser than ours; it only reads event.
        await parser.before?.(request as never);
      } catch (error) {
        throw new ValidationError(
          'The body is not valid JSON',
          [{ field: 'body', message: 'must be valid JSON' }],
          { cause: error },
        );
      }
      const reserved = reservedKeyIssue(event.body);
      if (reserved) {
        throw new ValidationError(
          `Invalid request: ${reserved.field}: ${reserved.message}`,
          [reserved],
        );
      }
    },
  };
};

/**
 * The path parameters as the route reads them: one still percent-encoded
 * (an address's `%40`, should the gateway hand it over as sent) is decoded
 * once. No id holds `%`, so only addresses are concerned; a malformed
 * escape is left for validation to refuse.
 */
const decodedPath = (
  parameters: Record<string, string | undefined>,
): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries(parameters).map(([name, value]) => {
      if (!value?.includes('%')) return [name, value];
      try {
        return [name, decodeURIComponent(value)];
      } catch {
        return [name, value];
      }
    }),
  );

/** Steps 5 and 6: validate the input, run the route. */
const dispatch =
  <D>(deps: D) =>
  async (
    event: APIGatewayProxyEvent,
    context: PipelineContext,
  ): Promise<APIGatewayProxyResult> => {
    const { caller, route: found } = context;
    if (!caller || !found || found.role === 'public') {
      throw new Error('dispatch ran without a caller or a keyed route');
    }

    const params = found.params
      ? parse(found.params, decodedPath(event.pathParameters ?? {}))
      : undefined;
    const query = found.query
      ? parse(found.query, event.queryStringParameters ?? {})
      : undefined;
    const body = found.body
      ? parse(found.body, (event as { body: unknown }).body)
      : undefined;
    return render(
      // The route was found among the group's own, typed with its deps.
      await (found as Route<D>).handle(deps, {
        caller,
        params,
        query,
        body,
        sourceIp: event.requestContext?.identity?.sourceIp,
      }),
    );
  };

/**
 * Builds the Lambda handler of an endpoint group from its route
 * declarations. Middleware first, handler last.
 */
export const createApiHandler = <D extends PipelineDeps>(
  deps: D,
  routes: readonly Route<D>[],
) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, PipelineContext>({
    timeoutEarlyInMillis: 0,
  })
    .use(injectLambdaContext(logger))
    .use(rateLimitHeaders())
    .use(errorResponses())
    .use(authenticateAndCount(deps))
    .use(findRoute(routes))
    .use(jsonBody())
    .handler(idempotent(deps, dispatch));
