import { describe, expect, it } from 'vitest';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import { addContact, listContacts } from '../../../shared/audience/contacts.ts';
import {
  createList,
  getList,
  listLists,
} from '../../../shared/audience/lists.ts';
import { listTags, tagContact } from '../../../shared/audience/tags.ts';
import { keys } from '../../../shared/db/keys.ts';
import { NotFoundError, PayloadTooLargeError } from '../../../shared/errors.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import { createTestDeps, fixedClock, scanTable } from '../../support/dynamo.ts';
import { mailTo } from '../../support/mailbox.ts';

const setup = async () => {
  const clock = fixedClock();
  const { deps, events, tableName } = await createTestDeps({ clock });
  const { orgId, listId } = await orgWithList(deps);
  const all = async () =>
    (await listContacts(deps, orgId, { listId, page: 1, limit: 100 })).items;
  const one = async (email: string) =>
    (await all()).find((c) => c.email === email);
  return { deps, events, tableName, clock, orgId, listId, all, one };
};

describe('bulk import (Audience: bulk import)', () => {
  it('upserts by list and email, case-insensitively, storing emails normalized', async () => {
    // Arrange
    const { deps, orgId, listId, all } = await setup();
    // Act
    const first = await importContacts(deps, orgId, listId, [
      { email: '  Ann@Example.TEST ' },
    ]);
    const second = await importContacts(deps, orgId, listId, [
      { email: 'ann@example.test', firstName: 'Ann' },
    ]);
    // Assert
    expect(first).toMatchObject({ created: 1, updated: 0 });
    expect(second).toMatchObject({ created: 0, updated: 1 });
    expect((await all()).map((c) => [c.email, c.firstName])).toEqual([
      ['ann@example.test', 'Ann'],
    ]);
  });

  it('rule 1: sends nothing, queues nothing and starts no automation, even for subscribed lines and new tags', async () => {
    const { deps, events, orgId, listId, one } = await setup();
    const email = uniqueEmail('quiet');
    const report = await importContacts(deps, orgId, listId, [
      { email, status: 'subscribed', tags: ['vip'] },
      { email: uniqueEmail('quiet'), status: 'pending' },
    ]);
    expect(report.created).toBe(2);
    expect(await events.settle()).toEqual([]);
    expect(await mailTo(email)).toEqual([]);
    expect((await one(email))?.status).toBe('subscribed');
  });

  it('rule 1: a later tag of an imported contact starts its automation, and only that one', async () => {
    // Arrange: imported subscribed with a tag (no event), then tagged again.
    const { deps, events, tableName, orgId, listId, one } = await setup();
    const email = uniqueEmail('imported');
    await importContacts(deps, orgId, listId, [
      { email, status: 'subscribed', tags: ['vip'] },
    ]);
    expect(await events.settle()).toEqual([]);
    const contact = await one(email);
    // Act
    const { tag } = await tagContact(deps, orgId, contact?.id ?? '', {
      name: 'news',
    });
    // Assert: the new tag only; the import's join and tag stay silent.
    expect(await events.settle()).toEqual([
      expect.objectContaining({
        type: 'contact.tagged',
        contactId: contact?.id,
        tagId: tag.id,
      }),
    ]);
    // The import's marker went with the write that followed it.
    const stored = (await scanTable(tableName)).find(
      (item) => item.SK === keys.contact(orgId, listId, email).SK,
    );
    expect(stored).toBeDefined();
    expect(stored).not.toHaveProperty('writtenBy');
  });

  it('rule 1: marks the contacts an import writes, also on an update', async () => {
    // Arrange: a contact added by hand, then completed by an import.
    const { deps, tableName, orgId, listId } = await setup();
    const email = uniqueEmail('marked');
    await addContact(deps, orgId, listId, { email });
    // Act
    await importContacts(deps, orgId, listId, [{ email, firstName: 'Ann' }]);
    // Assert
    const stored = (await scanTable(tableName)).find(
      (item) => item.SK === keys.contact(orgId, listId, email).SK,
    );
    expect(stored).toMatchObject({ firstName: 'Ann', writtenBy: 'import' });
  });

  it('rule 2: consent fields omitted keep their stored value; provided ones are written', async () => {
    const { deps, orgId, listId, one } = await setup();
    await importContacts(deps, orgId, listId, [
      {
        email: 'c@example.test',
        optinAt: '2025-01-02T03:04:05Z',
        optinIp: '192.0.2.1',
        confirmedAt: '2025-01-03',
        confirmedIp: '2001:db8::1',
      },
    ]);
    await importContacts(deps, orgId, listId, [
      { email: 'c@example.test', optinIp: '198.51.100.7' },
    ]);
    expect(await one('c@example.test')).toMatchObject({
      optinAt: '2025-01-02T03:04:05.000Z',
      optinIp: '198.51.100.7',
      confirmedAt: '2025-01-03T00:00:00.000Z',
      confirmedIp: '2001:db8::1',
    });
  });

  it('rule 3: an existing contact keeps its status, and the line counts as updated', async () => {
    const { deps, orgId, listId, one } = await setup();
    await importContacts(deps, orgId, listId, [
      { email: 'd@example.test', status: 'unsubscribed' },
    ]);
    const report = await importContacts(deps, orgId, listId, [
      { email: 'd@example.test', status: 'subscribed', lastName: 'Doe' },
    ]);
    expect(report).toMatchObject({ created: 0, updated: 1, rejected: 0 });
    expect(await one('d@example.test')).toMatchObject({
      status: 'unsubscribed',
      lastName: 'Doe',
    });
  });

  it('rule 4: one bad line rejects only itself, with "<field>: <message>" reasons', async () => {
    // Arrange
    const { deps, orgId, listId, all } = await setup();
    const long = 'x'.repeat(101);
    // Act
    const report = await importContacts(deps, orgId, listId, [
      { email: 'ok1@example.test' },
      { email: 'not-an-email' },
      { email: 'long@example.test', firstName: long },
      { email: 'status@example.test', status: 'vip' },
      'a string',
      { email: 'when@example.test', optinAt: 'yesterday' },
      { email: 'ip@example.test', confirmedIp: '999.1.1.1' },
      { firstName: 'No email' },
      { email: 'ok2@example.test', lastName: 'x'.repeat(100) },
      // Issue 29, defect 2: a consent date is never rewritten to 2 March.
      { email: 'leap@example.test', confirmedAt: '2027-02-30T10:00:00Z' },
    ]);
    // Assert
    expect(report).toEqual({
      total: 10,
      created: 2,
      updated: 0,
      rejected: 8,
      errors: [
        {
          index: 1,
          email: 'not-an-email',
          reason: 'email: must be an email address',
        },
        {
          index: 2,
          email: 'long@example.test',
          reason: 'firstName: must be at most 100 characters',
        },
        {
          index: 3,
          email: 'status@example.test',
          reason:
            'status: must be one of pending, subscribed, unsubscribed, bounced, complained',
        },
        { index: 4, email: '', reason: 'entry: must be an object' },
        {
          index: 5,
          email: 'when@example.test',
          reason: 'optinAt: must be an ISO 8601 date',
        },
        {
          index: 6,
          email: 'ip@example.test',
          reason: 'confirmedIp: must be an IP address',
        },
        { index: 7, email: '', reason: 'email: is required' },
        {
          index: 9,
          email: 'leap@example.test',
          reason:
            'confirmedAt: must be a real date (no 30 February, no 24:00), in the years 1000 to 9999',
        },
      ],
    });
    expect((await all()).map((c) => c.email)).toEqual([
      'ok1@example.test',
      'ok2@example.test',
    ]);
  });

  it('rejects a line that carries doubleOptIn, whatever its value', async () => {
    const { deps, orgId, listId, all } = await setup();
    const report = await importContacts(deps, orgId, listId, [
      { email: 'a@example.test', doubleOptIn: false },
      { email: 'b@example.test' },
    ]);
    expect(report.rejected).toBe(1);
    expect(report.errors[0]?.reason).toMatch(/^doubleOptIn: /);
    expect((await all()).map((c) => c.email)).toEqual(['b@example.test']);
  });

  it('rule 5: answers 413 over 500 entries, naming the limit, and writes nothing', async () => {
    const { deps, orgId, listId, all } = await setup();
    const lines = Array.from({ length: 501 }, (_, i) => ({
      email: `n${i}@example.test`,
      tags: ['never-created'],
    }));
    const error = await importContacts(deps, orgId, listId, lines).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as Error).message).toContain('at most 500 contacts');
    expect(await all()).toEqual([]);
    expect((await listTags(deps, orgId, { page: 1, limit: 10 })).total).toBe(0);
  });

  it('accepts exactly 500 entries', async () => {
    const { deps, orgId, listId } = await setup();
    const lines = Array.from({ length: 500 }, (_, i) => ({
      email: `m${i}@example.test`,
    }));
    const report = await importContacts(deps, orgId, listId, lines);
    expect(report).toMatchObject({ total: 500, created: 500, rejected: 0 });
    expect(
      (await listLists(deps, orgId, { page: 1, limit: 10 })).items[0]
        ?.contactCount,
    ).toBe(500);
  });

  it('creates missing tags by name, reusing existing ones case-insensitively', async () => {
    const { deps, orgId, listId, one } = await setup();
    await importContacts(deps, orgId, listId, [
      { email: 't1@example.test', tags: ['VIP', 'news'] },
      { email: 't2@example.test', tags: ['vip'] },
    ]);
    const tags = await listTags(deps, orgId, { page: 1, limit: 10 });
    expect(tags.items.map((t) => [t.name, t.contactCount]).sort()).toEqual([
      ['VIP', 2],
      ['news', 1],
    ]);
    expect((await one('t2@example.test'))?.tags.map((t) => t.name)).toEqual([
      'VIP',
    ]);
  });

  it('rejects only the lines that would bring an import past 100 distinct tags', async () => {
    const { deps, orgId, listId, all } = await setup();
    // Lines 0 and 1 name 50 tags each (100 in all); line 2 a 101st.
    const fifty = (prefix: string) =>
      Array.from({ length: 50 }, (_, t) => `${prefix}-${t}`);
    const lines = [
      { email: 'many0@example.test', tags: fifty('a') },
      { email: 'many1@example.test', tags: fifty('b') },
      { email: 'many2@example.test', tags: ['c'] },
      { email: 'many3@example.test', tags: ['a-1', 'B-2'] },
    ];
    const report = await importContacts(deps, orgId, listId, lines);
    expect(report).toMatchObject({ created: 3, rejected: 1 });
    expect(report.errors).toEqual([
      {
        index: 2,
        email: 'many2@example.test',
        reason: expect.stringMatching(
          /^tags: one import names at most 100 distinct tags/,
        ),
      },
    ]);
    expect((await all()).map((c) => c.email)).toEqual([
      'many0@example.test',
      'many1@example.test',
      'many3@example.test',
    ]);
  });

  it('a contact created bounced or complained suppresses its address in the organization, as an SES report does (issue 29, defect 5)', async () => {
    // Arrange: the addresses are subscribed in another list already.
    const { deps, orgId, listId } = await setup();
    const other = await createList(deps, orgId, { name: 'Events' });
    const [bounced, complained, fine] = [
      uniqueEmail('imp-bounce'),
      uniqueEmail('imp-complaint'),
      uniqueEmail('imp-fine'),
    ];
    for (const email of [bounced, complained, fine]) {
      await addContact(deps, orgId, other.id, { email, doubleOptIn: false });
    }
    // Act
    await importContacts(deps, orgId, listId, [
      { email: bounced, status: 'bounced' },
      { email: complained, status: 'complained' },
      { email: fine, status: 'unsubscribed' },
    ]);
    const third = await createList(deps, orgId, { name: 'Later' });
    const later = await importContacts(deps, orgId, third.id, [
      { email: bounced, status: 'subscribed' },
    ]);
    // Assert
    const inOther = (
      await listContacts(deps, orgId, { listId: other.id, page: 1, limit: 10 })
    ).items;
    const statusIn = (email: string) =>
      inOther.find((c) => c.email === email)?.status;
    expect(statusIn(bounced)).toBe('bounced');
    expect(statusIn(complained)).toBe('complained');
    expect(statusIn(fine)).toBe('subscribed');
    const suppressions = await deps.delivery.suppressions(orgId, [
      bounced,
      complained,
      fine,
    ]);
    expect(suppressions.get(bounced)).toMatchObject({
      reason: 'bounce',
      source: 'import',
    });
    expect(suppressions.get(complained)?.reason).toBe('complaint');
    expect(suppressions.has(fine)).toBe(false);
    expect(later.created).toBe(1);
    const [inThird] = (
      await listContacts(deps, orgId, { listId: third.id, page: 1, limit: 10 })
    ).items;
    expect(inThird?.status).toBe('bounced');
    expect((await deps.lists.get(orgId, other.id))?.statusCounts).toMatchObject(
      {
        subscribed: 1,
        bounced: 1,
        complained: 1,
      },
    );
  });

  it('an import cut short before its suppressions were spread is completed by running it again (issue 29, defect 5)', async () => {
    // Arrange: the address subscribed in another list; the first run of
    // the import stores its contacts, then stops before suppressing.
    const { deps, orgId, listId } = await setup();
    const other = await createList(deps, orgId, { name: 'Events' });
    const email = uniqueEmail('cut-short');
    await addContact(deps, orgId, other.id, { email, doubleOptIn: false });
    const cut = {
      ...deps,
      delivery: Object.assign(Object.create(deps.delivery), {
        suppress: async () => {
          throw new Error('cut short');
        },
      }),
    };
    await expect(
      importContacts(cut, orgId, listId, [{ email, status: 'bounced' }]),
    ).rejects.toThrow('cut short');
    const statusInOther = async () =>
      (
        await listContacts(deps, orgId, {
          listId: other.id,
          page: 1,
          limit: 10,
        })
      ).items[0]?.status;
    expect(await statusInOther()).toBe('subscribed');
    // Act: the same import again.
    const again = await importContacts(deps, orgId, listId, [
      { email, status: 'bounced' },
    ]);
    // Assert
    expect(again).toMatchObject({ created: 0, updated: 1, rejected: 0 });
    expect(await statusInOther()).toBe('bounced');
    expect(
      (await deps.delivery.suppressions(orgId, [email])).get(email)?.reason,
    ).toBe('bounce');
  });

  it('applies the status on creation only, defaulting to subscribed', async () => {
    const { deps, orgId, listId, one } = await setup();
    await importContacts(deps, orgId, listId, [
      { email: 's1@example.test' },
      { email: 's2@example.test', status: 'bounced' },
    ]);
    expect((await one('s1@example.test'))?.status).toBe('subscribed');
    expect((await one('s2@example.test'))?.status).toBe('bounced');
  });

  it('gives created = N, then updated = N, for two imports of the same file', async () => {
    const { deps, orgId, listId } = await setup();
    const file = Array.from({ length: 40 }, (_, i) => ({
      email: `same${i}@example.test`,
      tags: [`group-${i % 3}`],
    }));
    const first = await importContacts(deps, orgId, listId, file);
    const second = await importContacts(deps, orgId, listId, file);
    expect(first).toMatchObject({ total: 40, created: 40, updated: 0 });
    expect(second).toMatchObject({ total: 40, created: 0, updated: 40 });
  });

  it('applies duplicate emails of one import in order: first creates, later ones update', async () => {
    const { deps, orgId, listId, one, all } = await setup();
    const report = await importContacts(deps, orgId, listId, [
      {
        email: 'dup@example.test',
        firstName: 'First',
        status: 'unsubscribed',
        tags: ['a'],
      },
      { email: 'other@example.test' },
      {
        email: 'DUP@example.test',
        firstName: 'Second',
        status: 'subscribed',
        tags: ['b'],
      },
    ]);
    expect(report).toMatchObject({
      total: 3,
      created: 2,
      updated: 1,
      rejected: 0,
    });
    expect(await one('dup@example.test')).toMatchObject({
      firstName: 'Second',
      status: 'unsubscribed',
      tags: [
        expect.objectContaining({ name: 'a' }),
        expect.objectContaining({ name: 'b' }),
      ],
    });
    expect(await all()).toHaveLength(2);
  });

  it('answers 404 for an unknown list or another organization’s list', async () => {
    const { deps, orgId } = await setup();
    const other = await orgWithList(deps);
    await expect(
      importContacts(deps, orgId, other.listId, [{ email: 'x@example.test' }]),
    ).rejects.toThrow(NotFoundError);
    await expect(getList(deps, orgId, other.listId)).rejects.toThrow(
      NotFoundError,
    );
  });
});
