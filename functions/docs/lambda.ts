/**
 * Lambda entry of the `docs` group. It imports the registry of every
 * group: the document describes them all.
 */
import { awsDeps } from '../../shared/runtime/aws.ts';
import { endpointGroups } from '../groups.ts';

const docs = endpointGroups.find((group) => group.name === 'docs');
if (!docs) throw new Error('The docs group is not registered');

/** The Lambda handler. */
export const handler = docs.createHandler(awsDeps());
