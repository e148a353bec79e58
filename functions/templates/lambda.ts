/**
 * Lambda entry of the `templates` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { templateBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(templateBindings));
