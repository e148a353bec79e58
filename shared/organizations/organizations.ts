/**
 * Application logic of organizations: the operator's commands (create, the
 * sending allowlist, the 24-hour sending quota, the application-wide switch).
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError } from '../errors.ts';
import { parse, requiredName, ViewId } from '../validation.ts';
import {
  DEFAULT_SEND_QUOTA_24H,
  DEFAULT_SEQUENCE_CAP,
  type Organization,
  slugify,
} from './model.ts';
import type {
  OrganizationsDeps as Deps,
  Recounter,
  RecountReport,
  RekeyReport,
  SuppressionRekeyer,
} from './ports.ts';

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

/** The most an operator may set as an organization's 24-hour quota. */
const MAX_SEND_QUOTA_24H = 10_000_000;

const QUOTA_MESSAGE = 'must be a whole number from 1 to 10,000,000';

const SendQuotaInput = v.object({
  ...OrgId.entries,
  // A number, or its decimal digits (the admin CLI's flags are strings).
  max24h: v.pipe(
    v.union(
      [
        v.number(),
        v.pipe(
          v.string(),
          v.regex(/^\d+$/, QUOTA_MESSAGE),
          v.transform(Number),
        ),
      ],
      QUOTA_MESSAGE,
    ),
    v.integer(QUOTA_MESSAGE),
    v.minValue(1, QUOTA_MESSAGE),
    v.maxValue(MAX_SEND_QUOTA_24H, QUOTA_MESSAGE),
  ),
});

/**
 * Sets how many emails an organization may send in any 24 hours (the
 * operator's decision; unset, DEFAULT_SEND_QUOTA_24H). 404 for an unknown
 * organization.
 */
export const setSendQuota = async (
  deps: Pick<Deps, 'organizations'>,
  input: { orgId: string; max24h: number | string },
): Promise<{ orgId: string; sendQuota24h: number }> => {
  const { orgId, max24h } = parse(SendQuotaInput, input);
  await deps.organizations.setSendQuota(orgId, max24h);
  return { orgId, sendQuota24h: max24h };
};

/** The organization's 24-hour sending quota: the one set, or the default. */
export const sendQuotaOf = (org: Organization): number =>
  org.sendQuota24h ?? DEFAULT_SEND_QUOTA_24H;

/** The most sequences an operator may allow one organization. */
const MAX_SEQUENCE_CAP = 10_000;

const CAP_MESSAGE = 'must be a whole number from 0 to 10,000';

const SequenceCapInput = v.object({
  ...OrgId.entries,
  // A number, or its decimal digits (the admin CLI's flags are strings).
  sequences: v.pipe(
    v.union(
      [
        v.number(),
        v.pipe(v.string(), v.regex(/^\d+$/, CAP_MESSAGE), v.transform(Number)),
      ],
      CAP_MESSAGE,
    ),
    v.integer(CAP_MESSAGE),
    v.minValue(0, CAP_MESSAGE),
    v.maxValue(MAX_SEQUENCE_CAP, CAP_MESSAGE),
  ),
});

/**
 * Sets how many sequences an organization may keep, paused ones included
 * (the operator's plan; unset, DEFAULT_SEQUENCE_CAP). Lowering it below the
 * current count deletes nothing: only new ones are refused. 404 for an
 * unknown organization.
 */
export const setSequenceCap = async (
  deps: Pick<Deps, 'organizations'>,
  input: { orgId: string; sequences: number | string },
): Promise<{ orgId: string; sequenceCap: number }> => {
  const { orgId, sequences } = parse(SequenceCapInput, input);
  await deps.organizations.setSequenceCap(orgId, sequences);
  return { orgId, sequenceCap: sequences };
};

/** The organization's sequence cap: the one set, or the default. */
export const sequenceCapOf = (org: Organization): number =>
  org.sequenceCap ?? DEFAULT_SEQUENCE_CAP;

/** Switches sending on or off for the whole application. */
export const setSendingEnabled = async (
  deps: Pick<Deps, 'appSettings'>,
  enabled: boolean,
): Promise<{ sendingEnabled: boolean }> => {
  await deps.appSettings.setSendingEnabled(enabled);
  return { sendingEnabled: enabled };
};

/**
 * Sets every counter of an organization to what its items say and rebuilds
 * its tag index (the operator's repair; see `DynamoRecounter`). 404 for an
 * unknown organization.
 */
export const recountOrganization = async (
  deps: Pick<Deps, 'organizations'> & { recounter: Recounter },
  input: { orgId: string },
): Promise<RecountReport> => {
  const { orgId } = parse(OrgId, input);
  await requireOrganization(deps, orgId);
  return deps.recounter.recount(orgId);
};

/**
 * Moves an organization's suppressions still stored by address to their
 * address keys, with their log entries, then marks it so lookups read one
 * key per address (the operator's migration; see `SuppressionRekeyer`).
 * Idempotent and resumable: run it again after a failure, or to check (it
 * then moves nothing). 404 for an unknown organization.
 */
export const rekeySuppressions = async (
  deps: Pick<Deps, 'organizations' | 'clock'> & {
    suppressionKeys: SuppressionRekeyer;
  },
  input: { orgId: string },
): Promise<RekeyReport> => {
  const { orgId } = parse(OrgId, input);
  await requireOrganization(deps, orgId);
  return deps.suppressionKeys.rekey(orgId, deps.clock.now().toISOString());
};

/** Fails with 404 unless the organization exists. */
export const requireOrganization = async (
  deps: Pick<Deps, 'organizations'>,
  orgId: string,
): Promise<Organization> =>
  existingOrganization(orgId, await deps.organizations.get(orgId));

/** The organization read, or 404 when it is gone. */
export const existingOrganization = (
  orgId: string,
  org: Organization | undefined,
): Organization => {
  if (!org) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  return org;
};
