import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../shared/audience/model.ts';
import { createTag } from '../../shared/audience/tags.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix} ${i}`);

describe('audience limits and rules, through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client);
    const list = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: 'Limits' },
    });
    listId = list.json.data.id;
  });

  /** A contact with `count` tags written the way the old bulk path could. */
  const legacyContactWithTags = async (email: string, count: number) => {
    const tagIds: string[] = [];
    for (const name of names(`legacy ${email}`, count)) {
      tagIds.push((await createTag(client.deps, org.orgId, { name })).id);
    }
    const now = '2026-11-01T00:00:00.000Z';
    let contact: Contact = {
      id: client.deps.ids.id(),
      listId,
      email,
      status: 'subscribed',
      tagIds: [],
      joinedAt: now,
      createdAt: now,
      updatedAt: now,
      version: 0,
    };
    await client.deps.contacts.save(org.orgId, [{ after: contact }]);
    // Forty tags a write: each write fits one transaction.
    for (let from = 0; from < count; from += 40) {
      const stored = await client.deps.contacts.get(org.orgId, listId, email);
      if (!stored) throw new Error('contact vanished');
      contact = {
        ...stored,
        tagIds: [...stored.tagIds, ...tagIds.slice(from, from + 40)].sort(),
      };
      await client.deps.contacts.save(org.orgId, [
        { before: stored, after: contact },
      ]);
    }
    return { id: contact.id, tagIds };
  };

  it('A1: an unsubscribe must always succeed, and so must a PATCH, an untag, a resubscribe and a re-add, even for a contact carrying 99 tags', async () => {
    // Arrange: a contact past today's cap, as the old bulk path allowed.
    const { id, tagIds } = await legacyContactWithTags('many@example.test', 99);
    const key = org.ownerKey;
    // Act
    const unsubscribed = await client.post(`/contacts/${id}/unsubscribe`, {
      key,
    });
    const oneClick = await client.post(`/contacts/${id}/unsubscribe`, { key });
    const patched = await client.patch(`/contacts/${id}`, {
      key,
      body: { firstName: 'Many' },
    });
    const resubscribed = await client.post(`/contacts/${id}/resubscribe`, {
      key,
    });
    const untagged = await client.delete(`/contacts/${id}/tags/${tagIds[0]}`, {
      key,
    });
    const readded = await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: 'many@example.test', lastName: 'Again' },
    });
    // Assert
    expect(unsubscribed.status).toBe(200);
    expect(unsubscribed.json.data.status).toBe('unsubscribed');
    expect(oneClick.status).toBe(200);
    expect(patched.status).toBe(200);
    expect(resubscribed.json.data.status).toBe('subscribed');
    expect(untagged.status).toBe(200);
    expect(untagged.json.data.removed).toBe(true);
    expect(readded.status).toBe(200);
    const stored = await client.deps.contacts.findById(org.orgId, id);
    expect(stored?.tagIds).toHaveLength(98);
  });

  it('A1: adding a contact past 50 tags answers 400 naming tags, and writes nothing (no tag either)', async () => {
    // Arrange: a contact with 45 tags.
    const key = org.ownerKey;
    await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: 'full@example.test', tags: names('full', 45) },
    });
    const before = await client.scan();
    // Act: ten more (new) tags.
    const refused = await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: 'full@example.test', tags: names('more', 10) },
    });
    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual([
      {
        field: 'tags',
        message:
          'a contact carries at most 50 tags; this would bring full@example.test to 55',
      },
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('A1: tagging a contact that carries 50 tags answers 400 naming name, creates no tag, and a tag it has is still fine', async () => {
    // Arrange
    const key = org.ownerKey;
    const added = await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: 'fifty@example.test', tags: names('fifty', 50) },
    });
    const id = added.json.data.id;
    const before = await client.scan();
    // Act
    const refused = await client.post(`/contacts/${id}/tags`, {
      key,
      body: { name: 'one too many' },
    });
    const again = await client.post(`/contacts/${id}/tags`, {
      key,
      body: { name: 'fifty 0' },
    });
    // Assert
    expect(added.status).toBe(201);
    expect(refused.status).toBe(400);
    expect(refused.json.details[0].field).toBe('name');
    expect(again.status).toBe(200);
    expect(await client.scan()).toEqual(before);
  });

  it('A3: bulk import: one bad line rejects only itself — a second line bringing a new contact past 50 tags is refused in the report, never a 500', async () => {
    // Act: the same new email twice, 50 different tags a line.
    const answer = await client.post(`/lists/${listId}/contacts/bulk`, {
      key: org.ownerKey,
      body: {
        contacts: [
          { email: 'bulk-a@example.test' },
          { email: 'twice@example.test', tags: names('first', 50) },
          { email: 'twice@example.test', tags: names('second', 50) },
          { email: 'bulk-b@example.test' },
        ],
      },
    });
    // Assert
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({
      total: 4,
      created: 3,
      updated: 0,
      rejected: 1,
      errors: [
        {
          index: 2,
          email: 'twice@example.test',
          reason:
            'tags: a contact carries at most 50 tags; this line would bring twice@example.test to 100',
        },
      ],
    });
    const twice = await client.deps.contacts.get(
      org.orgId,
      listId,
      'twice@example.test',
    );
    expect(twice?.tagIds).toHaveLength(50);
  });

  it('A1: a bulk line bringing an existing contact past 50 tags is rejected in the report', async () => {
    // Arrange: 45 tags already.
    await client.post(`/lists/${listId}/contacts`, {
      key: org.ownerKey,
      body: { email: 'existing@example.test', tags: names('existing', 45) },
    });
    // Act
    const answer = await client.post(`/lists/${listId}/contacts/bulk`, {
      key: org.ownerKey,
      body: {
        contacts: [
          { email: 'existing@example.test', tags: ['existing 1', 'extra 1'] },
          { email: 'existing@example.test', tags: names('extra', 8) },
        ],
      },
    });
    // Assert: the first line fits (46), the second would make 53.
    expect(answer.json.data).toMatchObject({ updated: 1, rejected: 1 });
    expect(answer.json.data.errors[0]).toMatchObject({
      index: 1,
      reason: expect.stringMatching(/^tags: .* to 53$/),
    });
  });

  it('A10: a pending contact confirms only by confirming: PATCH status subscribed answers 409 like resubscribe, and changes nothing', async () => {
    // Arrange: a pending contact (double opt-in).
    const key = org.ownerKey;
    const added = await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: 'pending@example.test', doubleOptIn: true },
    });
    const id = added.json.data.id;
    const before = await client.scan();
    // Act
    const patched = await client.patch(`/contacts/${id}`, {
      key,
      body: { status: 'subscribed' },
    });
    const resubscribed = await client.post(`/contacts/${id}/resubscribe`, {
      key,
    });
    // Assert
    expect(added.json.data.status).toBe('pending');
    expect([patched.status, resubscribed.status]).toEqual([409, 409]);
    expect(patched.json.code).toBe('contact.awaitingConfirmation');
    expect(resubscribed.json.code).toBe('contact.awaitingConfirmation');
    expect(await client.scan()).toEqual(before);
    // A pending contact may still be unsubscribed.
    const unsubscribed = await client.patch(`/contacts/${id}`, {
      key,
      body: { status: 'unsubscribed' },
    });
    expect(unsubscribed.json.data.status).toBe('unsubscribed');
  });

  it.each([
    ['POST', '/lists', { name: 'lone \uD800 surrogate' }, 'name'],
    ['POST', '/lists', { name: 'two\r\nlines' }, 'name'],
    ['POST', '/tags', { name: 'tag \uDC00' }, 'name'],
    ['POST', '/tags', { name: 'tab\there' }, 'name'],
    ['POST', '/topics', { name: 'nul\u0000' }, 'name'],
    [
      'POST',
      '/topics',
      { name: 'ok', description: 'bad \uD800' },
      'description',
    ],
  ])(
    'names: %s %s refuses control characters and lone surrogates (they alias in name reservations), naming %j',
    async (method, path, body, field) => {
      const before = await client.scan();
      const answer = await client.call(method, path, {
        key: org.ownerKey,
        body,
      });
      expect(answer.status).toBe(400);
      expect(
        answer.json.details.map((d: { field: string }) => d.field),
      ).toEqual([field]);
      expect(await client.scan()).toEqual(before);
    },
  );

  it.each([
    ['firstName', 'Ada\r\nBcc: x@evil.test'],
    ['lastName', 'Lovelace\u0000'],
    ['firstName', 'lone \uD800'],
    ['lastName', 'line\u2028separator'],
  ])(
    'A4: a contact %s with a control character or lone surrogate answers 400 naming it',
    async (field, value) => {
      const before = await client.scan();
      const answer = await client.post(`/lists/${listId}/contacts`, {
        key: org.ownerKey,
        body: { email: 'named@example.test', [field]: value },
      });
      expect(answer.status).toBe(400);
      expect(answer.json.details[0].field).toBe(field);
      expect(await client.scan()).toEqual(before);
    },
  );
});
