import { beforeAll, describe, expect, it } from 'vitest';
import {
  createInProcessStack,
  type InProcessStack,
} from '../support/api-client.ts';

describe('discovery, roles, tenancy and lists through the pipeline (in process)', () => {
  let stack: InProcessStack;

  beforeAll(async () => {
    stack = await createInProcessStack('Lists');
  });

  /** A new organization with a member of `role` and that member's key. */
  const newOrgWithKey = async (role: 'owner' | 'admin' | 'member') => {
    const org = await stack.admin('org', 'create', '--name', `Org ${role}`);
    const email = `${role}-${Date.now()}@example.test`;
    await stack.admin(
      'member',
      'add',
      '--org',
      org.id ?? '',
      '--email',
      email,
      '--role',
      role,
    );
    const key = await stack.admin(
      'key',
      'create',
      '--org',
      org.id ?? '',
      '--email',
      email,
    );
    return { orgId: org.id ?? '', email, ...key } as {
      orgId: string;
      email: string;
      keyId: string;
      apiKey: string;
    };
  };

  describe('GET /me (Discovery)', () => {
    it('reflects the allowlist and the application-wide switch', async () => {
      // Arrange
      const { orgId, apiKey } = await newOrgWithKey('member');
      // Act
      const notAllowed = await stack.call('/me', { key: apiKey });
      await stack.admin('org', 'allow', '--org', orgId);
      await stack.admin('sending', 'disable');
      const disabled = await stack.call('/me', { key: apiKey });
      await stack.admin('sending', 'enable');
      const ready = await stack.call('/me', { key: apiKey });
      // Assert
      expect(notAllowed.json.data.sending.blockers).toEqual([
        'organization_not_allowed',
        'no_sender_identity',
      ]);
      expect(notAllowed.json.data.sending.setup.status).toBe('not_allowed');
      expect(disabled.json.data.sending.blockers).toEqual([
        'sending_disabled',
        'no_sender_identity',
      ]);
      expect(ready.json.data.sending.ready).toBe(true);
      expect(ready.json.data.organizationRole).toBe('member');
    });
  });

  describe('403 (Authentication 6)', () => {
    it('refuses a member’s write and writes nothing', async () => {
      // Arrange
      const member = await newOrgWithKey('member');
      // Act
      const refused = await stack.call('/lists', {
        key: member.apiKey,
        method: 'POST',
        body: { name: 'Forbidden list' },
      });
      const lists = await stack.call('/lists', { key: member.apiKey });
      // Assert
      expect(refused.status).toBe(403);
      expect(lists.json.data).toEqual([]);
      expect(lists.json.pagination.total).toBe(0);
    });
  });

  describe('404 (Authentication 5)', () => {
    it('answers 404 for another organization’s list, never 403', async () => {
      const other = await newOrgWithKey('owner');
      const theirs = await stack.call('/lists', {
        key: other.apiKey,
        method: 'POST',
        body: { name: 'Secret list' },
      });
      const peek = await stack.call(`/lists/${theirs.json.data.id}`, {
        key: stack.demoKey,
      });
      expect(theirs.status).toBe(201);
      expect(peek.status).toBe(404);
      expect(peek.json).toEqual({
        error: expect.any(String),
        code: 'list.notFound',
      });
    });
  });

  describe('lists, envelope and pagination (Conventions)', () => {
    it('creates, reads and pages lists with the envelope of the spec', async () => {
      // Arrange
      const { apiKey } = await newOrgWithKey('admin');
      for (const name of ['One', 'Two', 'Three']) {
        const created = await stack.call('/lists', {
          key: apiKey,
          method: 'POST',
          body: { name },
        });
        expect(created.status).toBe(201);
      }
      // Act
      const page2 = await stack.call('/lists?limit=2&page=2', { key: apiKey });
      const one = await stack.call(`/lists/${page2.json.data[0].id}`, {
        key: apiKey,
      });
      // Assert
      expect(page2.json).toEqual({
        success: true,
        data: [
          {
            id: expect.any(String),
            name: 'One',
            createdAt: expect.any(String),
            contactCount: 0,
            subscribedCount: 0,
          },
        ],
        pagination: { total: 3, page: 2, limit: 2, totalPages: 2 },
      });
      expect(one.json).toEqual({
        success: true,
        data: {
          id: page2.json.data[0].id,
          name: 'One',
          createdAt: expect.any(String),
        },
      });
    });

    it('answers 400 with details naming the field, and 409 for a taken name', async () => {
      const { apiKey } = await newOrgWithKey('admin');
      const invalid = await stack.call('/lists', {
        key: apiKey,
        method: 'POST',
        body: { name: 42 },
      });
      const badJson = await stack.call('/lists', {
        key: apiKey,
        method: 'POST',
        body: '{"name": "x"',
      });
      await stack.call('/lists', {
        key: apiKey,
        method: 'POST',
        body: { name: 'Dup' },
      });
      const dup = await stack.call('/lists', {
        key: apiKey,
        method: 'POST',
        body: { name: 'dup' },
      });
      expect(invalid.status).toBe(400);
      expect(invalid.json.details).toEqual([
        { field: 'name', message: 'must be a string' },
      ]);
      expect(badJson.status).toBe(400);
      expect(dup.status).toBe(409);
    });
    it('reads a body only on a route that declares one: elsewhere a stray body is ignored', async () => {
      // Arrange
      const { apiKey } = await newOrgWithKey('admin');
      const odd = {
        key: apiKey,
        rawBody: 'not json at all',
        contentType: 'text/plain',
      };
      // Act
      const read = await stack.client.get('/lists', odd);
      const write = await stack.client.post('/lists', odd);
      // Assert
      expect(read.status).toBe(200);
      expect(write.status).toBe(415);
      expect(write.json.code).toBe('request.mediaType');
    });
  });
});
