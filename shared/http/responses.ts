/**
 * What a handler returns: a status and a body of a declared kind (JSON
 * data, a page of items, an HTML page, a file of a media type). The
 * pipelines render them into the spec's envelopes; `route()` checks at
 * compile time that a handler returns only what its route declares.
 */
import type * as v from 'valibot';
import type { Page, PageRequest } from '../ports.ts';
import type { Pagination as PaginationSchema } from './envelopes.ts';

/** `pagination` of a paginated answer (its schema is in `envelopes.ts`). */
export type Pagination = v.InferOutput<typeof PaginationSchema>;

/** `{success: true, data}` with this status. */
export interface JsonResult<S extends number = number, T = unknown> {
  statusCode: S;
  kind: 'json';
  data: T;
}

/** `{success: true, data: items, pagination}` with this status. */
export interface PageResult<S extends number = number, T = unknown> {
  statusCode: S;
  kind: 'page';
  items: T[];
  pagination: Pagination;
}

/** An HTML page with this status (public routes). */
export interface HtmlResult<S extends number = number> {
  statusCode: S;
  kind: 'html';
  html: string;
  /**
   * The page's own Content-Security-Policy, for a page that runs scripts
   * (the API reference); other pages get the public pipeline's, which
   * allows none.
   */
  contentSecurityPolicy?: string;
  /**
   * The page may be framed by the origins its CSP's `frame-ancestors`
   * names (a sign-up page embedded by its owner): no `X-Frame-Options`.
   */
  framable?: boolean;
}

/**
 * An HTML page answered with an error status: thrown by a public route
 * whose error is a page of its own (a form shown again with its errors),
 * and rendered as is by the public pipeline.
 */
export class HtmlAnswerError extends Error {
  constructor(readonly result: HtmlResult<400>) {
    super('The form has errors');
  }
}

/** A file sent as is, with its media type (public routes). */
export interface FileResult<
  S extends number = number,
  T extends string = string,
> {
  statusCode: S;
  kind: 'file';
  /** The media type; the body is text in UTF-8. */
  contentType: T;
  body: string;
  /** How long a client may keep it; without it, nothing is stored. */
  maxAgeSeconds?: number;
}

/** Any result, before rendering. */
export type HttpResult = JsonResult | PageResult | HtmlResult | FileResult;

const json =
  <S extends number>(statusCode: S) =>
  <T>(data: T): JsonResult<S, T> => ({ statusCode, kind: 'json', data });

/** 200 `{success: true, data}`. */
export const ok = json(200);

/** 201 `{success: true, data}`: created. */
export const created = json(201);

/** 202 `{success: true, data}`: accepted, background work pending. */
export const accepted = json(202);

/** 200 `{success: true, data: [...], pagination: {total, page, limit, totalPages}}`. */
export const paginated = <T>(
  page: Page<T>,
  { page: number, limit }: PageRequest,
): PageResult<200, T> => ({
  statusCode: 200,
  kind: 'page',
  items: page.items,
  pagination: {
    total: page.total,
    page: page.page ?? number,
    limit,
    totalPages: Math.ceil(page.total / limit),
    ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
    ...(page.totalExact !== undefined ? { totalExact: page.totalExact } : {}),
  },
});

/** An HTML page, with its own Content-Security-Policy if it needs one. */
export const htmlPage = <S extends number>(
  statusCode: S,
  html: string,
  options: { contentSecurityPolicy?: string; framable?: boolean } = {},
): HtmlResult<S> => ({ statusCode, kind: 'html', html, ...options });

/** A file of a media type, sent as is. */
export const fileOf = <S extends number, const T extends string>(
  statusCode: S,
  contentType: T,
  body: string,
  options: { maxAgeSeconds?: number } = {},
): FileResult<S, T> => ({
  statusCode,
  kind: 'file',
  contentType,
  body,
  ...options,
});

/** The JSON body of a JSON or page result: the spec's success envelope. */
export const envelopeOf = (result: JsonResult | PageResult): unknown =>
  result.kind === 'json'
    ? { success: true, data: result.data }
    : { success: true, data: result.items, pagination: result.pagination };
