/**
 * Lambda entry of the `domains` group.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { createHandler } from './handler.ts';
import { domainBindings } from './routes.ts';

/** The Lambda handler. */
export const handler = createHandler(await awsDeps(domainBindings));
