/**
 * Application logic of organizations: the operator's commands (create, the
 * sending allowlist, the application-wide switch).
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError } from '../errors.ts';
import { parse, requiredName, ViewId } from '../validation.ts';
import { type Organization, slugify } from './model.ts';
import type { OrganizationsDeps as Deps } from './ports.ts';

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

/** The public view of an organization (no flags, no isolation). */
export const organizationView = (org: Organization): OrganizationView => ({
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
      return organizationView(org);
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
