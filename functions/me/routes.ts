/**
 * Routes of the `me` group: discovery of the caller's context.
 */
import { describeCaller } from '../../shared/access/caller.ts';
import { ok } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';

/** GET /me. */
export const meRoutes = [
  route({
    method: 'GET',
    path: '/me',
    role: 'member',
    summary:
      'The organization, role and key of the caller, and whether it can send',
    handle: async (deps, { caller }) => ok(await describeCaller(deps, caller)),
  }),
];
