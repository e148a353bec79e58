import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  createApiKey,
  removeMember,
  revokeApiKey,
} from '../../../shared/access/admin.ts';
import { createAuthenticator } from '../../../shared/access/authenticate.ts';
import { MAX_KEYS_PER_MEMBER } from '../../../shared/access/model.ts';
import type { AdminDeps } from '../../../shared/access/ports.ts';
import {
  ConflictError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '../../../shared/errors.ts';
import { createOrganization } from '../../../shared/organizations/organizations.ts';
import { createTestDeps } from '../../support/dynamo.ts';

describe('members and API keys (Authentication 1–3, 7), on the embedded DynamoDB', () => {
  let deps: AdminDeps;
  let orgId: string;
  let authenticate: ReturnType<typeof createAuthenticator>;
  const edge = {
    registered: [] as string[],
    refused: [] as string[],
    disabled: [] as string[],
    failNext: false,
    register: async (keyId: string) => {
      if (edge.failNext) {
        edge.refused.push(keyId);
        edge.failNext = false;
        throw new Error('API Gateway unavailable');
      }
      edge.registered.push(keyId);
    },
    disable: async (keyIds: string[]) => {
      edge.disabled.push(...keyIds);
    },
  };

  beforeAll(async () => {
    const test = await createTestDeps();
    deps = { ...test.admin, gatewayKeys: edge };
    ({ id: orgId } = await createOrganization(deps, { name: 'Acme' }));
    authenticate = createAuthenticator(test.deps);
  });

  it('creates a key that acts with its creator’s role', async () => {
    // Arrange
    await addMember(deps, { orgId, email: 'Ann@Acme.test', role: 'admin' });
    // Act
    const { keyId, apiKey } = await createApiKey(deps, {
      orgId,
      email: 'ann@acme.test',
    });
    // Assert
    expect(await authenticate(apiKey)).toMatchObject({
      keyId,
      orgId,
      role: 'admin',
    });
  });

  it('stores only a hash of the key, never its value', async () => {
    await addMember(deps, { orgId, email: 'hash@acme.test', role: 'member' });
    const { keyId, apiKey } = await createApiKey(deps, {
      orgId,
      email: 'hash@acme.test',
    });
    const stored = await deps.access.findKey(keyId);
    expect(JSON.stringify(stored)).not.toContain(apiKey.slice(-43));
    expect(stored?.secretHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('follows a role change at once: the key acts with the new role', async () => {
    await addMember(deps, { orgId, email: 'bob@acme.test', role: 'admin' });
    const { apiKey } = await createApiKey(deps, {
      orgId,
      email: 'bob@acme.test',
    });
    await addMember(deps, { orgId, email: 'bob@acme.test', role: 'member' });
    expect((await authenticate(apiKey)).role).toBe('member');
  });

  it('refuses every key of a member who left the organization (Authentication 3)', async () => {
    // Arrange
    await addMember(deps, { orgId, email: 'cy@acme.test', role: 'owner' });
    const first = await createApiKey(deps, { orgId, email: 'cy@acme.test' });
    const second = await createApiKey(deps, { orgId, email: 'cy@acme.test' });
    // Act
    expect(await removeMember(deps, { orgId, email: 'cy@acme.test' })).toEqual({
      removed: true,
    });
    // Assert
    await expect(authenticate(first.apiKey)).rejects.toThrow(UnauthorizedError);
    await expect(authenticate(second.apiKey)).rejects.toThrow(
      UnauthorizedError,
    );
  });

  it('keeps old keys revoked when the member is added back', async () => {
    await addMember(deps, { orgId, email: 'dee@acme.test', role: 'admin' });
    const { apiKey } = await createApiKey(deps, {
      orgId,
      email: 'dee@acme.test',
    });
    await removeMember(deps, { orgId, email: 'dee@acme.test' });
    await addMember(deps, { orgId, email: 'dee@acme.test', role: 'admin' });
    await expect(authenticate(apiKey)).rejects.toThrow(UnauthorizedError);
  });

  it('registers each new key at the edge and disables it there on revocation', async () => {
    await addMember(deps, { orgId, email: 'edge@acme.test', role: 'admin' });
    const { keyId } = await createApiKey(deps, {
      orgId,
      email: 'edge@acme.test',
    });
    expect(edge.registered).toContain(keyId);
    await removeMember(deps, { orgId, email: 'edge@acme.test' });
    expect(edge.disabled).toContain(keyId);
  });

  it('leaves no working key behind when the edge registration fails', async () => {
    // Arrange
    await addMember(deps, { orgId, email: 'fail@acme.test', role: 'admin' });
    edge.failNext = true;
    // Act
    await expect(
      createApiKey(deps, { orgId, email: 'fail@acme.test' }),
    ).rejects.toThrow('API Gateway unavailable');
    // Assert: the stored key was revoked, and the member can try again.
    const [failedKeyId] = edge.refused;
    expect((await deps.access.findKey(failedKeyId ?? ''))?.revokedAt).toEqual(
      expect.any(String),
    );
    const retry = await createApiKey(deps, { orgId, email: 'fail@acme.test' });
    expect((await authenticate(retry.apiKey)).orgId).toBe(orgId);
  });

  it('refuses a revoked key, and revoking twice is harmless', async () => {
    await addMember(deps, { orgId, email: 'eve@acme.test', role: 'admin' });
    const { keyId, apiKey } = await createApiKey(deps, {
      orgId,
      email: 'eve@acme.test',
    });
    await revokeApiKey(deps, { keyId });
    await revokeApiKey(deps, { keyId });
    await expect(authenticate(apiKey)).rejects.toThrow(UnauthorizedError);
  });

  it('answers not found for an unknown key, member or organization', async () => {
    await expect(
      revokeApiKey(deps, { keyId: '01a20000-0000-7000-8000-00000000dead' }),
    ).rejects.toThrow(NotFoundError);
    await expect(
      createApiKey(deps, { orgId, email: 'stranger@acme.test' }),
    ).rejects.toThrow(NotFoundError);
    await expect(
      removeMember(deps, { orgId, email: 'stranger@acme.test' }),
    ).rejects.toThrow(NotFoundError);
    await expect(
      addMember(deps, {
        orgId: '01a20000-0000-7000-8000-00000000dead',
        email: 'x@acme.test',
        role: 'admin',
      }),
    ).rejects.toThrow(NotFoundError);
  });

  it('validates the operator’s input, naming each field', async () => {
    const error = await addMember(deps, {
      orgId: 'nope',
      email: 'not-an-email',
      role: 'boss',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.map((d) => d.field)).toEqual([
      'orgId',
      'email',
      'role',
    ]);
  });

  it(`caps the live keys of one member at ${MAX_KEYS_PER_MEMBER}`, async () => {
    await addMember(deps, { orgId, email: 'many@acme.test', role: 'member' });
    for (let i = 0; i < MAX_KEYS_PER_MEMBER; i++) {
      await createApiKey(deps, { orgId, email: 'many@acme.test' });
    }
    await expect(
      createApiKey(deps, { orgId, email: 'many@acme.test' }),
    ).rejects.toThrow(ConflictError);
  });

  it('keeps roles consistent when role changes and key creations race', async () => {
    // Arrange
    await addMember(deps, { orgId, email: 'race@acme.test', role: 'admin' });
    // Act: interleave key creations with role flips.
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? createApiKey(deps, { orgId, email: 'race@acme.test' })
          : addMember(deps, {
              orgId,
              email: 'race@acme.test',
              role: i % 4 === 1 ? 'member' : 'owner',
            }),
      ),
    );
    await addMember(deps, { orgId, email: 'race@acme.test', role: 'member' });
    // Assert: every key follows the final role.
    for (const result of created) {
      if ('apiKey' in result) {
        expect((await authenticate(result.apiKey)).role).toBe('member');
      }
    }
  });
});
