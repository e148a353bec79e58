/**
 * Route declarations. Each endpoint group declares its routes once: what a
 * route takes (path, query and body schemas), what it answers (a schema per
 * success status, and the error codes it can answer) and who may call it.
 * The Lambda router, the CDK API resources, the local gateway, the OpenAPI
 * document and the contract checks of the tests all derive from them.
 */
import type * as v from 'valibot';
import type { Caller } from '../access/model.ts';
import type { RouteScope } from '../access/scopes.ts';
import type { ErrorCode } from '../errors.ts';
import type {
  FileResult,
  HtmlResult,
  HttpResult,
  JsonResult,
  PageResult,
} from './responses.ts';

/** Every path of the API starts with this prefix. */
export const API_PREFIX = '/api/v1';

/** HTTP methods the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The lowest role allowed: members read, admin-level writes. `public`
 * routes take no key at all (links in emails, hosted pages).
 */
export type MinimumRole = 'public' | 'member' | 'admin';

type AnySchema = v.GenericSchema;
type Parsed<S> = S extends AnySchema ? v.InferOutput<S> : undefined;

/** The success statuses a route may declare. */
export type SuccessStatus = 200 | 201 | 202;

/** `{success: true, data}` whose data matches `schema`. */
export interface JsonAnswer<S extends AnySchema = AnySchema> {
  kind: 'json';
  schema: S;
  description: string;
}

/** A page of items matching `schema`, with `pagination`. */
export interface PageAnswer<S extends AnySchema = AnySchema> {
  kind: 'page';
  schema: S;
  description: string;
}

/** An HTML page. */
export interface HtmlAnswer {
  kind: 'html';
  description: string;
}

/**
 * A file sent as is with its media type (public routes): the OpenAPI
 * document, the assets of its reference page.
 */
export interface FileAnswer<T extends string = string> {
  kind: 'file';
  /** The media type, e.g. `application/json`, `text/javascript`. */
  contentType: T;
  description: string;
}

/** How a route answers one success status. */
export type Answer = JsonAnswer | PageAnswer | HtmlAnswer | FileAnswer;

/** Declares a JSON answer: `{success: true, data}`. */
export const json = <S extends AnySchema>(
  schema: S,
  description: string,
): JsonAnswer<S> => ({ kind: 'json', schema, description });

/** Declares a paginated answer: `{success: true, data: [...], pagination}`. */
export const page = <S extends AnySchema>(
  schema: S,
  description: string,
): PageAnswer<S> => ({ kind: 'page', schema, description });

/** Declares an HTML page. */
export const html = (description: string): HtmlAnswer => ({
  kind: 'html',
  description,
});

/** Declares a file answer: a body of this media type, sent as is. */
export const file = <const T extends string>(
  contentType: T,
  description: string,
): FileAnswer<T> => ({ kind: 'file', contentType, description });

/** The answers of a route, by status. */
export type Responses = Partial<Record<SuccessStatus, Answer>>;

type ResultFor<S extends number, A> =
  A extends JsonAnswer<infer D>
    ? JsonResult<S, v.InferOutput<D>>
    : A extends PageAnswer<infer I>
      ? PageResult<S, v.InferOutput<I>>
      : A extends HtmlAnswer
        ? HtmlResult<S>
        : A extends FileAnswer<infer T>
          ? FileResult<S, T>
          : never;

/** What a handler may return: exactly the declared statuses and bodies. */
export type ResultOf<R extends Responses> = {
  [S in keyof R & SuccessStatus]: ResultFor<S, R[S]>;
}[keyof R & SuccessStatus];

/** What a route's handler receives: the caller and the validated input. */
export interface RouteRequest<
  P = unknown,
  Q = unknown,
  B = unknown,
  C extends Caller | undefined = Caller | undefined,
> {
  /** The key's caller; public routes have none. */
  caller: C;
  params: P;
  query: Q;
  body: B;
  /** The client's IP address as the gateway saw it. */
  sourceIp?: string;
  /** What the browser said of itself (public routes). */
  visitor?: { userAgent?: string; referrer?: string };
}

/**
 * One declared route of an endpoint group, whose handler needs `D`: the
 * `Deps` slice of its group's bindings (`DepsOf` in shared/bindings.ts).
 * Code that only reads the declaration takes `Route` (any slice).
 */
export interface Route<D = never> {
  method: HttpMethod;
  /** Path below `/api/v1`, with `{name}` parameters, e.g. `/lists/{listId}`. */
  path: string;
  /**
   * Where the route is served: the API (the default, below `/api/v1`) or
   * the hosted pages' own origin (from its root; a public form whose body
   * is `application/x-www-form-urlencoded`).
   */
  origin?: 'api' | 'pages';
  role: MinimumRole;
  /**
   * The scope the route belongs to: a key narrowed to scopes takes it only
   * with this one (or `read`, for a GET); `none`: any key. Its group's
   * (`routeFor`) unless the route says otherwise. A keyed route without
   * one is open to full-access keys only.
   */
  scope?: RouteScope;
  /**
   * The operation changes nothing though its method is not GET (a read
   * that takes a body: `POST /render`, `POST /exports`): like a GET, it
   * ignores an `Idempotency-Key`, and no answer of it is kept.
   */
  readOnly?: true;
  /** One line: what the operation does. */
  summary: string;
  /** Its rules, in Markdown (the spec's numbered rules where it has them). */
  description: string;
  params?: AnySchema;
  query?: AnySchema;
  body?: AnySchema;
  responses: Responses;
  /**
   * The error codes the operation itself can answer; those of the pipeline
   * (key, rate, validation, role) are added by `errorsOf`.
   */
  errors: readonly ErrorCode[];
  // A property, not a method: parameters are then checked strictly, so a
  // route needing more than its group binds is not a Route of that group.
  handle: (deps: D, request: RouteRequest) => Promise<HttpResult>;
}

type RouteInput<R extends MinimumRole, P, Q, B> = {
  method: HttpMethod;
  path: string;
  origin?: 'api' | 'pages';
  role: R;
  /** Overrides the group's scope for this route. */
  scope?: RouteScope;
  readOnly?: true;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
};

type Handler<D, R extends MinimumRole, P, Q, B, Result> = (
  deps: D,
  request: RouteRequest<
    Parsed<P>,
    Parsed<Q>,
    Parsed<B>,
    R extends 'public' ? undefined : Caller
  >,
) => Promise<Result>;

/** Declares one route of a group whose functions have the deps `D`. */
export type RouteDeclarer<D> = <
  R extends MinimumRole,
  const A extends Responses,
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
>(
  definition: RouteInput<R, P, Q, B> & {
    description: string;
    responses: A;
    errors: readonly ErrorCode[];
    handle: Handler<D, R, P, Q, B, ResultOf<A>>;
  },
) => Route<D>;

/**
 * The `route` of a group whose bindings give `D` (`routeFor<DepsOf<typeof
 * bindings>>({ scope })`). It types each handler's deps from the bindings,
 * its input from its schemas, its caller from its role (a keyed route
 * always has one, a public route none), and its result from its responses:
 * a handler cannot return a status or a body its declaration does not
 * name, nor call what its group did not bind. `scope` is the scope of the
 * group's routes (`shared/access/scopes.ts`), declared once per group.
 */
export const routeFor =
  <D>(group: { scope?: RouteScope } = {}): RouteDeclarer<D> =>
  (definition) =>
    ({
      ...(group.scope ? { scope: group.scope } : {}),
      ...definition,
    }) as unknown as Route<D>;

/**
 * Whether a route takes an `Idempotency-Key`: every keyed write (a method
 * other than GET) but the reads declared `readOnly`.
 */
export const takesIdempotencyKey = (
  route: Pick<Route, 'method' | 'role' | 'readOnly'>,
): boolean =>
  route.role !== 'public' && route.method !== 'GET' && !route.readOnly;

/**
 * Every error code a route can answer: its own, and those of the pipeline
 * before it (no key, a bad key, the rate limit, a role too low, a scope
 * missing, input that does not validate, a body that is not JSON, an
 * `Idempotency-Key` that is invalid, reused or still running, an
 * unexpected failure).
 */
export const errorsOf = (route: Route): ErrorCode[] => {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.role !== 'public') {
    codes.add('auth.missingKey');
    codes.add('auth.invalidKey');
    codes.add('rateLimit.exceeded');
  }
  if (route.role === 'public') {
    // The edge: API Gateway's method throttle and the firewall's limit
    // per address answer 429 before the page is reached.
    codes.add('rateLimit.exceeded');
    codes.add('rateLimit.perSource');
  }
  if (route.role === 'admin') codes.add('auth.roleTooLow');
  if (route.role !== 'public' && route.scope !== 'none') {
    codes.add('auth.scopeMissing');
  }
  if (route.params || route.query || route.body) codes.add('request.invalid');
  if (route.body) {
    codes.add('request.mediaType');
    codes.add('request.tooLarge');
  }
  if (takesIdempotencyKey(route)) {
    codes.add('idempotency.keyInvalid');
    codes.add('idempotency.keyReused');
    codes.add('idempotency.inProgress');
  }
  codes.add('internal');
  return [...codes];
};

/** The full path of a route, as API Gateway names its resource. */
export const resourcePath = (route: Pick<Route, 'path' | 'origin'>): string =>
  route.origin === 'pages' ? route.path : `${API_PREFIX}${route.path}`;

/** The key a router dispatches on: method and resource path. */
export const routeKey = (method: string, resource: string): string =>
  `${method.toUpperCase()} ${resource}`;
