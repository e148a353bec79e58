/**
 * Erasure over HTTP (issue 31 §2): the routes' answers, roles and tenancy.
 * What an erasure removes is proved on the engine by
 * test/shared/privacy/erase.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { uniqueEmail } from '../support/audience.ts';

describe('erasures over HTTP (issue 31 §2)', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let other: TestOrganization;
  let listId: string;

  const add = async (email: string, key = org.ownerKey, list = listId) => {
    const answer = await client.post(`/lists/${list}/contacts`, {
      key,
      body: { email, firstName: 'Ann', doubleOptIn: false },
    });
    return answer.json.data.id as string;
  };

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Erasing Co');
    other = await createOrganizationWithKeys(client, 'Other Co');
    const list = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: 'Readers' },
    });
    listId = list.json.data.id;
  });

  it('POST /erasures answers 201 with the record; the contact is gone; GET /erasures and GET /erasures/{id} show it without the person', async () => {
    // Arrange
    const email = uniqueEmail('ann');
    const contactId = await add(email);

    const me = await client.get('/me', { key: org.ownerKey });

    // Act
    const erased = await client.post('/erasures', {
      key: org.ownerKey,
      body: { email: email.toUpperCase() },
    });
    const contact = await client.get(`/contacts/${contactId}`, {
      key: org.ownerKey,
    });
    const listed = await client.get('/erasures', { key: org.ownerKey });
    const one = await client.get(`/erasures/${erased.json.data.id}`, {
      key: org.ownerKey,
    });

    // Assert
    expect(erased.status).toBe(201);
    expect(erased.json.data).toMatchObject({
      target: 'email',
      contacts: 1,
      journeys: 0,
      topicOptOuts: 0,
      erasedBy: { keyId: me.json.data.keyId },
    });
    expect(contact.status).toBe(404);
    expect(listed.json.data).toContainEqual(erased.json.data);
    expect(one.json.data).toEqual(erased.json.data);
    expect(JSON.stringify(listed.json)).not.toContain(email);
  });

  it('POST /contacts/{contactId}/erase erases the address in every list; the contact id then answers 404', async () => {
    // Arrange
    const email = uniqueEmail('bo');
    const second = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: `Second ${email}` },
    });
    const contactId = await add(email);
    const otherId = await add(email, org.ownerKey, second.json.data.id);

    // Act
    const erased = await client.post(`/contacts/${contactId}/erase`, {
      key: org.ownerKey,
    });
    const again = await client.post(`/contacts/${contactId}/erase`, {
      key: org.ownerKey,
    });
    const sibling = await client.get(`/contacts/${otherId}`, {
      key: org.ownerKey,
    });

    // Assert
    expect(erased.status).toBe(201);
    expect(erased.json.data).toMatchObject({ target: 'contact', contacts: 2 });
    // The ids of what is gone, for a system that kept them (issue 32).
    expect([...erased.json.data.contactIds].sort()).toEqual(
      [contactId, otherId].sort(),
    );
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('contact.notFound');
    expect(sibling.status).toBe(404);
  });

  it("another organization's address answers exactly as one never held (404 person.notFound), and a member is refused (403); neither writes", async () => {
    // Arrange
    const theirs = uniqueEmail('theirs');
    const theirList = await client.post('/lists', {
      key: other.ownerKey,
      body: { name: 'Theirs' },
    });
    await add(theirs, other.ownerKey, theirList.json.data.id);
    const writes = client.writes();

    // Act
    const foreign = await client.post('/erasures', {
      key: org.ownerKey,
      body: { email: theirs },
    });
    const never = await client.post('/erasures', {
      key: org.ownerKey,
      body: { email: uniqueEmail('never') },
    });
    const member = await client.post('/erasures', {
      key: org.memberKey,
      body: { email: theirs },
    });

    // Assert
    expect([foreign.status, never.status, member.status]).toEqual([
      404, 404, 403,
    ]);
    expect(foreign.body).toBe(never.body);
    expect(foreign.json.code).toBe('person.notFound');
    expect(client.writes()).toBe(writes);
  });

  it('an address that is not one is 400 naming email', async () => {
    const answer = await client.post('/erasures', {
      key: org.ownerKey,
      body: { email: 'not an address' },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.details.map((d: { field: string }) => d.field)).toEqual([
      'email',
    ]);
  });

  it('an address on the suppression list alone is held: its export says why it is suppressed; an erased one stays held by its key, without the address anywhere but the request', async () => {
    // Arrange
    const listed = uniqueEmail('listed');
    await client.post('/suppressions', {
      key: org.ownerKey,
      body: { addresses: [{ email: listed }] },
    });
    const erased = uniqueEmail('erased');
    await add(erased);
    await client.post('/erasures', {
      key: org.ownerKey,
      body: { email: erased },
    });

    // Act
    const ofListed = await client.post('/exports', {
      key: org.ownerKey,
      body: { email: listed },
    });
    const ofErased = await client.post('/exports', {
      key: org.ownerKey,
      body: { email: erased },
    });
    const lifted = await client.delete(
      `/suppressions/${encodeURIComponent(erased)}`,
      { key: org.ownerKey, query: { force: 'true' } },
    );
    const lifts = await client.get('/suppressions/lifts', {
      key: org.ownerKey,
    });

    // Assert
    expect(ofListed.status).toBe(200);
    expect(ofListed.json.data).toMatchObject({
      contacts: [],
      suppression: { reason: 'manual' },
    });
    expect(ofErased.json.data).toMatchObject({
      contacts: [],
      activity: [],
      suppression: { reason: 'erased' },
    });
    // A forced lift of an erased person's suppression writes no address.
    expect(lifted.status).toBe(200);
    expect(JSON.stringify(lifts.json)).not.toContain(erased);
  });
});
