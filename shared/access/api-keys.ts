/**
 * Application logic of the API's key routes (`/api-keys`): an owner or an
 * admin lists the organization's keys, creates keys for itself and
 * revokes any key of the organization. Issuing and revoking are the
 * operator's own functions (`admin.ts`); this adds the organization's
 * scope, the caller as the creator, and the rule that a scoped key never
 * creates a key wider than itself.
 */
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import type { PageRequest } from '../ports.ts';
import { issueApiKey, revokeApiKey } from './admin.ts';
import {
  type ApiKeyView,
  apiKeyView,
  type CreatedApiKey,
} from './api-key.schema.ts';
import type { Caller, ListedApiKey } from './model.ts';
import type { AdminDeps } from './ports.ts';
import { type Scope, scopesWithin } from './scopes.ts';

/** What the key routes use: the access store, the edge's keys, time, ids. */
export type ApiKeysDeps = Pick<
  AdminDeps,
  'access' | 'clock' | 'ids' | 'gatewayKeys'
>;

const notFound = (keyId: string) =>
  new NotFoundError('apiKey.notFound', `No API key ${keyId}`);

/** A key of the organization; another organization's is not found. */
const keyOf = async (
  deps: Pick<ApiKeysDeps, 'access'>,
  orgId: string,
  keyId: string,
): Promise<ListedApiKey> => {
  const key = await deps.access.getKey(keyId);
  if (!key || key.orgId !== orgId) throw notFound(keyId);
  return key;
};

/** The organization's keys, live and revoked, newest first. */
export const listApiKeys = async (
  deps: Pick<ApiKeysDeps, 'access'>,
  orgId: string,
  request: PageRequest,
): Promise<{ items: ApiKeyView[]; total: number }> => {
  const page = await deps.access.pageKeys(orgId, request);
  return { items: page.items.map(apiKeyView), total: page.total };
};

/** One key of the organization. */
export const getApiKey = async (
  deps: Pick<ApiKeysDeps, 'access'>,
  orgId: string,
  keyId: string,
): Promise<ApiKeyView> => apiKeyView(await keyOf(deps, orgId, keyId));

/**
 * Creates a key for the caller's member: it acts with that member's role,
 * narrowed to `scopes` if given. Its value is in this answer only.
 */
export const createApiKeyAs = async (
  deps: ApiKeysDeps,
  caller: Caller,
  input: { name: string; scopes?: Scope[] },
): Promise<CreatedApiKey> => {
  // 1. No escalation: a scoped key creates keys within its own scopes.
  if (!scopesWithin(input.scopes, caller.scopes)) {
    throw new ForbiddenError(
      'apiKey.scopeEscalation',
      `This key is narrowed to ${caller.scopes?.join(', ')}: a key it creates must name scopes, each one of those`,
    );
  }
  // 2. The creator is the caller's member, as it is now, and the calling
  // key is live now: a warm container trusts a key for a few seconds
  // after its revocation, which must not be enough to mint a new one.
  const [member, calling] = await Promise.all([
    deps.access.getMember(caller.orgId, caller.userId),
    deps.access.findKey(caller.keyId),
  ]);
  // Its member left meanwhile (its keys are revoked with it), or the
  // calling key was revoked.
  if (!member || !calling || calling.revokedAt)
    throw new UnauthorizedError('auth.invalidKey', 'Invalid API key');

  // 3. A run of an Idempotency-Key's request after one that stopped
  // without answering: that one's key was stored, but its value reached
  // no one and is kept nowhere (only its hash). It is revoked, and the
  // key made again under a new id (decision 0055).
  const createdId = deps.ids.createdId();
  const lost = deps.ids.rerun
    ? await deps.access.findKey(createdId)
    : undefined;
  if (lost && lost.orgId === caller.orgId) {
    await revokeApiKey(deps, { keyId: createdId });
  }
  const keyId = lost ? deps.ids.id() : createdId;

  // 4. Issue it, and show it as stored, with its value this once.
  const { apiKey } = await issueApiKey(deps, member, {
    ...input,
    keyId,
  }).catch((error: unknown) => {
    // The member left between the two reads: as above.
    if (error instanceof NotFoundError && error.code === 'member.notFound') {
      throw new UnauthorizedError('auth.invalidKey', 'Invalid API key');
    }
    throw error;
  });
  return { ...(await getApiKey(deps, caller.orgId, keyId)), apiKey };
};

/**
 * Revokes a key of the organization, the calling key included; revoking
 * a revoked key changes nothing and answers it again.
 */
export const revokeApiKeyAs = async (
  deps: Pick<ApiKeysDeps, 'access' | 'clock' | 'gatewayKeys'>,
  orgId: string,
  keyId: string,
): Promise<ApiKeyView> => {
  // 1. Only a key of the organization.
  await keyOf(deps, orgId, keyId);
  // 2. Revoke it; again at the edge too, should an earlier try stop there.
  await revokeApiKey(deps, { keyId });
  return getApiKey(deps, orgId, keyId);
};
