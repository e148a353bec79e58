/**
 * Lambda entry of the `sequences` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { sequenceBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(sequenceBindings));
