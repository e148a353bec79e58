/**
 * API keys through the API (issue 32, part 3) through the pipeline: owners
 * and admins list, create and revoke the organization's keys; a new key's
 * value is shown once; its last use is kept to the hour; a key narrowed to
 * scopes takes only the routes they cover and creates no wider key.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEYS_PER_MEMBER } from '../../shared/access/model.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { fixedClock } from '../support/dynamo.ts';

/** Longer than a warm container trusts a key (10 s by default). */
const PAST_KEY_CACHE_MS = 11_000;

describe('API keys through the API', () => {
  // A clock in the future (DynamoDB Local deletes items whose TTL is past).
  const clock = fixedClock('2030-05-06T08:00:00.000Z');
  let client: ApiClient;
  let org: TestOrganization;
  let owner: { userId: string; email: string };

  beforeAll(async () => {
    client = await createApiClient({ clock });
    org = await createOrganizationWithKeys(client, 'Keys');
    const email = `owner-${org.orgId.slice(-12)}@example.test`;
    const user = await client.adminDeps.access.findUserByEmail(email);
    owner = { userId: user?.id ?? '', email };
  });

  const create = (body: unknown, key = org.ownerKey) =>
    client.post('/api-keys', { key, body });

  it('creates a key whose value is shown once and works at once; the listing shows it newest first, never a value or a hash', async () => {
    // Arrange
    clock.advance(1000);
    // Act
    const made = await create({ name: 'CRM sync', scopes: ['audience'] });
    const me = await client.get('/me', { key: made.json.data.apiKey });
    const read = await client.get(`/api-keys/${made.json.data.id}`, {
      key: org.ownerKey,
    });
    const listed = await client.get('/api-keys', { key: org.ownerKey });
    // Assert
    expect(made.status).toBe(201);
    expect(made.json.data).toEqual({
      id: expect.any(String),
      name: 'CRM sync',
      createdBy: owner,
      role: 'owner',
      scopes: ['audience'],
      createdAt: clock.now().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
      apiKey: expect.stringMatching(/^emk_[0-9a-f]{32}_[\w-]{43}$/),
    });
    expect(me.status).toBe(200);
    expect(me.json.data).toMatchObject({
      keyId: made.json.data.id,
      organizationRole: 'owner',
      scopes: ['audience'],
    });
    const { apiKey, ...view } = made.json.data;
    // Used once (GET /me): its last use is that instant.
    expect(read.json.data).toEqual({
      ...view,
      lastUsedAt: clock.now().toISOString(),
    });
    expect(listed.json.data[0]).toEqual(read.json.data);
    // The owner's own key (the admin CLI's, without a name) is older.
    expect(listed.json.data.at(-1)).toMatchObject({
      name: null,
      scopes: null,
      createdBy: owner,
    });
    expect(listed.json.pagination).toMatchObject({ total: 3, page: 1 });
    const secret = String(apiKey).slice(-43);
    for (const answer of [read, listed]) {
      expect(answer.body).not.toContain(secret);
      expect(answer.body).not.toMatch(/secretHash|[0-9a-f]{64}/);
    }
  });

  it('shows full access as null scopes, in the view and in GET /me', async () => {
    // Act
    const made = await create({ name: '  Full  ' });
    const me = await client.get('/me', { key: made.json.data.apiKey });
    // Assert
    expect(made.json.data).toMatchObject({ name: 'Full', scopes: null });
    expect(me.json.data.scopes).toBeNull();
  });

  it('pages the listing like the other lists', async () => {
    // Act
    const first = await client.get('/api-keys', {
      key: org.ownerKey,
      query: { limit: '1', page: '1' },
    });
    const second = await client.get('/api-keys', {
      key: org.ownerKey,
      query: { limit: '1', page: '2' },
    });
    // Assert
    expect(first.json.data).toHaveLength(1);
    expect(second.json.data).toHaveLength(1);
    expect(first.json.data[0].id).not.toBe(second.json.data[0].id);
    expect(first.json.pagination).toMatchObject({
      page: 1,
      limit: 1,
      total: second.json.pagination.total,
      totalPages: second.json.pagination.total,
    });
  });

  it('revokes a key: 401 once the warm cache lapses, listed as revoked, and a second revoke answers the same view', async () => {
    // Arrange
    const made = await create({ name: 'Short-lived' });
    const key = made.json.data.apiKey;
    expect((await client.get('/lists', { key })).status).toBe(200);
    // Act
    const revoked = await client.delete(`/api-keys/${made.json.data.id}`, {
      key: org.ownerKey,
    });
    clock.advance(PAST_KEY_CACHE_MS);
    const after = await client.get('/lists', { key });
    const again = await client.delete(`/api-keys/${made.json.data.id}`, {
      key: org.ownerKey,
    });
    const listed = await client.get('/api-keys', {
      key: org.ownerKey,
      query: { limit: '100' },
    });
    // Assert
    expect(revoked.status).toBe(200);
    expect(revoked.json.data.revokedAt).toBe(
      new Date(clock.now().getTime() - PAST_KEY_CACHE_MS).toISOString(),
    );
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('auth.invalidKey');
    expect(again.status).toBe(200);
    expect(again.json.data).toEqual(revoked.json.data);
    expect(
      listed.json.data.find((k: { id: string }) => k.id === made.json.data.id),
    ).toEqual(revoked.json.data);
  });

  it('lets a key revoke itself', async () => {
    // Arrange
    const made = await create({ name: 'Retiring' });
    const key = made.json.data.apiKey;
    // Act
    const revoked = await client.delete(`/api-keys/${made.json.data.id}`, {
      key,
    });
    clock.advance(PAST_KEY_CACHE_MS);
    const after = await client.get('/api-keys', { key });
    // Assert
    expect(revoked.status).toBe(200);
    expect(revoked.json.data.revokedAt).not.toBeNull();
    expect(after.status).toBe(401);
  });

  it('a key revoked a moment ago, still trusted by a warm container, cannot make a new key (401, nothing made)', async () => {
    // Arrange
    const made = await create({ name: 'Leaving' });
    const key = made.json.data.apiKey;
    expect((await client.get('/lists', { key })).status).toBe(200);
    await client.delete(`/api-keys/${made.json.data.id}`, { key });
    const before = await client.get('/api-keys', {
      key: org.ownerKey,
      query: { limit: '100' },
    });
    // Act: within the cache's few seconds.
    const trusted = await client.get('/lists', { key });
    const minted = await client.post('/api-keys', {
      key,
      body: { name: 'Escape hatch' },
    });
    const after = await client.get('/api-keys', {
      key: org.ownerKey,
      query: { limit: '100' },
    });
    // Assert
    expect(trusted.status).toBe(200);
    expect(minted.status).toBe(401);
    expect(minted.json.code).toBe('auth.invalidKey');
    expect(after.json.pagination.total).toBe(before.json.pagination.total);
  });

  it('keeps the last use to the hour: a use within the hour leaves it, one after moves it', async () => {
    // Arrange
    const made = await create({ name: 'Polling' });
    const key = made.json.data.apiKey;
    const lastUse = async () =>
      (
        await client.get(`/api-keys/${made.json.data.id}`, {
          key: org.ownerKey,
        })
      ).json.data.lastUsedAt;
    // Act
    clock.advance(1000);
    const first = clock.now().toISOString();
    await client.get('/tags', { key });
    clock.advance(59 * 60_000);
    await client.get('/tags', { key });
    const withinTheHour = await lastUse();
    clock.advance(2 * 60_000);
    const later = clock.now().toISOString();
    await client.get('/tags', { key });
    // Assert
    expect(withinTheHour).toBe(first);
    expect(await lastUse()).toBe(later);
  });

  it('refuses a member key (403) and another organization’s key (404)', async () => {
    // Arrange
    const other = await createOrganizationWithKeys(client, 'Other keys');
    const theirs = await create({ name: 'Theirs' }, other.ownerKey);
    // Act
    const asMember = await client.get('/api-keys', { key: org.memberKey });
    const memberCreates = await create({ name: 'Mine' }, org.memberKey);
    const read = await client.get(`/api-keys/${theirs.json.data.id}`, {
      key: org.ownerKey,
    });
    const revoke = await client.delete(`/api-keys/${theirs.json.data.id}`, {
      key: org.ownerKey,
    });
    const stillTheirs = await client.get('/me', {
      key: theirs.json.data.apiKey,
    });
    // Assert
    expect(asMember.status).toBe(403);
    expect(asMember.json.code).toBe('auth.roleTooLow');
    expect(memberCreates.status).toBe(403);
    expect(read.status).toBe(404);
    expect(read.json.code).toBe('apiKey.notFound');
    expect(revoke.status).toBe(404);
    expect(stillTheirs.status).toBe(200);
  });

  it('gives an admin’s new key the admin role, and keeps it in step with its creator', async () => {
    // Arrange
    const email = `admin-${org.orgId.slice(-12)}@example.test`;
    await client.admin(
      'member',
      'add',
      '--org',
      org.orgId,
      '--email',
      email,
      '--role',
      'admin',
    );
    const adminKey = await client.admin(
      'key',
      'create',
      '--org',
      org.orgId,
      '--email',
      email,
    );
    // Act
    const made = await create({ name: 'Admin tool' }, String(adminKey.apiKey));
    await client.admin(
      'member',
      'add',
      '--org',
      org.orgId,
      '--email',
      email,
      '--role',
      'member',
    );
    const demoted = await client.get(`/api-keys/${made.json.data.id}`, {
      key: org.ownerKey,
    });
    await client.admin(
      'member',
      'remove',
      '--org',
      org.orgId,
      '--email',
      email,
    );
    const removed = await client.get(`/api-keys/${made.json.data.id}`, {
      key: org.ownerKey,
    });
    // Assert
    expect(made.json.data).toMatchObject({
      role: 'admin',
      createdBy: { email },
    });
    expect(demoted.json.data.role).toBe('member');
    expect(removed.json.data.revokedAt).not.toBeNull();
  });

  describe('scopes', () => {
    let scoped: string;

    beforeAll(async () => {
      const made = await create({
        name: 'Settings and audience',
        scopes: ['audience', 'settings'],
      });
      scoped = made.json.data.apiKey;
    });

    it('lets a scoped key create keys within its scopes only (no escalation), writing nothing otherwise', async () => {
      // Act
      const narrower = await create(
        { name: 'Audience', scopes: ['audience'] },
        scoped,
      );
      const before = await client.scan();
      const full = await create({ name: 'Everything' }, scoped);
      const other = await create(
        { name: 'Campaigns', scopes: ['audience', 'campaigns'] },
        scoped,
      );
      // `read` reads the campaigns too: not within these scopes.
      const read = await create({ name: 'Read', scopes: ['read'] }, scoped);
      // Assert
      expect(narrower.status).toBe(201);
      expect(narrower.json.data.scopes).toEqual(['audience']);
      for (const refused of [full, other, read]) {
        expect(refused.status).toBe(403);
        expect(refused.json.code).toBe('apiKey.scopeEscalation');
      }
      expect(await client.scan()).toEqual(before);
    });

    it('refuses the routes outside a key’s scopes with 403 auth.scopeMissing, and lets read take every GET', async () => {
      // Arrange
      const reader = (await create({ name: 'Reader', scopes: ['read'] })).json
        .data.apiKey;
      // Act
      const campaigns = await client.get('/campaigns', { key: scoped });
      const lists = await client.get('/lists', { key: scoped });
      const readCampaigns = await client.get('/campaigns', { key: reader });
      const readKeys = await client.get('/api-keys', { key: reader });
      const readerWrites = await client.post('/tags', {
        key: reader,
        body: { name: 'nope' },
      });
      const readerMe = await client.get('/me', { key: reader });
      // Assert
      expect(campaigns.status).toBe(403);
      expect(campaigns.json).toEqual({
        error:
          'This operation needs the campaigns scope (or read, as a GET); your key is narrowed to audience, settings',
        code: 'auth.scopeMissing',
      });
      expect(lists.status).toBe(200);
      expect(readCampaigns.status).toBe(200);
      expect(readKeys.status).toBe(200);
      expect(readerWrites.status).toBe(403);
      expect(readerWrites.json.error).toContain('needs the audience scope');
      expect(readerMe.json.data.scopes).toEqual(['read']);
    });

    it('shows scopes in their declared order, whatever order they were asked in', async () => {
      const made = await create({
        name: 'Ordered',
        scopes: ['settings', 'read', 'campaigns'],
      });
      expect(made.json.data.scopes).toEqual(['read', 'campaigns', 'settings']);
    });
  });

  it('refuses a body it cannot take with 400, naming the field', async () => {
    // Act
    const answers = await Promise.all(
      [
        {},
        { name: '' },
        { name: 'x'.repeat(101) },
        { name: 'Bad', scopes: [] },
        { name: 'Bad', scopes: ['write'] },
        { name: 'Bad', scopes: ['read', 'read'] },
        { name: 'Bad', scopes: 'read' },
      ].map((body) => create(body)),
    );
    // Assert
    expect(answers.map((a) => [a.status, a.json.details?.[0]?.field])).toEqual([
      [400, 'name'],
      [400, 'name'],
      [400, 'name'],
      [400, 'scopes'],
      [400, 'scopes.0'],
      [400, 'scopes'],
      [400, 'scopes'],
    ]);
  });

  it(`caps a member at ${MAX_KEYS_PER_MEMBER} live keys with 409 apiKey.limit`, async () => {
    // Arrange: an organization of its own, its owner holding one key.
    const capped = await createOrganizationWithKeys(client, 'Capped');
    for (let i = 1; i < MAX_KEYS_PER_MEMBER; i++) {
      clock.advance(1000);
      expect((await create({ name: `Key ${i}` }, capped.ownerKey)).status).toBe(
        201,
      );
    }
    // Act
    clock.advance(1000);
    const refused = await create({ name: 'One too many' }, capped.ownerKey);
    // Assert
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe('apiKey.limit');
    expect(refused.json.error).toContain('revoke one first');
  });
});
