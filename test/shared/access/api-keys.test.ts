/**
 * API keys as the API manages them (issue 32, part 3), on the embedded
 * DynamoDB: the organization's collection of keys, the last use kept to
 * the hour, scopes on the caller, the edge's registry, and the operator's
 * index of older keys.
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  addMember,
  createApiKey,
  indexApiKeys,
} from '../../../shared/access/admin.ts';
import {
  createApiKeyAs,
  listApiKeys,
  revokeApiKeyAs,
} from '../../../shared/access/api-keys.ts';
import { createAuthenticator } from '../../../shared/access/authenticate.ts';
import { createUseRecorder } from '../../../shared/access/last-use.ts';
import type { Caller } from '../../../shared/access/model.ts';
import type {
  AccessRepository,
  AdminDeps,
} from '../../../shared/access/ports.ts';
import { collectionCounterKey } from '../../../shared/adapters/aws/dynamo-collections.ts';
import { keys } from '../../../shared/db/keys.ts';
import {
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../shared/errors.ts';
import { logger } from '../../../shared/observability.ts';
import { createOrganization } from '../../../shared/organizations/organizations.ts';
import {
  createTestDeps,
  fixedClock,
  testEngineClient,
} from '../../support/dynamo.ts';

describe('API keys of an organization, on the embedded DynamoDB', () => {
  const clock = fixedClock('2030-02-03T10:00:00.000Z');
  let test: Awaited<ReturnType<typeof createTestDeps>>;
  let deps: AdminDeps;
  let orgId: string;
  let owner: Caller;
  const edge = {
    registered: [] as string[],
    disabled: [] as string[],
    failNext: false,
    register: async (keyId: string) => {
      if (edge.failNext) {
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
    test = await createTestDeps({ clock });
    deps = { ...test.admin, clock, gatewayKeys: edge };
    ({ id: orgId } = await createOrganization(deps, { name: 'Keyring' }));
    await addMember(deps, { orgId, email: 'own@keyring.test', role: 'owner' });
    const { apiKey } = await createApiKey(deps, {
      orgId,
      email: 'own@keyring.test',
    });
    owner = await createAuthenticator(test.deps)(apiKey);
  });

  it('enters every new key in its organization, newest first, with the creator it belongs to and the scopes it holds', async () => {
    // Arrange
    clock.advance(1000);
    // Act
    const made = await createApiKeyAs(deps, owner, {
      name: 'Exporter',
      scopes: ['read'],
    });
    const page = await listApiKeys(deps, orgId, { page: 1, limit: 10 });
    // Assert
    expect(edge.registered).toContain(made.id);
    expect(page.total).toBe(2);
    expect(page.items[0]).toEqual({
      id: made.id,
      name: 'Exporter',
      createdBy: { userId: owner.userId, email: 'own@keyring.test' },
      role: 'owner',
      scopes: ['read'],
      createdAt: clock.now().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(page.items[1]?.id).toBe(owner.keyId);
    // The caller it authenticates carries its scopes.
    expect(await createAuthenticator(test.deps)(made.apiKey)).toMatchObject({
      keyId: made.id,
      scopes: ['read'],
    });
  });

  it('refuses a scoped caller a key wider than itself, before anything is stored', async () => {
    // Arrange
    const reader: Caller = { ...owner, scopes: ['read', 'audience'] };
    const before = await listApiKeys(deps, orgId, { page: 1, limit: 100 });
    // Act
    const attempts = await Promise.all(
      [
        undefined,
        ['campaigns' as const],
        ['read' as const, 'settings' as const],
      ].map((scopes) =>
        createApiKeyAs(deps, reader, {
          name: 'Wider',
          ...(scopes ? { scopes } : {}),
        }).catch((error: unknown) => error),
      ),
    );
    // Assert
    for (const refused of attempts) {
      expect(refused).toBeInstanceOf(ForbiddenError);
      expect((refused as ForbiddenError).code).toBe('apiKey.scopeEscalation');
    }
    expect(
      (await listApiKeys(deps, orgId, { page: 1, limit: 100 })).total,
    ).toBe(before.total);
  });

  it('undoes a key the edge refused: listed revoked, never usable', async () => {
    // Arrange
    edge.failNext = true;
    // Act
    const failed = await createApiKeyAs(deps, owner, { name: 'Unlucky' }).catch(
      (error: unknown) => error,
    );
    const page = await listApiKeys(deps, orgId, { page: 1, limit: 1 });
    // Assert
    expect(failed).toBeInstanceOf(Error);
    expect(page.items[0]).toMatchObject({ name: 'Unlucky' });
    expect(page.items[0]?.revokedAt).not.toBeNull();
  });

  it('revokes a key of its organization only, at the edge too, and again harmlessly', async () => {
    // Arrange
    const made = await createApiKeyAs(deps, owner, { name: 'Doomed' });
    const { id: otherOrg } = await createOrganization(deps, { name: 'Other' });
    // Act
    const foreign = await revokeApiKeyAs(deps, otherOrg, made.id).catch(
      (error: unknown) => error,
    );
    const revoked = await revokeApiKeyAs(deps, orgId, made.id);
    clock.advance(1000);
    const again = await revokeApiKeyAs(deps, orgId, made.id);
    // Assert
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(revoked.revokedAt).not.toBeNull();
    expect(again).toEqual(revoked);
    expect(edge.disabled.filter((id) => id === made.id)).toHaveLength(2);
  });

  it('lets the operator name and scope a key (key create --name --scopes), and validates them', async () => {
    // Act
    const made = await createApiKey(deps, {
      orgId,
      email: 'own@keyring.test',
      name: 'CLI',
      scopes: 'settings, read',
    });
    const bad = await createApiKey(deps, {
      orgId,
      email: 'own@keyring.test',
      scopes: 'read,write',
    }).catch((error: unknown) => error);
    // Assert
    expect(await deps.access.getKey(made.keyId)).toMatchObject({
      name: 'CLI',
      scopes: ['read', 'settings'],
    });
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).details[0]?.field).toBe('scopes.1');
  });
});

describe('the last use of a key', () => {
  it('is written once when containers race, and each learns the mark that won', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const keyId = '01a20000-0000-7000-8000-00000000beef';
    const at = new Date('2030-01-01T12:00:00.000Z');
    const since = new Date(at.getTime() - 3_600_000);
    // Act: eight containers mark the key at instants a second apart.
    const marks = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        deps.access.markUsed(keyId, new Date(at.getTime() + i * 1000), since),
      ),
    );
    // Assert: one mark stored, and every one of them answered it.
    const stored = new Set(marks.map((mark) => mark.toISOString()));
    expect(stored.size).toBe(1);
    const later = await deps.access.markUsed(
      keyId,
      new Date(at.getTime() + 60_000),
      since,
    );
    expect(later.toISOString()).toBe([...stored][0]);
  });

  it('never fails a request: a failed mark is logged, and tried again by the next request', async () => {
    // Arrange
    let attempts = 0;
    const access = {
      markUsed: async () => {
        attempts++;
        throw new Error('throttled');
      },
    } as unknown as AccessRepository;
    const record = createUseRecorder({ access, clock: fixedClock() });
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => {});
    // Act
    await record('k-1');
    await record('k-1');
    // Assert
    expect(attempts).toBe(2);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith(
      'Could not record the last use of an API key',
      expect.objectContaining({ keyId: 'k-1' }),
    );
    warn.mockRestore();
  });
});

describe('indexing older keys (admin key index)', () => {
  it('enters the live keys of the members that no entry points at, with their creator’s email, once', async () => {
    // Arrange: a key as older versions stored it: no entry, no email.
    const test = await createTestDeps();
    const deps = test.admin;
    const { id: orgId } = await createOrganization(deps, { name: 'Old' });
    await addMember(deps, { orgId, email: 'old@old.test', role: 'admin' });
    const { keyId } = await createApiKey(deps, {
      orgId,
      email: 'old@old.test',
    });
    const engine = testEngineClient();
    for (const key of [
      keys.apiKeyOfOrganization(orgId, keyId),
      collectionCounterKey(keys.apiKeysOfOrganization(orgId)),
    ]) {
      await engine.send(
        new DeleteCommand({ TableName: test.tableName, Key: key }),
      );
    }
    await engine.send(
      new UpdateCommand({
        TableName: test.tableName,
        Key: keys.apiKey(keyId),
        UpdateExpression: 'REMOVE email',
      }),
    );
    const before = await listApiKeys(deps, orgId, { page: 1, limit: 10 });
    // Act
    const first = await indexApiKeys(deps, { orgId });
    const second = await indexApiKeys(deps, { orgId });
    const after = await listApiKeys(deps, orgId, { page: 1, limit: 10 });
    // Assert
    expect(before.total).toBe(0);
    expect(first).toEqual({ indexed: 1, keyIds: [keyId] });
    expect(second).toEqual({ indexed: 0, keyIds: [] });
    expect(after.total).toBe(1);
    expect(after.items[0]).toMatchObject({
      id: keyId,
      name: null,
      createdBy: { email: 'old@old.test' },
    });
  });
});
