/**
 * Lambda entry of the `pages` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { pageBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(pageBindings));
