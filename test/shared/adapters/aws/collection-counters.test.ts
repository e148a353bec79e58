/**
 * Collection counters beside their collections, on the embedded engine: a
 * page and its total in one Query; readers of the collection's prefix never
 * see the counter; a cap holds in the creating transaction.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  collectionCounterKey,
  pageOfCollection,
} from '../../../../shared/adapters/aws/dynamo-collections.ts';
import { createTag } from '../../../../shared/audience/tags.ts';
import { keys } from '../../../../shared/db/keys.ts';
import { orgWithList } from '../../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

/** The embedded engine's client, counting the requests sent through it. */
const countingClient = () => {
  const client = testEngineClient();
  const sent = { requests: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      sent.requests++;
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return { client, sent };
};

describe('collection counters', () => {
  it('a page of tags and its total come from one Query, newest first; a begins_with reader of TAG# never sees the counter', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    for (const name of ['one', 'two', 'three', 'four', 'five']) {
      await createTag(deps, orgId, { name });
    }
    const { client, sent } = countingClient();
    const collection = keys.tagsOfOrganization(orgId);

    // Act
    const page = await pageOfCollection({ client, tableName }, collection, {
      page: 2,
      limit: 2,
    });
    const prefixed = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': collection.PK,
          ':prefix': collection.skPrefix,
        },
      }),
    );

    // Assert
    expect(page.total).toBe(5);
    expect(page.items.map((item) => item.name)).toEqual(['three', 'two']);
    expect(sent.requests).toBe(2);
    expect(prefixed.Items?.map((item) => item.name)).toEqual([
      'one',
      'two',
      'three',
      'four',
      'five',
    ]);
    expect(collectionCounterKey(collection).SK).toBe('TAG$count');
  });

  it('a page past the end answers the total and no items, from the same single Query', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    await createTag(deps, orgId, { name: 'only' });
    const { client, sent } = countingClient();

    // Act
    const page = await pageOfCollection(
      { client, tableName },
      keys.tagsOfOrganization(orgId),
      { page: 3, limit: 20 },
    );

    // Assert
    expect(page).toEqual({ items: [], total: 1 });
    expect(sent.requests).toBe(1);
  });

  it('an organization with no item of the collection has a total of 0', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);

    // Act
    const page = await pageOfCollection(
      { client: testEngineClient(), tableName },
      keys.templatesOfOrganization(orgId),
      { page: 1, limit: 20 },
    );

    // Assert
    expect(page).toEqual({ items: [], total: 0 });
  });
});
