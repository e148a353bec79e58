/**
 * Routes of the `docs` group: the API's own reference, without a key. The
 * OpenAPI document is built from the declarations of every group (this
 * one included), once per container; the page renders it with Redoc.
 */

import * as v from 'valibot';
import { type DepsOf, endpoints } from '../../shared/bindings.ts';
import { NotFoundError } from '../../shared/errors.ts';
import type { DocumentedGroup } from '../../shared/http/openapi.ts';
import { fileOf, htmlPage } from '../../shared/http/responses.ts';
import { file, html, type Route, routeFor } from '../../shared/http/route.ts';
import { assetOf, REDOC_BUNDLE } from './assets.ts';
import { DOCS_PAGE_CSP, docsPage } from './page.ts';

/** What the `docs` group's function may use. */
export const docsBindings = [
  // Reads nothing: the document comes from the declarations; the
  // servers' URL is the public API's.
  endpoints,
] as const;

/** The deps of the `docs` group's function. */
export type DocsDeps = DepsOf<typeof docsBindings>;

const route = routeFor<DocsDeps>();

/** A year: an asset's name changes with its content. */
const ASSET_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

const AssetParams = v.object({
  asset: v.pipe(
    v.string(),
    v.maxLength(200),
    v.description(
      'The file name the page refers to, e.g. `redoc.standalone.<hash>.js`',
    ),
  ),
});

/**
 * GET /openapi.json, GET /docs and GET /docs/{asset}. `documented` gives
 * the groups to describe: the registry of every group, which lists this
 * one, so it is read when first asked for, not when declared. On Lambda it
 * is imported then too, with the document's builder: the function's cold
 * start loads neither every group's routes nor the JSON Schema converter.
 */
export const createDocsRoutes = (
  documented: () => Promise<readonly DocumentedGroup[]>,
): Route<DocsDeps>[] => {
  const documents = new Map<string, string>();
  const documentFor = async (serverUrl: string): Promise<string> => {
    const known = documents.get(serverUrl);
    if (known) return known;
    const [groups, { buildOpenApi }] = await Promise.all([
      documented(),
      import('../../shared/http/openapi.ts'),
    ]);
    const text = JSON.stringify(buildOpenApi(groups, { serverUrl }));
    documents.set(serverUrl, text);
    return text;
  };
  return [
    route({
      method: 'GET',
      path: '/openapi.json',
      role: 'public',
      summary: 'This document: the OpenAPI 3.1 description of the API',
      description:
        'The document the reference page renders, generated from the route declarations. Its server is the API as this deployment publishes it.',
      responses: {
        200: file('application/json', 'The OpenAPI 3.1 document'),
      },
      errors: [],
      handle: async (deps) =>
        fileOf(
          200,
          'application/json',
          await documentFor(deps.endpoints.publicApiUrl),
        ),
    }),
    route({
      method: 'GET',
      path: '/docs',
      role: 'public',
      summary: 'The API reference: this document as a page',
      description:
        'A page rendering `openapi.json` with Redoc. Its scripts are served from `/docs/{asset}`: it loads nothing from elsewhere.',
      responses: { 200: html('The reference page') },
      errors: [],
      handle: async () =>
        htmlPage(200, docsPage(assetOf(REDOC_BUNDLE).name), {
          contentSecurityPolicy: DOCS_PAGE_CSP,
        }),
    }),
    route({
      method: 'GET',
      path: '/docs/{asset}',
      role: 'public',
      summary: 'A script of the reference page',
      description:
        'The renderer of the reference page. Its name changes with its content, so clients may keep it for a year.',
      params: AssetParams,
      responses: {
        200: file('text/javascript', 'The script'),
      },
      errors: ['route.notFound'],
      handle: async (_deps, { params }) => {
        const asset = assetOf(REDOC_BUNDLE);
        if (params.asset !== asset.name) {
          throw new NotFoundError('route.notFound', `No asset ${params.asset}`);
        }
        return fileOf(200, 'text/javascript', asset.body, {
          maxAgeSeconds: ASSET_MAX_AGE_SECONDS,
        });
      },
    }),
  ];
};
