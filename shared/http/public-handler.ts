/**
 * The pipeline of public routes (no API key): links in emails and hosted
 * pages. Validation as for the API; answers are HTML pages, errors included.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
} from 'aws-lambda';
import {
  ExpiredLinkError,
  InvalidLinkError,
  NotFoundError,
  ValidationError,
} from '../errors.ts';
import { logger } from '../observability.ts';
import { parse } from '../validation.ts';
import { toErrorResponse } from './errors.ts';
import { renderPage } from './pages.ts';
import { envelopeOf, HtmlAnswerError, type HttpResult } from './responses.ts';
import { type Route, resourcePath, routeKey } from './route.ts';

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // For browsers without CSP level 2: the pages are never framed either.
  'x-frame-options': 'DENY',
};

/**
 * Renders a result: HTML and files as is (a page may bring its own
 * Content-Security-Policy; a file may be kept by clients for a while),
 * anything else in the JSON envelope.
 */
export const renderPublic = (result: HttpResult): APIGatewayProxyResult => {
  switch (result.kind) {
    case 'html': {
      const { 'x-frame-options': framing, ...others } = SECURITY_HEADERS;
      return {
        statusCode: result.statusCode,
        headers: {
          'content-type': 'text/html; charset=utf-8',
          ...others,
          ...(result.framable ? {} : { 'x-frame-options': framing }),
          ...(result.contentSecurityPolicy
            ? { 'content-security-policy': result.contentSecurityPolicy }
            : {}),
        },
        body: result.html,
      };
    }
    case 'file':
      return {
        statusCode: result.statusCode,
        headers: {
          'content-type': `${result.contentType}; charset=utf-8`,
          ...SECURITY_HEADERS,
          ...(result.maxAgeSeconds
            ? { 'cache-control': `public, max-age=${result.maxAgeSeconds}` }
            : {}),
        },
        body: result.body,
      };
    default:
      return {
        statusCode: result.statusCode,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          ...SECURITY_HEADERS,
        },
        body: JSON.stringify(envelopeOf(result)),
      };
  }
};

/** The page shown for an error of a public route. */
const errorPage = async (error: unknown): Promise<APIGatewayProxyResult> => {
  // A page of the route's own (a form with its errors): as it is.
  if (error instanceof HtmlAnswerError) return renderPublic(error.result);
  const [statusCode, heading, paragraph] =
    error instanceof MediaTypeError
      ? [
          415,
          'This form could not be read',
          'Send it from the page, as a browser does.',
        ]
      : error instanceof ExpiredLinkError
        ? [
            410,
            'This link has expired',
            'Links in our emails work for a limited time. Ask for a new email and use its link.',
          ]
        : error instanceof InvalidLinkError
          ? [
              400,
              'This link is not valid',
              'It may have been cut or changed on the way. Open it again from the email, or copy the whole address.',
            ]
          : error instanceof ValidationError
            ? [
                400,
                'This link is incomplete',
                'Open it again from the email, or copy the whole address.',
              ]
            : error instanceof NotFoundError
              ? [404, 'Not found', 'There is nothing at this address.']
              : [
                  toErrorResponse(error).statusCode,
                  'Something went wrong',
                  'Please try again in a few minutes.',
                ];
  if (statusCode >= 500) {
    logger.error('Unexpected error on a public route', { error });
  }
  return renderPublic({
    statusCode,
    kind: 'html',
    html: await renderPage({
      title: heading,
      heading,
      paragraphs: [paragraph],
    }),
  });
};

/** The largest form body read; past it the form is refused (413). */
const MAX_FORM_BYTES = 64 * 1024;

/** A form body in a type this pipeline does not read. */
class MediaTypeError extends Error {}

/** A header of the request, whatever its case. */
const headerOf = (
  event: APIGatewayProxyEvent,
  name: string,
): string | undefined => {
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name && value) return value;
  }
  return undefined;
};

/**
 * The fields of a form body (`application/x-www-form-urlencoded`, as a
 * browser sends a form without JavaScript): the first value of each name.
 */
const formOf = (event: APIGatewayProxyEvent): Record<string, string> => {
  const type = (headerOf(event, 'content-type') ?? '').split(';')[0]?.trim();
  if (type?.toLowerCase() !== 'application/x-www-form-urlencoded') {
    throw new MediaTypeError('A form body is expected');
  }
  const raw = event.isBase64Encoded
    ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
    : (event.body ?? '');
  if (Buffer.byteLength(raw) > MAX_FORM_BYTES) {
    throw new ValidationError('The form is too large', [
      { field: 'body', message: `must be at most ${MAX_FORM_BYTES} bytes` },
    ]);
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (!(name in fields)) fields[name] = value;
  }
  return fields;
};

/** Builds the Lambda handler of a group of public routes. */
export const createPublicHandler = <D>(
  deps: D,
  routes: readonly Route<D>[],
) => {
  const table = new Map(
    routes.map((r) => [routeKey(r.method, resourcePath(r)), r]),
  );
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({
    timeoutEarlyInMillis: 0,
  })
    .use(injectLambdaContext(logger))
    .use({
      onError: async (request) => {
        request.response = await errorPage(request.error);
      },
    })
    .handler(async (event) => {
      const found = table.get(routeKey(event.httpMethod, event.resource));
      if (found?.role !== 'public') {
        throw new NotFoundError('route.notFound', 'No such page');
      }
      const params = found.params
        ? parse(found.params, event.pathParameters ?? {})
        : undefined;
      const query = found.query
        ? parse(found.query, event.queryStringParameters ?? {})
        : undefined;
      const body = found.body ? parse(found.body, formOf(event)) : undefined;
      const userAgent = headerOf(event, 'user-agent');
      const referrer = headerOf(event, 'referer');
      const result = await found.handle(deps, {
        caller: undefined,
        params,
        query,
        body,
        sourceIp: event.requestContext?.identity?.sourceIp,
        visitor: {
          ...(userAgent ? { userAgent } : {}),
          ...(referrer ? { referrer } : {}),
        },
      });
      return renderPublic(result);
    });
};
