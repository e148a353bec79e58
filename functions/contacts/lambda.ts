/**
 * Lambda entry of the `contacts` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { contactBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(contactBindings));
