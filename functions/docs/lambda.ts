/**
 * Lambda entry of the `docs` group. It imports the registry of every
 * group: the document describes them all.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { docsRoutes } from '../groups.ts';
import { createHandler } from './handler.ts';
import { docsBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(docsBindings), docsRoutes);
