/**
 * Application logic of the operator's access commands: members and API keys.
 * Called by the admin CLI; issuing and revoking a key are also what the
 * API's key routes do (`api-keys.ts`), for the caller's own organization.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import { EmailAddress, parse } from '../validation.ts';
import { KeyOptions } from './api-key.schema.ts';
import { formatApiKey, hashApiKey, KEY_SECRET_BYTES } from './api-key.ts';
import { type Member, ROLES, type Role } from './model.ts';
import type { AdminDeps, AccessDeps as Deps } from './ports.ts';
import type { Scope } from './scopes.ts';

const MemberInput = v.object({
  orgId: v.pipe(v.string(), v.uuid('must be an organization id')),
  email: EmailAddress,
});

const AddMemberInput = v.object({
  ...MemberInput.entries,
  role: v.picklist(ROLES, `must be one of ${ROLES.join(', ')}`),
});

const findMember = async (
  deps: Pick<Deps, 'access'>,
  orgId: string,
  email: string,
) => {
  const user = await deps.access.findUserByEmail(email);
  const member = user && (await deps.access.getMember(orgId, user.id));
  if (!member) {
    throw new NotFoundError(
      'member.notFound',
      `${email} is not a member of organization ${orgId}`,
    );
  }
  return member;
};

/**
 * Adds a user (created on first sight) to an organization with a role, or
 * changes the role of an existing member; the member's keys follow at once.
 */
export const addMember = async (
  deps: Pick<Deps, 'access' | 'organizations' | 'ids'>,
  input: { orgId: string; email: string; role: string },
): Promise<{ userId: string; orgId: string; role: Role }> => {
  // 1. Validate, and make sure the organization exists.
  const { orgId, email, role } = parse(AddMemberInput, input);
  if (!(await deps.organizations.get(orgId))) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  // 2. Get or create the user, then put the membership.
  const user = await deps.access.getOrCreateUser(email, deps.ids.id());
  await deps.access.putMember({ orgId, userId: user.id, email, role });
  return { userId: user.id, orgId, role };
};

/** Removes a member; every key it created answers 401 from then on. */
export const removeMember = async (
  deps: Pick<AdminDeps, 'access' | 'clock' | 'gatewayKeys'>,
  input: { orgId: string; email: string },
): Promise<{ removed: true }> => {
  const { orgId, email } = parse(MemberInput, input);
  const member = await findMember(deps, orgId, email);
  const revoked = await deps.access.removeMember(
    orgId,
    member.userId,
    deps.clock.now(),
  );
  if (!revoked) {
    throw new NotFoundError(
      'member.notFound',
      `${email} is not a member of organization ${orgId}`,
    );
  }
  if (revoked.length > 0) await deps.gatewayKeys.disable(revoked);
  return { removed: true };
};

/**
 * Issues an API key to a member: the key acts for the member's
 * organization with the member's role, narrowed to `scopes` if given. The
 * value is returned here and nowhere else: only its hash is stored.
 */
export const issueApiKey = async (
  deps: Pick<AdminDeps, 'access' | 'clock' | 'ids' | 'gatewayKeys'>,
  member: Member,
  options: { name?: string; scopes?: Scope[]; keyId?: string } = {},
): Promise<{ keyId: string; apiKey: string }> => {
  // 1. Store the hash, conditional on the membership still existing.
  const keyId = options.keyId ?? deps.ids.id();
  const apiKey = formatApiKey(keyId, deps.ids.secret(KEY_SECRET_BYTES));
  const now = deps.clock.now();
  await deps.access.createKey({
    keyId,
    orgId: member.orgId,
    userId: member.userId,
    role: member.role,
    secretHash: hashApiKey(apiKey),
    createdAt: now.toISOString(),
    email: member.email,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.scopes ? { scopes: options.scopes } : {}),
  });

  // 2. Register it at the edge; undo the stored key if that fails.
  try {
    await deps.gatewayKeys.register(keyId, apiKey);
  } catch (error) {
    await deps.access.revokeKey(keyId, now);
    throw error;
  }
  return { keyId, apiKey };
};

/**
 * Creates an API key for a member named by email (the operator's `key
 * create`), with an optional name and scopes (`read,audience`).
 */
export const createApiKey = async (
  deps: Pick<AdminDeps, 'access' | 'clock' | 'ids' | 'gatewayKeys'>,
  input: { orgId: string; email: string; name?: string; scopes?: string },
): Promise<{ keyId: string; apiKey: string }> => {
  // 1. The creator must be a member now; the key acts with its role.
  const { orgId, email } = parse(MemberInput, {
    orgId: input.orgId,
    email: input.email,
  });
  const options = parse(KeyOptions, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.scopes !== undefined
      ? { scopes: input.scopes.split(',').map((scope) => scope.trim()) }
      : {}),
  });
  const member = await findMember(deps, orgId, email);
  // 2. Issue it.
  return issueApiKey(deps, member, options);
};

/** Revokes a key for good; it answers 401 from then on. */
export const revokeApiKey = async (
  deps: Pick<AdminDeps, 'access' | 'clock' | 'gatewayKeys'>,
  input: { keyId: string },
): Promise<{ revoked: true }> => {
  const { keyId } = parse(
    v.object({ keyId: v.pipe(v.string(), v.uuid('must be a key id')) }),
    input,
  );
  if (!(await deps.access.revokeKey(keyId, deps.clock.now()))) {
    throw new NotFoundError('apiKey.notFound', `No API key ${keyId}`);
  }
  await deps.gatewayKeys.disable([keyId]);
  return { revoked: true };
};

/**
 * Enters in the organization's keys (`GET /api-keys`) the live keys made
 * before the listing existed; idempotent. Keys revoked before it are not
 * found again: nothing points at them from the organization.
 */
export const indexApiKeys = async (
  deps: Pick<AdminDeps, 'access' | 'organizations'>,
  input: { orgId: string },
): Promise<{ indexed: number; keyIds: string[] }> => {
  const { orgId } = parse(
    v.object({ orgId: MemberInput.entries.orgId }),
    input,
  );
  if (!(await deps.organizations.get(orgId))) {
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  }
  const keyIds = await deps.access.indexKeys(orgId);
  return { indexed: keyIds.length, keyIds };
};
