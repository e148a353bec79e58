/**
 * Lambda entry of the `docs` group. The document describes every group:
 * their registry is imported when the document is first asked for.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { createDocsRoutes, docsBindings } from './routes.ts';

const routes = createDocsRoutes(
  async () => (await import('../groups.ts')).endpointGroups,
);

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(docsBindings), routes);
