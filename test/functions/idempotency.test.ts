/**
 * `Idempotency-Key` on every write (issue 32, part 2), through the whole
 * pipeline: a repeat gets the first answer back and does nothing; the key
 * for another request is a 422; a repeat while the first runs is a 409;
 * keys belong to their API key and organization and last 24 hours; 100
 * identical requests at once have one effect; a run that stopped after its
 * writes, before its answer was kept, is run again without a second effect.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { QueueSender } from '../../shared/ports.ts';
import {
  type ApiAnswer,
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { fixedClock } from '../support/dynamo.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A clock in the future: DynamoDB Local deletes items whose TTL is past. */
const clock = fixedClock('2030-05-06T09:00:00.000Z');

/** Messages sent to the dispatcher's queue (a campaign send's start). */
const dispatched: unknown[] = [];
const recording: QueueSender = {
  send: async (message) => {
    dispatched.push(message);
  },
};

const key = () => ({ 'Idempotency-Key': randomUUID() });

/** The same key again: the headers of an earlier call. */
type Headers = ReturnType<typeof key>;

/**
 * Where the rate limit stands aside: a minute later, the key's window is
 * empty (120 requests), for a burst of 100.
 */
const nextMinute = () => clock.advance(61_000);

/** Every answer of a burst is the first, given again, or a 409 to retry. */
const expectOneRunOf = (answers: ApiAnswer[]) => {
  const runs = answers.filter(
    (a) => a.status < 300 && a.headers['idempotent-replayed'] === undefined,
  );
  expect(runs).toHaveLength(1);
  const [first] = runs as [ApiAnswer];
  for (const answer of answers) {
    if (answer.status === 409) {
      expect(answer.json.code).toBe('idempotency.inProgress');
      expect(answer.headers['retry-after']).toBe('1');
    } else {
      expect(answer.status).toBe(first.status);
      expect(answer.body).toBe(first.body);
    }
  }
  return first;
};

describe('Idempotency-Key', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;

  const post = (path: string, body: unknown, headers: Headers, k?: string) =>
    client.post(path, { key: k ?? org.ownerKey, body, headers });

  beforeAll(async () => {
    client = await createApiClient({
      clock,
      queues: { dispatch: recording, steps: { send: async () => {} } },
    });
    org = await createOrganizationWithKeys(client, 'Idempotent Co');
    const list = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: 'Readers' },
    });
    listId = list.json.data.id;
  });

  it('gives a repeat the first answer, marked Idempotent-Replayed, and writes nothing again', async () => {
    // Arrange
    const headers = key();
    const name = `List ${randomUUID()}`;
    const first = await post('/lists', { name }, headers);
    const before = await client.scan();
    // Act
    const again = await post('/lists', { name }, headers);
    // Assert
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // A repeat is counted by the rate limit, as any request.
    expect(again.headers['ratelimit-remaining']).toBeDefined();
    expect(await client.scan()).toEqual(before);
  });

  it('takes the body in any key order and spacing as the same request', async () => {
    const headers = key();
    const name = `List ${randomUUID()}`;
    const first = await client.post('/lists', {
      key: org.ownerKey,
      rawBody: `{"name": ${JSON.stringify(name)}}`,
      headers,
    });
    const again = await client.post('/lists', {
      key: org.ownerKey,
      rawBody: `{ "name":${JSON.stringify(name)} }`,
      headers,
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('refuses the key for another request — another body, path or query — with 422, writing nothing', async () => {
    // Arrange
    const headers = key();
    const first = await post('/lists', { name: `L ${randomUUID()}` }, headers);
    const before = await client.scan();
    // Act
    const otherBody = await post('/lists', { name: 'Other' }, headers);
    const otherPath = await post('/tags', { name: 'Other' }, headers);
    const otherQuery = await client.delete(
      `/suppressions/${encodeURIComponent('nobody@example.test')}`,
      { key: org.ownerKey, query: { force: 'true' }, headers },
    );
    // Assert
    expect(first.status).toBe(201);
    for (const answer of [otherBody, otherPath, otherQuery]) {
      expect(answer.status).toBe(422);
      expect(answer.json.code).toBe('idempotency.keyReused');
    }
    expect(otherBody.json.error).toContain(
      'POST /api/v1/lists with other parameters or another body',
    );
    expect(otherPath.json.error).toContain('(POST /api/v1/lists)');
    expect(await client.scan()).toEqual(before);
  });

  it('checks the header: 1 to 255 visible ASCII characters, sent once; a bad one is a 400 naming it', async () => {
    const bad = ['', ' ', 'a b', 'é', 'x'.repeat(256), 'tab\there'];
    const writes = client.writes();
    for (const value of bad) {
      const answer = await client.post('/lists', {
        key: org.ownerKey,
        body: { name: `Bad ${randomUUID()}` },
        headers: { 'Idempotency-Key': value },
      });
      expect(answer.status, JSON.stringify(value)).toBe(400);
      expect(answer.json.code).toBe('idempotency.keyInvalid');
      expect(answer.json.details).toEqual([
        { field: 'Idempotency-Key', message: expect.any(String) },
      ]);
    }
    expect(client.writes()).toBe(writes);
    // Any letter case of the name; the longest key and every visible
    // character are fine.
    const longest = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: `Long ${randomUUID()}` },
      headers: { 'IDEMPOTENCY-KEY': `${'~!'.repeat(127)}z` },
    });
    expect(longest.status).toBe(201);
  });

  it('is ignored by GET and by the reads that take a body (POST /render), as by public routes', async () => {
    const template = await client.post('/templates', {
      key: org.ownerKey,
      body: {
        name: 'Render me',
        defaultSubject: 'Hi',
        content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Stop</a>',
      },
    });
    const headers = { 'Idempotency-Key': 'not a valid key' };
    const read = await client.get('/lists', { key: org.ownerKey, headers });
    const rendered = await client.post('/render', {
      key: org.memberKey,
      body: { templateId: template.json.data.id },
      headers,
    });
    expect(read.status).toBe(200);
    expect(rendered.status).toBe(200);
  });

  it('keeps a refusal of the operation (a 409) as its answer, but lets a failure (5xx) run again', async () => {
    // Arrange: a taken name, then freed.
    const name = `Topic ${randomUUID()}`;
    const topic = await client.post('/topics', {
      key: org.ownerKey,
      body: { name },
    });
    const headers = key();
    const refused = await post('/topics', { name }, headers);
    await client.delete(`/topics/${topic.json.data.id}`, {
      key: org.ownerKey,
    });
    // Act
    const again = await post('/topics', { name }, headers);
    const fresh = await post('/topics', { name }, key());
    // A failure of the operation: the key is let go, and the repeat runs.
    const failing = key();
    const { lists } = client.deps;
    const create = lists.create.bind(lists);
    lists.create = async () => {
      throw new Error('the table is gone for a moment');
    };
    const failed = await post('/lists', { name: 'Flaky' }, failing).finally(
      () => {
        lists.create = create;
      },
    );
    const retried = await post('/lists', { name: 'Flaky' }, failing);
    // Assert
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe('topic.nameTaken');
    expect(again.status).toBe(409);
    expect(again.body).toBe(refused.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(fresh.status).toBe(201);
    expect(failed.status).toBe(500);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('belongs to its API key and organization: the same key from another key or organization is its own', async () => {
    // Arrange
    const other = await createOrganizationWithKeys(client, 'Other Co');
    const second = await client.admin(
      'key',
      'create',
      '--org',
      org.orgId,
      '--email',
      `owner-${org.orgId.slice(-12)}@example.test`,
    );
    const headers = key();
    const name = `Shared ${randomUUID()}`;
    // Act
    const mine = await post('/lists', { name }, headers);
    const otherKey = await post(
      '/tags',
      { name },
      headers,
      String(second.apiKey),
    );
    const otherOrg = await post('/lists', { name }, headers, other.ownerKey);
    // Assert
    expect(mine.status).toBe(201);
    expect(otherKey.status).toBe(201);
    expect(otherKey.headers['idempotent-replayed']).toBeUndefined();
    expect(otherOrg.status).toBe(201);
    expect(otherOrg.json.data.id).not.toBe(mine.json.data.id);
  });

  it('answers for 24 hours from the first request; then the key starts anew', async () => {
    // Arrange
    const headers = key();
    const first = await post(
      '/lists',
      { name: `Day ${randomUUID()}` },
      headers,
    );
    // Act
    clock.advance(DAY_MS - 1_000);
    const lastSecond = await post('/lists', { name: 'Another' }, headers);
    clock.advance(1_000);
    const nextDay = await post(
      '/lists',
      { name: `Next ${randomUUID()}` },
      headers,
    );
    // Assert
    expect(first.status).toBe(201);
    expect(lastSecond.status).toBe(422);
    expect(nextDay.status).toBe(201);
    expect(nextDay.headers['idempotent-replayed']).toBeUndefined();
    expect(nextDay.json.data.id).not.toBe(first.json.data.id);
  });

  describe('100 identical requests at once have one effect', () => {
    it('creates one contact', async () => {
      // Arrange
      const headers = key();
      const email = `once-${randomUUID()}@example.test`;
      const countOf = async () =>
        (await client.scan()).find(
          (item) => item._type === 'List' && item.id === listId,
        )?.contactCount;
      const before = Number(await countOf());
      nextMinute();
      // Act
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          post(
            `/lists/${listId}/contacts`,
            { email, doubleOptIn: false },
            headers,
          ),
        ),
      );
      // Assert
      const first = expectOneRunOf(answers);
      expect(first.status).toBe(201);
      expect(await countOf()).toBe(before + 1);
      const stored = (await client.scan()).filter(
        (item) => item._type === 'Contact' && item.email === email,
      );
      expect(stored).toHaveLength(1);
    });

    it('imports once', async () => {
      // Arrange
      const headers = key();
      const run = randomUUID().slice(0, 8);
      const contacts = Array.from({ length: 20 }, (_, i) => ({
        email: `bulk-${run}-${i}@example.test`,
        tags: [`batch-${run}`],
      }));
      nextMinute();
      // Act
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          post(`/lists/${listId}/contacts/bulk`, { contacts }, headers),
        ),
      );
      // Assert
      const first = expectOneRunOf(answers);
      expect(first.json.data).toMatchObject({ created: 20, updated: 0 });
      const items = await client.scan();
      const imported = items.filter(
        (item) =>
          item._type === 'Contact' &&
          String(item.email).startsWith(`bulk-${run}-`),
      );
      expect(imported).toHaveLength(20);
      expect(
        items.filter((i) => i._type === 'Tag' && i.name === `batch-${run}`),
      ).toHaveLength(1);
    });

    it('sends a campaign once', async () => {
      // Arrange
      const campaignId = await sendableCampaign();
      const headers = key();
      dispatched.length = 0;
      nextMinute();
      // Act
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          post(`/campaigns/${campaignId}/send`, undefined, headers),
        ),
      );
      // Assert
      const first = expectOneRunOf(answers);
      expect(first.status).toBe(202);
      expect(first.json.data).toEqual({
        campaignId,
        status: 'send_requested',
      });
      expect(dispatched).toEqual([
        expect.objectContaining({ kind: 'start', campaignId }),
      ]);
      const read = await client.get(`/campaigns/${campaignId}`, {
        key: org.ownerKey,
      });
      expect(read.json.data.status).toBe('sending');
    });
  });

  describe('a run that stopped after its writes, before its answer was kept', () => {
    /**
     * The process dies between the operation's writes and the keeping of
     * its answer: the answer is lost with it, and the record stays the
     * run's (running) until its lease ends.
     */
    const dying = async <T>(act: () => Promise<T>): Promise<T> => {
      const store = client.deps.idempotency;
      const complete = store.complete.bind(store);
      store.complete = async () => {
        throw new Error('the process died');
      };
      try {
        return await act();
      } finally {
        store.complete = complete;
      }
    };
    /** The lease of the dead run is over (30 s). */
    const leaseOver = () => clock.advance(31_000);

    it('answers 409 while its lease lasts, then runs again and answers the list it created: one list', async () => {
      // Arrange
      const headers = key();
      const name = `Crash ${randomUUID()}`;
      const lost = await dying(() => post('/lists', { name }, headers));
      // Act
      const meanwhile = await post('/lists', { name }, headers);
      leaseOver();
      const rerun = await post('/lists', { name }, headers);
      const replayed = await post('/lists', { name }, headers);
      // Assert
      expect(lost.status).toBe(201);
      expect(meanwhile.status).toBe(409);
      expect(meanwhile.json.code).toBe('idempotency.inProgress');
      expect(rerun.status).toBe(201);
      expect(rerun.headers['idempotent-replayed']).toBeUndefined();
      expect(rerun.body).toBe(lost.body);
      expect(replayed.body).toBe(lost.body);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      const named = (await client.scan()).filter(
        (item) => item._type === 'List' && item.name === name,
      );
      expect(named).toHaveLength(1);
    });

    it('sends a campaign once: the run again answers 202 and starts no second send', async () => {
      const campaignId = await sendableCampaign();
      const headers = key();
      dispatched.length = 0;
      const lost = await dying(() =>
        post(`/campaigns/${campaignId}/send`, undefined, headers),
      );
      leaseOver();
      const rerun = await post(
        `/campaigns/${campaignId}/send`,
        undefined,
        headers,
      );
      expect(lost.status).toBe(202);
      expect(rerun.status).toBe(202);
      expect(rerun.body).toBe(lost.body);
      expect(dispatched).toHaveLength(1);
    });

    it('imports once: the run again updates what the first created', async () => {
      const headers = key();
      const run = randomUUID().slice(0, 8);
      const contacts = Array.from({ length: 5 }, (_, i) => ({
        email: `again-${run}-${i}@example.test`,
      }));
      const lost = await dying(() =>
        post(`/lists/${listId}/contacts/bulk`, { contacts }, headers),
      );
      leaseOver();
      const rerun = await post(
        `/lists/${listId}/contacts/bulk`,
        { contacts },
        headers,
      );
      expect(lost.json.data).toMatchObject({ created: 5 });
      expect(rerun.status).toBe(200);
      expect(rerun.json.data).toMatchObject({ created: 0, updated: 5 });
      const imported = (await client.scan()).filter(
        (item) =>
          item._type === 'Contact' &&
          String(item.email).startsWith(`again-${run}-`),
      );
      expect(imported).toHaveLength(5);
    });
  });

  it('keeps no readable answer: after an erasure, no item holds the address', async () => {
    // Arrange
    const email = `kept-${randomUUID()}@example.test`;
    const added = await post(
      `/lists/${listId}/contacts`,
      { email, firstName: 'Kept' },
      key(),
    );
    // Act
    const erased = await client.post('/erasures', {
      key: org.ownerKey,
      body: { email },
    });
    // Assert
    expect(added.status).toBe(201);
    expect(erased.status).toBe(201);
    const items = await client.scan();
    const records = items.filter((i) => i._type === 'IdempotencyRecord');
    expect(records.length).toBeGreaterThan(0);
    const holding = items.filter((item) =>
      JSON.stringify(item).includes(email),
    );
    expect(holding).toEqual([]);
  });

  /** A draft campaign to the list's subscribed contacts, ready to send. */
  const sendableCampaign = async (): Promise<string> => {
    const key = org.ownerKey;
    await client.post(`/lists/${listId}/contacts`, {
      key,
      body: {
        email: `reader-${randomUUID()}@example.test`,
        doubleOptIn: false,
      },
    });
    const template = await client.post('/templates', {
      key,
      body: {
        name: 'News',
        defaultSubject: 'News',
        content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
      },
    });
    const campaign = await client.post('/campaigns', {
      key,
      body: {
        name: `November ${randomUUID()}`,
        templateId: template.json.data.id,
        listId,
      },
    });
    if (campaign.status !== 201) throw new Error(campaign.body);
    return campaign.json.data.id;
  };
});
