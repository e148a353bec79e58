/**
 * Application logic of organizations: the operator's commands (create, the
 * sending allowlist, the application-wide switch) and GET /me.
 */
import * as v from 'valibot';
import { type Caller, ROLES } from '../access/model.ts';
import { ConflictError, NotFoundError, UnauthorizedError } from '../errors.ts';
import type { Deps } from '../ports.ts';
import {
  Readiness,
  type ReadinessDeps,
  readinessOf,
} from '../sending/readiness.ts';
import { parse, requiredName, ViewId } from '../validation.ts';
import { type Organization, slugify } from './model.ts';

const CreateOrganizationInput = v.object({
  name: requiredName(100),
});

const OrgId = v.object({
  orgId: v.pipe(v.string(), v.uuid('must be an organization id')),
});

/** The public view of an organization. */
export const OrganizationView = v.pipe(
  v.object({
    id: ViewId,
    name: v.pipe(v.string(), v.description('Display name')),
    slug: v.pipe(
      v.string(),
      v.description("The slug of the organization's URLs in the application"),
    ),
  }),
  v.title('Organization'),
);
export type OrganizationView = v.InferOutput<typeof OrganizationView>;

const view = (org: Organization): OrganizationView => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
});

/**
 * Creates an organization with a unique slug derived from its name
 * (`acme`, then `acme-2`, `acme-3`… when taken). It starts off the sending
 * allowlist.
 */
export const createOrganization = async (
  deps: Pick<Deps, 'organizations' | 'ids' | 'clock'>,
  input: { name: string },
): Promise<OrganizationView> => {
  const { name } = parse(CreateOrganizationInput, input);
  const base = slugify(name);
  for (let attempt = 1; attempt <= 20; attempt++) {
    const slug = attempt === 1 ? base : `${base}-${attempt}`;
    const org: Organization = {
      id: deps.ids.id(),
      name,
      slug,
      sendingAllowed: false,
      createdAt: deps.clock.now().toISOString(),
    };
    try {
      await deps.organizations.create(org);
      return view(org);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  throw new ConflictError(
    'organization.slugTaken',
    `Too many organizations are named like "${name}"; choose another name`,
  );
};

/** Puts an organization on, or takes it off, the sending allowlist. */
export const setSendingAllowed = async (
  deps: Pick<Deps, 'organizations'>,
  input: { orgId: string },
  allowed: boolean,
): Promise<{ orgId: string; sendingAllowed: boolean }> => {
  const { orgId } = parse(OrgId, input);
  await deps.organizations.setSendingAllowed(orgId, allowed);
  return { orgId, sendingAllowed: allowed };
};

/** Switches sending on or off for the whole application. */
export const setSendingEnabled = async (
  deps: Pick<Deps, 'appSettings'>,
  enabled: boolean,
): Promise<{ sendingEnabled: boolean }> => {
  await deps.appSettings.setSendingEnabled(enabled);
  return { sendingEnabled: enabled };
};

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
        "The key's id; it authenticates nothing, and no endpoint ever returns a key's value",
      ),
    ),
    // Whether the organization can send now and, if not, why.
    sending: Readiness,
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
    organization: view(org),
    organizationRole: caller.role,
    keyId: caller.keyId,
    sending: await readinessOf(deps, org),
  };
};

/** Fails with 404 unless the organization exists. */
export const requireOrganization = async (
  deps: Pick<Deps, 'organizations'>,
  orgId: string,
): Promise<Organization> => {
  const org = await deps.organizations.get(orgId);
  if (!org) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  return org;
};
