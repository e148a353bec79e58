/**
 * Application logic of the operator's access commands: members and API keys.
 * Called by the admin CLI; the public API never creates or shows keys.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import { EmailAddress, parse } from '../validation.ts';
import { formatApiKey, hashApiKey, KEY_SECRET_BYTES } from './api-key.ts';
import { ROLES, type Role } from './model.ts';
import type { AdminDeps, AccessDeps as Deps } from './ports.ts';

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
 * Creates an API key for a member. The value is returned here and nowhere
 * else: only its hash is stored.
 */
export const createApiKey = async (
  deps: Pick<AdminDeps, 'access' | 'clock' | 'ids' | 'gatewayKeys'>,
  input: { orgId: string; email: string },
): Promise<{ keyId: string; apiKey: string }> => {
  // 1. The creator must be a member now; the key acts with its role.
  const { orgId, email } = parse(MemberInput, input);
  const member = await findMember(deps, orgId, email);

  // 2. Store the hash, conditional on the membership still existing.
  const keyId = deps.ids.id();
  const apiKey = formatApiKey(keyId, deps.ids.secret(KEY_SECRET_BYTES));
  const now = deps.clock.now();
  await deps.access.createKey({
    keyId,
    orgId,
    userId: member.userId,
    role: member.role,
    secretHash: hashApiKey(apiKey),
    createdAt: now.toISOString(),
  });

  // 3. Register it at the edge; undo the stored key if that fails.
  try {
    await deps.gatewayKeys.register(keyId, apiKey);
  } catch (error) {
    await deps.access.revokeKey(keyId, now);
    throw error;
  }
  return { keyId, apiKey };
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
