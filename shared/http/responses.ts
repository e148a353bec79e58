/**
 * Response helpers: the success envelope of the spec, built in one place.
 */
import type { Page, PageRequest } from '../ports.ts';

/** A status code and a body, before serialisation. */
export interface HttpResult {
  statusCode: number;
  /** JSON-able data, or the page itself when `contentType` is HTML. */
  body: unknown;
  contentType?: 'text/html; charset=utf-8';
}

/** An HTML page (public routes). */
export const htmlPage = (statusCode: number, html: string): HttpResult => ({
  statusCode,
  body: html,
  contentType: 'text/html; charset=utf-8',
});

/** 200 `{success: true, data}`. */
export const ok = (data: unknown): HttpResult => ({
  statusCode: 200,
  body: { success: true, data },
});

/** 201 `{success: true, data}`. */
export const created = (data: unknown): HttpResult => ({
  statusCode: 201,
  body: { success: true, data },
});

/** 202 `{success: true, data}`: accepted, background work pending. */
export const accepted = (data: unknown): HttpResult => ({
  statusCode: 202,
  body: { success: true, data },
});

/** 200 `{success: true, data: [...], pagination: {total, page, limit, totalPages}}`. */
export const paginated = <T>(
  page: Page<T>,
  { page: number, limit }: PageRequest,
): HttpResult => ({
  statusCode: 200,
  body: {
    success: true,
    data: page.items,
    pagination: {
      total: page.total,
      page: number,
      limit,
      totalPages: Math.ceil(page.total / limit),
    },
  },
});
