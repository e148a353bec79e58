/**
 * Lambda entry of the `settings` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { settingsBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(settingsBindings));
