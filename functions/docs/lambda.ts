/**
 * Lambda entry of the `docs` group: the public pipeline (no key) over its
 * routes. The document describes every group: their registry is imported
 * when the document is first asked for.
 */
import { createPublicHandler } from '../../shared/http/public-handler.ts';
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createDocsRoutes, docsBindings } from './routes.ts';

const routes = createDocsRoutes(
  async () => (await import('../groups.ts')).endpointGroups,
);

/** The Lambda handler. */
export const handler = createPublicHandler(await awsDeps(docsBindings), routes);
