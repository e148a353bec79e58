/**
 * Lambda entry of the `me` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { meBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(meBindings));
