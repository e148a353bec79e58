import { beforeAll, describe, expect, it } from 'vitest';
import {
  createInProcessStack,
  type InProcessStack,
} from '../support/api-client.ts';
import { confirmationLinkOf, mailTo } from '../support/mailbox.ts';

describe('audience through the pipeline (in process)', () => {
  let stack: InProcessStack;
  let key: string;
  let listId: string;

  beforeAll(async () => {
    stack = await createInProcessStack('Audience');
    key = stack.demoKey;
    const list = await stack.call('/lists', {
      key,
      method: 'POST',
      body: { name: 'Audience e2e' },
    });
    listId = list.json.data.id;
  });

  const add = (body: object, list = listId) =>
    stack.call(`/lists/${list}/contacts`, { key, method: 'POST', body });

  describe('POST /lists/{listId}/contacts', () => {
    it('answers 201 for a new contact, subscribed at once, and 200 for an upsert', async () => {
      const created = await add({
        email: 'Sam@Example.test',
        firstName: 'Sam',
      });
      const upserted = await add({ email: 'sam@example.test', lastName: 'Ro' });
      expect(created.status).toBe(201);
      expect(created.json.data).toMatchObject({
        email: 'sam@example.test',
        status: 'subscribed',
        confirmation: { status: 'not_required' },
      });
      expect(upserted.status).toBe(200);
      expect(upserted.json.data).toMatchObject({
        id: created.json.data.id,
        firstName: 'Sam',
        lastName: 'Ro',
      });
    });

    it('runs double opt-in: pending, a mail in the local mailbox, a link that confirms once', async () => {
      // Arrange
      // The mailbox is shared by the run: an address of this run only.
      const email = `optin-${Date.now()}@example.test`;
      const added = await add({ email, doubleOptIn: true });
      expect(added.status).toBe(201);
      expect(added.json.data).toMatchObject({
        status: 'pending',
        confirmation: { status: 'sent' },
      });
      const [mail] = await mailTo(email, stack.info.mailbox);
      const link = confirmationLinkOf(mail);
      expect(link.startsWith(`${stack.info.api}/public/confirm?token=`)).toBe(
        true,
      );
      // Act
      const first = await stack.fetch(link);
      const firstPage = await first.text();
      const second = await stack.fetch(link);
      const contact = await stack.call(`/contacts/${added.json.data.id}`, {
        key,
      });
      // Assert
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toContain('text/html');
      expect(firstPage).toContain('Subscription confirmed');
      expect(await second.text()).toContain('Already confirmed');
      expect(contact.json.data).toMatchObject({
        status: 'subscribed',
        confirmedIp: '127.0.0.1',
        confirmedAt: expect.any(String),
      });
    });

    it('answers a confirmation that cannot go out as a success: 201, confirmation failed with its reason, the contact pending', async () => {
      // Arrange: opt-in content that cannot render for one first name only
      // (a loop the engine's limits stop), so other adds are unaffected.
      const loop = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
      const saved = await stack.call('/settings/optin', {
        key,
        method: 'PATCH',
        body: {
          content: `<a href="{{confirmationUrl}}">Confirm</a>{% if firstName == "Loop" %}${loop}{% endif %}`,
        },
      });
      expect(saved.status).toBe(200);
      const email = `failed-${Date.now()}@example.test`;
      // Act
      const added = await add({ email, firstName: 'Loop', doubleOptIn: true });
      // Assert
      expect(added.status).toBe(201);
      expect(added.json.data).toMatchObject({
        email,
        status: 'pending',
        confirmation: { status: 'failed', reason: 'content_invalid' },
      });
      expect(await mailTo(email, stack.info.mailbox)).toEqual([]);
    });

    it('shows a clear page, not a 500, for a tampered or missing token', async () => {
      const tampered = await stack.fetch(
        `${stack.info.api}/public/confirm?token=eyJhbGciOiJIUzI1NiJ9.e30.AAAA`,
      );
      const missing = await stack.fetch(`${stack.info.api}/public/confirm`);
      expect(tampered.status).toBe(400);
      expect(await tampered.text()).toContain('This link is not valid');
      expect(missing.status).toBe(400);
      expect(await missing.text()).toContain('This link is incomplete');
    });

    it('validates the body, naming the field', async () => {
      const bad = await add({ email: 'nope', firstName: 'x'.repeat(101) });
      expect(bad.status).toBe(400);
      expect(bad.json.details.map((d: { field: string }) => d.field)).toEqual([
        'email',
        'firstName',
      ]);
    });
  });

  describe('contacts, status and tags', () => {
    it('reads, patches, unsubscribes and resubscribes a contact', async () => {
      const { json } = await add({ email: 'cycle@example.test' });
      const id = json.data.id;
      const patched = await stack.call(`/contacts/${id}`, {
        key,
        method: 'PATCH',
        body: { firstName: 'Cy', status: 'unsubscribed' },
      });
      const back = await stack.call(`/contacts/${id}/resubscribe`, {
        key,
        method: 'POST',
      });
      const out = await stack.call(`/contacts/${id}/unsubscribe`, {
        key,
        method: 'POST',
      });
      const empty = await stack.call(`/contacts/${id}`, {
        key,
        method: 'PATCH',
        body: {},
      });
      expect(patched.json.data).toMatchObject({
        firstName: 'Cy',
        status: 'unsubscribed',
      });
      expect(back.json.data.status).toBe('subscribed');
      expect(out.json.data.status).toBe('unsubscribed');
      expect(empty.status).toBe(400);
    });

    it('refuses to resubscribe a bounced address with 409', async () => {
      const { json } = await add({ email: 'bounce@example.test' });
      await stack.call(`/contacts/${json.data.id}`, {
        key,
        method: 'PATCH',
        body: { status: 'bounced' },
      });
      const refused = await stack.call(
        `/contacts/${json.data.id}/resubscribe`,
        {
          key,
          method: 'POST',
        },
      );
      expect(refused.status).toBe(409);
    });

    it('creates tags (409 on a taken name, case-insensitively), tags and untags contacts, with counts', async () => {
      // Arrange
      const tag = await stack.call('/tags', {
        key,
        method: 'POST',
        body: { name: 'Fans' },
      });
      const taken = await stack.call('/tags', {
        key,
        method: 'POST',
        body: { name: 'FANS' },
      });
      const { json } = await add({ email: 'tagged@example.test' });
      // Act
      const put = await stack.call(`/contacts/${json.data.id}/tags`, {
        key,
        method: 'POST',
        body: { name: 'fans' },
      });
      const putAgain = await stack.call(`/contacts/${json.data.id}/tags`, {
        key,
        method: 'POST',
        body: { name: 'Fans' },
      });
      const withTag = await stack.call(`/contacts/${json.data.id}`, { key });
      const counted = await stack.call('/tags', { key });
      const removed = await stack.call(
        `/contacts/${json.data.id}/tags/${tag.json.data.id}`,
        { key, method: 'DELETE' },
      );
      const after = await stack.call('/tags', { key });
      // Assert
      expect(tag.status).toBe(201);
      expect(taken.status).toBe(409);
      expect([put.status, putAgain.status]).toEqual([201, 200]);
      expect(withTag.json.data.tags).toEqual([
        { id: tag.json.data.id, name: 'Fans' },
      ]);
      const fans = (rows: {
        json: { data: { id: string; contactCount: number }[] };
      }) => rows.json.data.find((t) => t.id === tag.json.data.id)?.contactCount;
      expect(fans(counted)).toBe(1);
      expect(removed.json.data.removed).toBe(true);
      expect(fans(after)).toBe(0);
    });

    it('lists the contacts of a list with filters, pagination and exact totals', async () => {
      const list = await stack.call('/lists', {
        key,
        method: 'POST',
        body: { name: 'Filters' },
      });
      const id = list.json.data.id;
      await stack.call(`/lists/${id}/contacts/bulk`, {
        key,
        method: 'POST',
        body: {
          contacts: [
            { email: 'a@f.test', firstName: 'Ann', tags: ['x'] },
            { email: 'b@f.test', status: 'unsubscribed' },
            { email: 'c@f.test', lastName: 'Annex' },
          ],
        },
      });
      const page = await stack.call(`/contacts?listId=${id}&limit=2&page=2`, {
        key,
      });
      const subscribed = await stack.call(
        `/contacts?listId=${id}&status=subscribed`,
        { key },
      );
      const search = await stack.call(`/contacts?listId=${id}&search=ann`, {
        key,
      });
      const noList = await stack.call('/contacts', { key });
      const lists = await stack.call('/lists?limit=100', { key });
      expect(page.json.pagination).toEqual({
        total: 3,
        page: 2,
        limit: 2,
        totalPages: 2,
        // The last page: no cursor to follow.
        nextCursor: null,
      });
      expect(page.json.data.map((c: { email: string }) => c.email)).toEqual([
        'c@f.test',
      ]);
      expect(subscribed.json.pagination.total).toBe(2);
      expect(search.json.data.map((c: { email: string }) => c.email)).toEqual([
        'a@f.test',
        'c@f.test',
      ]);
      expect(noList.status).toBe(400);
      expect(noList.json.details).toEqual([
        { field: 'listId', message: 'is required' },
      ]);
      expect(
        lists.json.data.find((l: { id: string }) => l.id === id),
      ).toMatchObject({ contactCount: 3, subscribedCount: 2 });
    });
  });

  describe('POST /lists/{listId}/contacts/bulk', () => {
    it('reports line by line', async () => {
      const { status, json } = await stack.call(
        `/lists/${listId}/contacts/bulk`,
        {
          key,
          method: 'POST',
          body: {
            contacts: [
              { email: 'bulk1@example.test' },
              { email: 'bad' },
              { email: 'sam@example.test' },
            ],
          },
        },
      );
      expect(status).toBe(200);
      expect(json.data).toEqual({
        total: 3,
        created: 1,
        updated: 1,
        rejected: 1,
        errors: [
          { index: 1, email: 'bad', reason: 'email: must be an email address' },
        ],
      });
    });

    it('answers 400 when contacts is missing or not an array', async () => {
      const missing = await stack.call(`/lists/${listId}/contacts/bulk`, {
        key,
        method: 'POST',
        body: {},
      });
      const notArray = await stack.call(`/lists/${listId}/contacts/bulk`, {
        key,
        method: 'POST',
        body: { contacts: 'a@b.c' },
      });
      expect(missing.status).toBe(400);
      expect(missing.json.details).toEqual([
        { field: 'contacts', message: 'is required' },
      ]);
      expect(notArray.status).toBe(400);
      expect(notArray.json.details).toEqual([
        { field: 'contacts', message: 'must be an array' },
      ]);
    });

    it('answers 413 over 500 entries, naming the limit', async () => {
      const { status, json } = await stack.call(
        `/lists/${listId}/contacts/bulk`,
        {
          key,
          method: 'POST',
          body: {
            contacts: Array.from({ length: 501 }, (_, i) => ({
              email: `over${i}@example.test`,
            })),
          },
        },
      );
      expect(status).toBe(413);
      expect(json.error).toContain('500');
    });

    it('answers 404 for another organization’s list and 403 to a member, writing nothing', async () => {
      const org = await stack.admin('org', 'create', '--name', 'Bulk other');
      await stack.admin(
        'member',
        'add',
        '--org',
        org.id ?? '',
        '--email',
        'm@o.test',
        '--role',
        'member',
      );
      const member = await stack.admin(
        'key',
        'create',
        '--org',
        org.id ?? '',
        '--email',
        'm@o.test',
      );
      const foreign = await stack.call(`/lists/${listId}/contacts/bulk`, {
        key: member.apiKey,
        method: 'POST',
        body: { contacts: [{ email: 'x@example.test' }] },
      });
      expect(foreign.status).toBe(403);
      await stack.admin(
        'member',
        'add',
        '--org',
        org.id ?? '',
        '--email',
        'm@o.test',
        '--role',
        'admin',
      );
      await new Promise((r) => setTimeout(r, 10));
      const admin = await stack.admin(
        'key',
        'create',
        '--org',
        org.id ?? '',
        '--email',
        'm@o.test',
      );
      const other = await stack.call(`/lists/${listId}/contacts/bulk`, {
        key: admin.apiKey,
        method: 'POST',
        body: { contacts: [{ email: 'x@example.test' }] },
      });
      const peek = await stack.call(
        `/contacts/${(await add({ email: 'mine@example.test' })).json.data.id}`,
        {
          key: admin.apiKey,
        },
      );
      expect(other.status).toBe(404);
      expect(peek.status).toBe(404);
    });
  });
});
