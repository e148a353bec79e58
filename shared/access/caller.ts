/**
 * Application logic of GET /me: who is calling — the caller's
 * organization, role and key — and whether its organization can send.
 */
import * as v from 'valibot';
import { UnauthorizedError } from '../errors.ts';
import {
  OrganizationView,
  organizationView,
} from '../organizations/organizations.ts';
import { GuardrailView, guardrailView } from '../reputation/reputation.ts';
import {
  Readiness,
  type ReadinessDeps,
  readinessOf,
} from '../sending/readiness.ts';
import { ViewId } from '../validation.ts';
import { type Caller, ROLES } from './model.ts';
import { SCOPES } from './scopes.ts';

/** The data of GET /me. */
export const CallerContext = v.pipe(
  v.object({
    // The organization the key belongs to: the whole scope of the key.
    organization: OrganizationView,
    organizationRole: v.pipe(
      v.picklist(ROLES),
      v.description(
        "The role the key's creator holds in this organization (the key acts with it), never a role on the service itself",
      ),
    ),
    keyId: v.pipe(
      ViewId,
      v.description(
        "The key's id; it authenticates nothing, and no endpoint returns a key's value but once, the answer of POST /api-keys that creates it",
      ),
    ),
    scopes: v.pipe(
      v.nullable(v.array(v.picklist(SCOPES))),
      v.description(
        'The scopes the key is narrowed to, or null: full access (every route its role allows). `read` covers every GET; each other scope the routes of its groups',
      ),
    ),
    // Whether the organization can send now and, if not, why.
    sending: Readiness,
    // An extension: our reputation guardrail, while it pauses sending.
    guardrail: v.pipe(
      v.nullable(GuardrailView),
      v.description(
        "An extension: while our reputation guardrail pauses the organization's sending (blocker `reputation_paused`), its cause and figures; null otherwise. GET /reputation shows the rates at any time",
      ),
    ),
  }),
  v.title('CallerContext'),
);
export type CallerContext = v.InferOutput<typeof CallerContext>;

/** Describes the caller: its organization, role, key id and readiness. */
export const describeCaller = async (
  deps: ReadinessDeps,
  caller: Caller,
): Promise<CallerContext> => {
  const org = await deps.organizations.get(caller.orgId);
  // A key whose organization vanished is as good as revoked.
  if (!org) {
    throw new UnauthorizedError('auth.invalidKey', 'Invalid API key');
  }
  return {
    organization: organizationView(org),
    organizationRole: caller.role,
    keyId: caller.keyId,
    scopes: caller.scopes ? [...caller.scopes] : null,
    sending: await readinessOf(deps, org),
    guardrail: org.guardrail ? guardrailView(org.guardrail) : null,
  };
};
