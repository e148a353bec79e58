/**
 * Lambda entry of the `tags` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { tagBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(tagBindings));
