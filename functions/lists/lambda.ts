/**
 * Lambda entry of the `lists` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { listBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(listBindings));
