/**
 * Route declarations. Each endpoint group declares its routes once; the
 * Lambda router, the CDK API resources, the local gateway and (later) the
 * OpenAPI document are all derived from these declarations.
 */
import type * as v from 'valibot';
import type { Caller } from '../access/model.ts';
import type { Deps } from '../deps.ts';
import type { HttpResult } from './responses.ts';

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
}

/** One declared route of an endpoint group. */
export interface Route {
  method: HttpMethod;
  /** Path below `/api/v1`, with `{name}` parameters, e.g. `/lists/{listId}`. */
  path: string;
  role: MinimumRole;
  summary: string;
  params?: AnySchema;
  query?: AnySchema;
  body?: AnySchema;
  handle(deps: Deps, request: RouteRequest): Promise<HttpResult>;
}

/**
 * Declares a route, typing its handler's input from its schemas, and its
 * caller from its role: a keyed route always has one, a public route none.
 */
export const route = <
  R extends MinimumRole,
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
>(definition: {
  method: HttpMethod;
  path: string;
  role: R;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  handle(
    deps: Deps,
    request: RouteRequest<
      Parsed<P>,
      Parsed<Q>,
      Parsed<B>,
      R extends 'public' ? undefined : Caller
    >,
  ): Promise<HttpResult>;
}): Route => definition as Route;

/** The full path of a route, as API Gateway names its resource. */
export const resourcePath = (route: Pick<Route, 'path'>): string =>
  `${API_PREFIX}${route.path}`;

/** The key a router dispatches on: method and resource path. */
export const routeKey = (method: string, resource: string): string =>
  `${method.toUpperCase()} ${resource}`;
