/**
 * `admin org recount`: the operator's repair sets every counter of an
 * organization back to what its items say and rebuilds its tag index —
 * after counters written elsewhere by an older version, or a tag index
 * batch given up by its stream consumer.
 */
import {
  DeleteCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { collectionCounterKey } from '../../shared/adapters/aws/dynamo-collections.ts';
import { unsubscribeContact } from '../../shared/audience/contacts.ts';
import { keys } from '../../shared/db/keys.ts';
import { createTopic, optOutOfTopic } from '../../shared/topics/topics.ts';
import {
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { testEngineClient } from '../support/dynamo.ts';

describe('admin org recount', () => {
  it('puts back wrong counters, missing and stray tag index entries; the listings are right again', async () => {
    // Arrange: 12 contacts, every third tagged vip; then the damage.
    const client = await createApiClient();
    const org = await createOrganizationWithKeys(client, 'Recount');
    const key = org.ownerKey;
    const listId = (await client.post('/lists', { key, body: { name: 'R' } }))
      .json.data.id;
    await client.post(`/lists/${listId}/contacts/bulk`, {
      key,
      body: {
        contacts: Array.from({ length: 12 }, (_, i) => ({
          email: `r${String(i).padStart(2, '0')}@example.test`,
          ...(i % 3 === 0 ? { tags: ['vip'] } : {}),
          ...(i % 4 === 0 ? { status: 'unsubscribed' } : {}),
        })),
      },
    });
    await client.post('/suppressions', {
      key,
      body: {
        addresses: [{ email: 'x1@example.test' }, { email: 'x2@example.test' }],
      },
    });
    await client.events.settle();
    const vipId = (await client.get('/tags', { key })).json.data[0].id;
    const dynamo = testEngineClient();
    const TableName = client.tableName;
    const { orgId } = org;
    await dynamo.send(
      new UpdateCommand({
        TableName,
        Key: collectionCounterKey(keys.suppressionLog(orgId)),
        UpdateExpression: 'SET #count = :n',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':n': 40 },
      }),
    );
    await dynamo.send(
      new UpdateCommand({
        TableName,
        Key: keys.list(orgId, listId),
        UpdateExpression: 'SET contactCount = :n, subscribedCount = :n',
        ExpressionAttributeValues: { ':n': 99 },
      }),
    );
    await dynamo.send(
      new UpdateCommand({
        TableName,
        Key: keys.tag(orgId, vipId),
        UpdateExpression: 'SET contactCount = :n, #inList = :n',
        ExpressionAttributeNames: { '#inList': `inList#${listId}` },
        ExpressionAttributeValues: { ':n': 40 },
      }),
    );
    await dynamo.send(
      new DeleteCommand({
        TableName,
        Key: collectionCounterKey(keys.listsOfOrganization(orgId)),
      }),
    );
    await dynamo.send(
      new DeleteCommand({
        TableName,
        Key: keys.taggedContact(orgId, listId, vipId, 'r03@example.test'),
      }),
    );
    await dynamo.send(
      new PutCommand({
        TableName,
        Item: {
          ...keys.taggedContact(orgId, listId, vipId, 'r01@example.test'),
          _type: 'TaggedContact',
          email: 'r01@example.test',
        },
      }),
    );

    // Act
    const report = await client.admin('org', 'recount', '--org', orgId);
    const lists = await client.get('/lists', { key });
    const tags = await client.get('/tags', { key });
    const suppressions = await client.get('/suppressions', { key });
    const vips = await client.get('/contacts', {
      key,
      query: { listId, tagId: vipId, limit: '100' },
    });

    // Assert
    expect(report).toMatchObject({
      orgId,
      collections: {
        lists: 1,
        tags: 1,
        campaigns: 0,
        suppressions: 2,
        suppressionLifts: 0,
      },
      lists: [
        {
          listId,
          contacts: 12,
          statuses: { subscribed: 9, unsubscribed: 3 },
          tags: { [vipId]: 4 },
        },
      ],
      tagIndex: { written: 1, removed: 1 },
    });
    expect(lists.json.pagination.total).toBe(1);
    expect(lists.json.data[0]).toMatchObject({
      contactCount: 12,
      subscribedCount: 9,
    });
    expect(tags.json.data[0].contactCount).toBe(4);
    expect(suppressions.json.pagination.total).toBe(2);
    expect(vips.json.pagination.total).toBe(4);
    expect(vips.json.data.map((c: { email: string }) => c.email)).toEqual([
      'r00@example.test',
      'r03@example.test',
      'r06@example.test',
      'r09@example.test',
    ]);
  });

  it('builds the counters of data written before big lists: subscribed carriers per list × tag, subscribed decliners per list × topic, and each address’s declined topics, which later writes then move', async () => {
    // Arrange: 10 contacts, every other tagged vip, r00–r02 declining.
    const client = await createApiClient();
    const org = await createOrganizationWithKeys(client, 'Backfill');
    const key = org.ownerKey;
    const { orgId } = org;
    const listId = (await client.post('/lists', { key, body: { name: 'B' } }))
      .json.data.id;
    await client.post(`/lists/${listId}/contacts/bulk`, {
      key,
      body: {
        contacts: Array.from({ length: 10 }, (_, i) => ({
          email: `r${String(i).padStart(2, '0')}@example.test`,
          ...(i % 2 === 0 ? { tags: ['vip'] } : {}),
        })),
      },
    });
    const vipId = (await client.get('/tags', { key })).json.data[0].id;
    const topic = await createTopic(client.deps, orgId, { name: 'News' });
    const contacts = await client.get('/contacts', {
      key,
      query: { listId, limit: '100' },
    });
    const ids = contacts.json.data.map((c: { id: string }) => c.id);
    for (const id of ids.slice(0, 3)) {
      await optOutOfTopic(client.deps, orgId, topic.id, id);
    }
    // What an older version left: none of the new counters.
    const dynamo = testEngineClient();
    const TableName = client.tableName;
    await dynamo.send(
      new UpdateCommand({
        TableName,
        Key: keys.tag(orgId, vipId),
        UpdateExpression: 'REMOVE #subscribed',
        ExpressionAttributeNames: {
          '#subscribed': `subscribedInList#${listId}`,
        },
      }),
    );
    await dynamo.send(
      new DeleteCommand({
        TableName,
        Key: keys.topicAudience(orgId, topic.id),
      }),
    );
    for (let i = 0; i < 3; i++) {
      await dynamo.send(
        new DeleteCommand({
          TableName,
          Key: keys.declinedTopics(orgId, `r0${i}@example.test`),
        }),
      );
    }
    const audience = client.deps.audience;
    const before = [
      await audience.countSubscribedWithTag(orgId, listId, vipId),
      await audience.countDeclinedInList(orgId, topic.id, listId),
    ];

    // Act
    const report = await client.admin('org', 'recount', '--org', orgId);
    const after = [
      await audience.countSubscribedWithTag(orgId, listId, vipId),
      await audience.countDeclinedInList(orgId, topic.id, listId),
    ];
    await unsubscribeContact(client.deps, orgId, ids[0]);

    // Assert
    expect(before).toEqual([0, 0]);
    expect(report).toMatchObject({
      lists: [
        {
          listId,
          subscribedWithTag: { [vipId]: 5 },
          declinedTopics: { [topic.id]: 3 },
        },
      ],
      declinedAddresses: 3,
    });
    expect(after).toEqual([5, 3]);
    expect(await audience.countSubscribedWithTag(orgId, listId, vipId)).toBe(4);
    expect(await audience.countDeclinedInList(orgId, topic.id, listId)).toBe(2);
  });

  it('refuses an unknown organization (not found) or a malformed id (naming --org), changing nothing', async () => {
    // Arrange
    const client = await createApiClient();
    const before = await client.scan();

    // Act / Assert
    await expect(
      client.admin(
        'org',
        'recount',
        '--org',
        '01900000-0000-7000-8000-000000000000',
      ),
    ).rejects.toThrow(/organization/i);
    await expect(
      client.admin('org', 'recount', '--org', 'nope'),
    ).rejects.toThrow(/orgId|organization id/);
    expect(await client.scan()).toEqual(before);
  });
});
