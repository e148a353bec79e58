import { beforeAll, describe, expect, it } from 'vitest';
import { useSegment } from '../../shared/adapters/aws/dynamo-segment-repository.ts';
import { transactWrite } from '../../shared/adapters/aws/dynamo-table.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { testEngineClient } from '../support/dynamo.ts';

describe('segments through the pipeline (in process)', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;
  let tagId: string;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Segments');
    const key = org.ownerKey;
    listId = (await client.post('/lists', { key, body: { name: 'News' } })).json
      .data.id;
    const lines = [
      { email: 'ada@analytical.example', firstName: 'Ada', tags: ['vip'] },
      { email: 'bob@builder.example', firstName: 'Bob' },
      { email: 'cy@analytical.example', tags: ['vip'], status: 'unsubscribed' },
    ];
    await client.post(`/lists/${listId}/contacts/bulk`, {
      key,
      body: { contacts: lines },
    });
    const tags = await client.get('/tags', { key });
    tagId = tags.json.data.find((t: { name: string }) => t.name === 'vip').id;
  });

  const vipSegment = (name = 'VIPs') => ({
    name,
    listId,
    match: 'all',
    conditions: [
      { field: 'tag', operator: 'has', value: tagId },
      { field: 'emailDomain', operator: 'is', value: 'Analytical.Example' },
    ],
  });

  it('creates (201) with normalized values, reads one with live counts, lists with pagination', async () => {
    // Act
    const created = await client.post('/segments', {
      key: org.ownerKey,
      body: vipSegment(),
    });
    const one = await client.get(`/segments/${created.json.data.id}`, {
      key: org.memberKey,
    });
    const page = await client.get('/segments', {
      key: org.memberKey,
      query: { page: '1', limit: '1' },
    });
    // Assert
    expect(created.status).toBe(201);
    expect(created.json.data.conditions[1]).toEqual({
      field: 'emailDomain',
      operator: 'is',
      value: 'analytical.example',
    });
    expect(one.json.data).toMatchObject({
      id: created.json.data.id,
      contactCount: 2,
      subscribedCount: 1,
      usedBy: [],
    });
    expect(page.json.pagination).toMatchObject({ page: 1, limit: 1 });
    expect(page.json.pagination.total).toBeGreaterThanOrEqual(1);
  });

  it('answers 400 naming the path of each bad condition, and writes nothing', async () => {
    // Arrange
    const before = await client.scan();
    // Act
    const answer = await client.post('/segments', {
      key: org.ownerKey,
      body: {
        name: 'Bad',
        listId,
        match: 'every',
        conditions: [
          { field: 'status', operator: 'is', value: 'subscribed' },
          { field: 'status', operator: 'contains', value: 'sub' },
          { field: 'joinedAt', operator: 'before', value: '2026-01-01' },
          { field: 'confirmedAt', operator: 'exists', value: 'yes' },
          { field: 'createdAt', operator: 'notExists' },
          { field: 'phone', operator: 'is', value: '1' },
        ],
      },
    });
    // Assert
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('request.invalid');
    expect(answer.json.details.map((d: { field: string }) => d.field)).toEqual([
      'match',
      'conditions.1.operator',
      'conditions.1.value',
      'conditions.2.value',
      'conditions.3.value',
      'conditions.4.operator',
      'conditions.5.field',
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('answers 400 for no condition or more than 20', async () => {
    const condition = { field: 'email', operator: 'contains', value: 'a' };
    for (const conditions of [[], Array(21).fill(condition)]) {
      const answer = await client.post('/segments', {
        key: org.ownerKey,
        body: { name: 'Sizes', listId, match: 'any', conditions },
      });
      expect(answer.status).toBe(400);
      expect(answer.json.details[0].field).toBe('conditions');
    }
  });

  it('refuses to move a segment to another list (400 naming listId), and a member’s write (403), writing nothing', async () => {
    // Arrange
    const created = await client.post('/segments', {
      key: org.ownerKey,
      body: vipSegment('Fixed'),
    });
    const path = `/segments/${created.json.data.id}`;
    const before = await client.scan();
    // Act
    const moved = await client.patch(path, {
      key: org.ownerKey,
      body: { listId, name: 'Moved' },
    });
    const byMember = await client.patch(path, {
      key: org.memberKey,
      body: { name: 'Member' },
    });
    const deletedByMember = await client.delete(path, { key: org.memberKey });
    // Assert
    expect(moved.status).toBe(400);
    expect(moved.json.details).toEqual([
      {
        field: 'listId',
        message:
          'cannot change: a segment stays over the list it was created for (create another segment)',
      },
    ]);
    expect(byMember.status).toBe(403);
    expect(deletedByMember.status).toBe(403);
    expect(await client.scan()).toEqual(before);
  });

  it('answers 400 segment.inUse naming the series (name and id) on DELETE, and keeps the segment', async () => {
    // Arrange
    const created = await client.post('/segments', {
      key: org.ownerKey,
      body: vipSegment('Used'),
    });
    const segmentId = created.json.data.id;
    // The entry a series write puts in its own transaction.
    const table = {
      client: testEngineClient(),
      tableName: client.tableName,
    };
    await transactWrite(table, [
      useSegment(table, {
        orgId: org.orgId,
        segmentId,
        listId,
        seriesId: '0195f3a0-0000-7000-8000-0000000000aa',
        seriesName: 'Spring series',
      }),
    ]);
    // Act
    const refused = await client.delete(`/segments/${segmentId}`, {
      key: org.ownerKey,
    });
    const read = await client.get(`/segments/${segmentId}`, {
      key: org.ownerKey,
    });
    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('segment.inUse');
    expect(refused.json.error).toContain(
      '"Spring series" (0195f3a0-0000-7000-8000-0000000000aa)',
    );
    expect(read.json.data.usedBy).toEqual([
      {
        seriesId: '0195f3a0-0000-7000-8000-0000000000aa',
        name: 'Spring series',
      },
    ]);
  });

  it('lists the contacts of a segment on GET /contacts?segmentId=, with or without its listId', async () => {
    // Arrange
    const created = await client.post('/segments', {
      key: org.ownerKey,
      body: vipSegment('Listed'),
    });
    const segmentId = created.json.data.id;
    const other = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: 'Other list' },
    });
    // Act
    const bySegment = await client.get('/contacts', {
      key: org.memberKey,
      query: { segmentId, status: 'subscribed' },
    });
    const withList = await client.get('/contacts', {
      key: org.memberKey,
      query: { segmentId, listId, limit: '1', page: '2' },
    });
    const mismatch = await client.get('/contacts', {
      key: org.memberKey,
      query: { segmentId, listId: other.json.data.id },
    });
    const neither = await client.get('/contacts', { key: org.memberKey });
    // Assert
    expect(bySegment.status).toBe(200);
    expect(bySegment.json.data.map((c: { email: string }) => c.email)).toEqual([
      'ada@analytical.example',
    ]);
    expect(withList.json.pagination).toEqual({
      page: 2,
      limit: 1,
      total: 2,
      totalPages: 2,
      nextCursor: null,
      // Counted as a search is: the whole list read within the budget.
      totalExact: true,
    });
    expect(withList.json.data[0].email).toBe('cy@analytical.example');
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.code).toBe('segment.listMismatch');
    expect(mismatch.json.details[0].field).toBe('listId');
    expect(neither.status).toBe(400);
    expect(neither.json.details).toEqual([
      { field: 'listId', message: 'is required' },
    ]);
  });
});
