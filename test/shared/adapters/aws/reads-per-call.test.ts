/**
 * Reads the adapters save, on the embedded engine (issue 15, requests per
 * GET): the address book in one Query, the domain challenge token read once
 * per container, the application switch shown from memory for a short while
 * and read again by every send.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addMember, createApiKey } from '../../../../shared/access/admin.ts';
import { keyIdOf } from '../../../../shared/access/api-key.ts';
import { DynamoAccessRepository } from '../../../../shared/adapters/aws/dynamo-access-repository.ts';
import { DynamoAppSettingsRepository } from '../../../../shared/adapters/aws/dynamo-app-settings-repository.ts';
import { DynamoIdentityRepository } from '../../../../shared/adapters/aws/dynamo-identity-repository.ts';
import { DynamoOptinSettingsRepository } from '../../../../shared/adapters/aws/dynamo-optin-settings-repository.ts';
import { DynamoOrganizationRepository } from '../../../../shared/adapters/aws/dynamo-organization-repository.ts';
import { createIdentity } from '../../../../shared/sending/identities.ts';
import { orgWithList } from '../../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

/** The embedded engine's client, recording the commands sent through it. */
const recordingClient = () => {
  const client = testEngineClient();
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { client, sent };
};

describe('reads per call', () => {
  it('the address book (identities, default and version) is one Query', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const first = await createIdentity(deps, orgId, {
      senderEmail: 'news@example.test',
    });
    await createIdentity(deps, orgId, {
      senderEmail: 'team@example.test',
      isDefault: true,
    });
    const { client, sent } = recordingClient();

    // Act
    const book = await new DynamoIdentityRepository({
      client,
      tableName,
    }).getBook(orgId);

    // Assert
    expect(sent).toEqual(['QueryCommand']);
    expect(book.identities.map((i) => i.senderEmail).sort()).toEqual([
      'news@example.test',
      'team@example.test',
    ]);
    expect(book.defaultId).not.toBe(first.id);
    expect(book.version).toBe(2);
  });

  it('an address book never written reads empty at version 0, in one Query', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const { client, sent } = recordingClient();

    // Act
    const book = await new DynamoIdentityRepository({
      client,
      tableName,
    }).getBook(orgId);

    // Assert
    expect(book).toEqual({ identities: [], version: 0 });
    expect(sent).toEqual(['QueryCommand']);
  });

  it('the domain challenge token is read once per container, and stays the one stored', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const stored = await deps.organizations.challengeToken(orgId, 'first');
    const { client, sent } = recordingClient();
    const container = new DynamoOrganizationRepository({ client, tableName });

    // Act
    const once = await container.challengeToken(orgId, 'second');
    const again = await container.challengeToken(orgId, 'third');

    // Assert
    expect(stored).toBe('first');
    expect([once, again]).toEqual(['first', 'first']);
    expect(sent).toEqual(['GetItemCommand']);
  });

  it('the application switch: a shown value may come from memory within its age, a send always reads', async () => {
    // Arrange
    const { tableName } = await createTestDeps();
    const { client, sent } = recordingClient();
    const container = new DynamoAppSettingsRepository({ client, tableName });
    const operator = new DynamoAppSettingsRepository({
      client: testEngineClient(),
      tableName,
    });

    // Act
    const shown = await container.get({ maxAgeMs: 60_000 });
    await operator.setSendingEnabled(false);
    const shownAgain = await container.get({ maxAgeMs: 60_000 });
    const readBySend = await container.get();
    const shownAfterRead = await container.get({ maxAgeMs: 60_000 });
    const expired = await container.get({ maxAgeMs: -1 });

    // Assert
    expect(shown.sendingEnabled).toBe(true);
    expect(shownAgain.sendingEnabled).toBe(true);
    expect(readBySend.sendingEnabled).toBe(false);
    expect(shownAfterRead.sendingEnabled).toBe(false);
    expect(expired.sendingEnabled).toBe(false);
    expect(sent).toEqual([
      'GetItemCommand',
      'GetItemCommand',
      'GetItemCommand',
    ]);
  });
  it('issue 28 goal 8: the domains and the address book are one Query, each read whole', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    await createIdentity(deps, orgId, {
      senderEmail: 'news@example.test',
      isDefault: true,
    });
    const names = ['a', 'b'].map((n) => `${n}${randomUUID().slice(0, 6)}.test`);
    for (const domain of names) {
      await deps.domains.declare(orgId, {
        id: randomUUID(),
        domain,
        createdAt: '2026-11-28T00:00:00.000Z',
        dkimStatus: 'PENDING',
        mailFromDomain: null,
        mailFromStatus: null,
        ownershipProved: false,
        declaredAfterAnother: false,
        lastCheckedAt: null,
      });
    }
    const { client, sent } = recordingClient();

    // Act
    const profile = await new DynamoIdentityRepository({
      client,
      tableName,
    }).getProfile(orgId);

    // Assert
    expect(sent).toEqual(['QueryCommand']);
    expect(profile.domains.map((d) => d.domain).sort()).toEqual(names.sort());
    expect(profile.book).toEqual(await deps.identities.getBook(orgId));
    expect(profile.book.identities).toHaveLength(1);
  });

  it('issue 28 goal 8: the key lookup brings the application switch, which a shown read then takes from memory', async () => {
    // Arrange
    const { deps, admin, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    await addMember(admin, { orgId, email: 'ann@acme.test', role: 'admin' });
    const { apiKey } = await createApiKey(admin, {
      orgId,
      email: 'ann@acme.test',
    });
    await admin.appSettings.setSendingEnabled(false);
    const { client, sent } = recordingClient();
    const table = { client, tableName };

    // Act
    const key = await new DynamoAccessRepository(table).findKey(
      keyIdOf(apiKey) ?? '',
    );
    const settings = new DynamoAppSettingsRepository(table);
    const shown = await settings.get({ maxAgeMs: 60_000 });
    const readBySend = await settings.get();

    // Assert
    expect(key?.orgId).toBe(orgId);
    expect(shown.sendingEnabled).toBe(false);
    expect(readBySend.sendingEnabled).toBe(false);
    expect(sent).toEqual(['BatchGetItemCommand', 'GetItemCommand']);
  });

  it('issue 28 goal 8: the opt-in settings and their organization are one request', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    await deps.optinSettings.save(orgId, {
      required: true,
      subject: 'Confirm, please',
      content: '',
    });
    const { client, sent } = recordingClient();

    // Act
    const both = await new DynamoOptinSettingsRepository({
      client,
      tableName,
    }).getWithOrganization(orgId);
    const none = await new DynamoOptinSettingsRepository({
      client,
      tableName,
    }).getWithOrganization(randomUUID());

    // Assert
    expect(both.organization?.id).toBe(orgId);
    expect(both.optin).toEqual(await deps.optinSettings.get(orgId));
    expect(both.optin).toMatchObject({
      required: true,
      subject: 'Confirm, please',
    });
    expect(none.organization).toBeUndefined();
    expect(none.optin.required).toBe(false);
    expect(sent).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
  });
});
