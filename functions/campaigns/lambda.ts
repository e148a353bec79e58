/**
 * Lambda entry of the `campaigns` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { campaignBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(campaignBindings));
