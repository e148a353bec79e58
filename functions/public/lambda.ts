/**
 * Lambda entry of the `public` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { publicBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(publicBindings));
