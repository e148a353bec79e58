/**
 * The suppression list (issue 31, §3) through the pipeline: members read
 * it newest first and look addresses up, admins add addresses (their
 * contacts in every list unsubscribed, never subscribed again while
 * suppressed, a bulk import creating them unsubscribed) and lift them (a
 * complaint only with force, every lift recorded); another organization's
 * address is as unknown as one never suppressed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../shared/access/api-key.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { uniqueEmail } from '../support/audience.ts';

describe('the suppression list, through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Suppressions');
    other = await createOrganizationWithKeys(client, 'Other suppressions');
  });

  const at = (email: string) => `/suppressions/${encodeURIComponent(email)}`;

  const suppress = (
    addresses: { email: string; reason?: string }[],
    key = org.ownerKey,
  ) => client.post('/suppressions', { key, body: { addresses } });

  const newList = async (name: string) => {
    const answer = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: `${name} ${uniqueEmail()}` },
    });
    return String(answer.json.data.id);
  };

  const addContact = (listId: string, email: string) =>
    client.post(`/lists/${listId}/contacts`, {
      key: org.ownerKey,
      body: { email, doubleOptIn: false },
    });

  it('adds addresses by hand (admins), idempotently; their contacts in every list become unsubscribed and cannot be subscribed again', async () => {
    // Arrange
    const [first, second] = [await newList('One'), await newList('Two')];
    const ana = uniqueEmail('ana');
    const bob = uniqueEmail('bob');
    const added = await addContact(first, ana);
    await addContact(second, ana);
    const before = client.writes();

    // Act
    const byMember = await suppress([{ email: ana }], org.memberKey);
    const writesAfterMember = client.writes();
    const answer = await suppress([
      { email: ana.toUpperCase() },
      { email: bob, reason: 'imported' },
      { email: ana },
    ]);
    const again = await suppress([{ email: bob }]);

    // Assert
    expect(byMember.status).toBe(403);
    expect(writesAfterMember).toBe(before);
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({
      total: 2,
      added: 2,
      alreadySuppressed: 0,
    });
    expect(again.json.data).toEqual({
      total: 1,
      added: 0,
      alreadySuppressed: 1,
    });
    const contact = await client.get(`/contacts/${added.json.data.id}`, {
      key: org.memberKey,
    });
    expect(contact.json.data.status).toBe('unsubscribed');
    const inSecond = await client.get('/contacts', {
      key: org.memberKey,
      query: { listId: second, status: 'unsubscribed' },
    });
    expect(inSecond.json.pagination.total).toBe(1);
    // Never subscribed while suppressed: add, resubscribe, PATCH.
    const third = await newList('Three');
    const refused = await addContact(third, ana);
    const resubscribed = await client.post(
      `/contacts/${added.json.data.id}/resubscribe`,
      { key: org.ownerKey },
    );
    const patched = await client.patch(`/contacts/${added.json.data.id}`, {
      key: org.ownerKey,
      body: { status: 'subscribed' },
    });
    expect(refused.status).toBe(201);
    expect(refused.json.data.status).toBe('unsubscribed');
    expect(resubscribed.status).toBe(409);
    expect(resubscribed.json.code).toBe('contact.suppressed');
    expect(patched.json.code).toBe('contact.suppressed');
    const inThird = await client.get('/contacts', {
      key: org.memberKey,
      query: { listId: third, status: 'subscribed' },
    });
    expect(inThird.json.pagination.total).toBe(0);
  });

  it('a bulk import creates a manually suppressed address unsubscribed, never subscribed, whatever the line says', async () => {
    // Arrange
    const listId = await newList('Import');
    const carl = uniqueEmail('carl');
    await suppress([{ email: carl }]);

    // Act
    const report = await client.post(`/lists/${listId}/contacts/bulk`, {
      key: org.ownerKey,
      body: { contacts: [{ email: carl, status: 'subscribed' }] },
    });

    // Assert
    expect(report.json.data).toMatchObject({ created: 1, rejected: 0 });
    const listed = await client.get('/contacts', {
      key: org.memberKey,
      query: { listId },
    });
    expect(listed.json.data.map((c: { status: string }) => c.status)).toEqual([
      'unsubscribed',
    ]);
  });

  it('lists newest first with reason, source and time, walks by cursor, and looks one up (members)', async () => {
    // Arrange: a fresh organization, so the list is this test's alone.
    const own = await createOrganizationWithKeys(client, 'Listing');
    const emails = [0, 1, 2, 3, 4].map((i) => uniqueEmail(`l${i}`));
    for (const email of emails) {
      await suppress([{ email }], own.ownerKey);
    }
    const listId = String(
      (
        await client.post('/lists', {
          key: own.ownerKey,
          body: { name: 'Complainers' },
        })
      ).json.data.id,
    );
    const dan = uniqueEmail('dan');
    const contact = await client.post(`/lists/${listId}/contacts`, {
      key: own.ownerKey,
      body: { email: dan, doubleOptIn: false },
    });
    await client.patch(`/contacts/${contact.json.data.id}`, {
      key: own.ownerKey,
      body: { status: 'complained' },
    });

    // Act
    const firstPage = await client.get('/suppressions', {
      key: own.memberKey,
      query: { limit: '2' },
    });
    const secondPage = await client.get('/suppressions', {
      key: own.memberKey,
      query: { limit: '2', cursor: firstPage.json.pagination.nextCursor },
    });
    const byNumber = await client.get('/suppressions', {
      key: own.memberKey,
      query: { limit: '2', page: '2' },
    });
    const lastPage = await client.get('/suppressions', {
      key: own.memberKey,
      query: { limit: '2', cursor: secondPage.json.pagination.nextCursor },
    });
    const otherLimit = await client.get('/suppressions', {
      key: own.memberKey,
      query: { limit: '3', cursor: firstPage.json.pagination.nextCursor },
    });
    const lookup = await client.get(at(dan), { key: own.memberKey });
    // Handed over still encoded (a gateway that does not decode): the same.
    const encoded = await client.get(at(encodeURIComponent(dan)), {
      key: own.memberKey,
    });

    // Assert
    const newestFirst = [dan, ...[...emails].reverse()];
    expect(firstPage.json.pagination).toMatchObject({
      total: 6,
      page: 1,
      totalPages: 3,
    });
    expect(firstPage.json.data.map((s: { email: string }) => s.email)).toEqual(
      newestFirst.slice(0, 2),
    );
    expect(firstPage.json.data[0]).toEqual({
      email: dan,
      reason: 'complaint',
      source: 'api',
      createdAt: expect.any(String),
      messageId: null,
    });
    expect(firstPage.json.data[1]).toMatchObject({
      reason: 'manual',
      source: 'api',
    });
    expect(secondPage.json.data).toEqual(byNumber.json.data);
    expect(secondPage.json.pagination.page).toBe(2);
    expect(lastPage.json.data.map((s: { email: string }) => s.email)).toEqual(
      newestFirst.slice(4),
    );
    expect(lastPage.json.pagination.nextCursor).toBeNull();
    expect(otherLimit.status).toBe(400);
    expect(otherLimit.json.details).toEqual([
      { field: 'cursor', message: expect.any(String) },
    ]);
    expect(lookup.status).toBe(200);
    expect(lookup.json.data).toEqual(firstPage.json.data[0]);
    expect(encoded.json.data).toEqual(lookup.json.data);
  });

  it("answers another organization's address exactly as an address never suppressed: 404, nothing written", async () => {
    // Arrange
    const theirs = uniqueEmail('theirs');
    const never = uniqueEmail('never');
    await suppress([{ email: theirs }], other.ownerKey);
    const before = client.writes();

    // Act
    const foreign = await client.get(at(theirs), { key: org.memberKey });
    const unknown = await client.get(at(never), { key: org.memberKey });
    const liftForeign = await client.delete(at(theirs), { key: org.ownerKey });
    const liftUnknown = await client.delete(at(never), { key: org.ownerKey });

    // Assert
    for (const [answer, email] of [
      [foreign, theirs],
      [unknown, never],
      [liftForeign, theirs],
      [liftUnknown, never],
    ] as const) {
      expect(answer.status).toBe(404);
      expect(answer.json.code).toBe('suppression.notFound');
      expect(answer.json.error).toBe(
        `${email} is not on the organization's suppression list`,
      );
    }
    expect(client.writes()).toBe(before);
    const stillTheirs = await client.get(at(theirs), { key: other.memberKey });
    expect(stillTheirs.status).toBe(200);
  });

  it('lifts a manual suppression and a bounce (admins); a complaint only with force=true; each lift recorded with its key; contacts unchanged', async () => {
    // Arrange
    const own = await createOrganizationWithKeys(client, 'Lifts');
    const listId = String(
      (
        await client.post('/lists', {
          key: own.ownerKey,
          body: { name: 'Lifted' },
        })
      ).json.data.id,
    );
    const contactOf = async (email: string, status?: string) => {
      const added = await client.post(`/lists/${listId}/contacts`, {
        key: own.ownerKey,
        body: { email, doubleOptIn: false },
      });
      if (status) {
        await client.patch(`/contacts/${added.json.data.id}`, {
          key: own.ownerKey,
          body: { status },
        });
      }
      return String(added.json.data.id);
    };
    const manual = uniqueEmail('manual');
    const bounced = uniqueEmail('bounced');
    const complained = uniqueEmail('complained');
    const manualContact = await contactOf(manual);
    await contactOf(bounced, 'bounced');
    await contactOf(complained, 'complained');
    await suppress([{ email: manual }], own.ownerKey);
    const ownerKeyId = keyIdOf(own.ownerKey);

    // Act
    const byMember = await client.delete(at(manual), { key: own.memberKey });
    const liftedManual = await client.delete(at(manual), {
      key: own.ownerKey,
    });
    const liftedBounce = await client.delete(at(bounced), {
      key: own.ownerKey,
    });
    const refused = await client.delete(at(complained), { key: own.ownerKey });
    const forcedByMember = await client.delete(at(complained), {
      key: own.memberKey,
      query: { force: 'true' },
    });
    const forced = await client.delete(at(complained), {
      key: own.ownerKey,
      query: { force: 'true' },
    });
    const liftedAgain = await client.delete(at(manual), { key: own.ownerKey });

    // Assert
    expect(byMember.status).toBe(403);
    expect(liftedManual.status).toBe(200);
    expect(liftedManual.json.data).toEqual({
      email: manual,
      reason: 'manual',
      source: 'api',
      suppressedAt: expect.any(String),
      liftedAt: expect.any(String),
      liftedBy: ownerKeyId,
      forced: false,
    });
    expect(liftedBounce.json.data).toMatchObject({
      reason: 'bounce',
      forced: false,
    });
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe('suppression.complaint');
    expect(forcedByMember.status).toBe(403);
    expect(forced.status).toBe(200);
    expect(forced.json.data).toMatchObject({
      email: complained,
      reason: 'complaint',
      forced: true,
      liftedBy: ownerKeyId,
    });
    expect(liftedAgain.status).toBe(404);
    const lookups = await Promise.all(
      [manual, bounced, complained].map((email) =>
        client.get(at(email), { key: own.memberKey }),
      ),
    );
    expect(lookups.map((answer) => answer.status)).toEqual([404, 404, 404]);
    const lifts = await client.get('/suppressions/lifts', {
      key: own.memberKey,
    });
    expect(lifts.json.data.map((l: { email: string }) => l.email)).toEqual([
      complained,
      bounced,
      manual,
    ]);
    expect(lifts.json.pagination.total).toBe(3);
    const remaining = await client.get('/suppressions', { key: own.memberKey });
    expect(remaining.json.pagination.total).toBe(0);
    // Lifting changes no contact: each stays as the suppression left it.
    const contacts = await client.get('/contacts', {
      key: own.memberKey,
      query: { listId },
    });
    expect(
      Object.fromEntries(
        contacts.json.data.map((c: { email: string; status: string }) => [
          c.email,
          c.status,
        ]),
      ),
    ).toEqual({
      [manual]: 'unsubscribed',
      [bounced]: 'bounced',
      [complained]: 'complained',
    });
    // Once lifted, the person may subscribe again.
    const resubscribed = await client.post(
      `/contacts/${manualContact}/resubscribe`,
      { key: own.ownerKey },
    );
    expect(resubscribed.json.data.status).toBe('subscribed');
  });

  it('refuses a malformed address, too many addresses and a reason it does not take, naming the field; writes nothing', async () => {
    // Arrange
    const before = client.writes();
    const many = Array.from({ length: 1001 }, (_, i) => ({
      email: `n${i}@example.test`,
    }));

    // Act
    const badPath = await client.get('/suppressions/not-an-address', {
      key: org.memberKey,
    });
    const tooMany = await suppress(many);
    const badReason = await suppress([
      { email: uniqueEmail(), reason: 'complaint' },
    ]);
    const empty = await suppress([]);
    const badForce = await client.delete(at(uniqueEmail()), {
      key: org.ownerKey,
      query: { force: 'yes' },
    });

    // Assert
    expect(badPath.status).toBe(400);
    expect(badPath.json.details).toEqual([
      { field: 'email', message: 'must be an email address' },
    ]);
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.details).toEqual([
      { field: 'addresses', message: 'must hold at most 1,000 addresses' },
    ]);
    expect(badReason.json.details).toEqual([
      { field: 'addresses.0.reason', message: 'must be manual or imported' },
    ]);
    expect(empty.json.details).toEqual([
      { field: 'addresses', message: 'must hold at least one address' },
    ]);
    expect(badForce.json.details).toEqual([
      { field: 'force', message: 'must be true or false' },
    ]);
    expect(client.writes()).toBe(before);
  });

  it('the operator rekeys an organization through the admin CLI: nothing to move for one created by this version', async () => {
    // Act
    const report = await client.admin(
      'suppressions',
      'rekey',
      '--org',
      org.orgId,
    );
    const unknown = await client
      .admin(
        'suppressions',
        'rekey',
        '--org',
        '01a20000-0000-7000-8000-000000000099',
      )
      .catch((error: unknown) => error);

    // Assert
    expect(report).toEqual({ orgId: org.orgId, moved: 0, dropped: 0 });
    expect(String(unknown)).toMatch(/No organization/);
  });

  it('a cursor holding a position of another log, or a page past any count, is 400 naming cursor (never a 500)', async () => {
    // Arrange: positions the API never gives for these listings.
    const cursor = (a: string, p: number, l: string) =>
      Buffer.from(JSON.stringify({ a, p, l })).toString('base64url');

    // Act
    const answers = await Promise.all([
      client.get('/suppressions', {
        key: org.memberKey,
        query: { limit: '1', cursor: cursor('LIFT#2026', 2, 'suppressions/1') },
      }),
      client.get('/suppressions/lifts', {
        key: org.memberKey,
        query: { limit: '1', cursor: cursor('LOG#2026', 2, 'lifts/1') },
      }),
      client.get('/suppressions', {
        key: org.memberKey,
        query: {
          limit: '1',
          cursor: cursor('LOG#2026', 1e308, 'suppressions/1'),
        },
      }),
    ]);

    // Assert
    expect(answers.map((a) => [a.status, a.json.details?.[0]?.field])).toEqual([
      [400, 'cursor'],
      [400, 'cursor'],
      [400, 'cursor'],
    ]);
  });
});
