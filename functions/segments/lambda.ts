/**
 * Lambda entry of the `segments` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { segmentBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(segmentBindings));
