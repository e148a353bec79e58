/**
 * Lambda entry of the `signupPages` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { signupPageBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(signupPageBindings));
