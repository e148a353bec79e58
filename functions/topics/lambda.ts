/**
 * Lambda entry of the `topics` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { topicBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(topicBindings));
