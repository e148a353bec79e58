import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { addContact } from '../../../../shared/audience/contacts.ts';
import { ItemSchemaError } from '../../../../shared/db/items.ts';
import { keys } from '../../../../shared/db/keys.ts';
import { orgWithList } from '../../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

describe('stored items read by the DynamoDB repositories', () => {
  it('parse as their schema says: a contact without tags reads with none', async () => {
    // Arrange
    const { deps } = await createTestDeps();
    const { orgId, listId } = await orgWithList(deps);
    await addContact(deps, orgId, listId, { email: 'ana@example.test' });
    // Act
    const contact = await deps.contacts.get(orgId, listId, 'ana@example.test');
    // Assert
    expect(contact).toMatchObject({
      email: 'ana@example.test',
      status: 'subscribed',
      tagIds: [],
      version: 1,
    });
  });

  it('fail naming the item type, key and field when a stored item is corrupt', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId, listId } = await orgWithList(deps);
    await addContact(deps, orgId, listId, { email: 'ana@example.test' });
    const key = keys.contact(orgId, listId, 'ana@example.test');
    await testEngineClient().send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #status = :status',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': 'gone' },
      }),
    );
    // Act
    const error = await deps.contacts
      .get(orgId, listId, 'ana@example.test')
      .catch((e: unknown) => e);
    // Assert: a bug, not a value to default.
    expect(error).toBeInstanceOf(ItemSchemaError);
    expect(error).toMatchObject({
      type: 'Contact',
      key: `${key.PK} / ${key.SK}`,
      fields: ['status'],
    });
  });

  it('fail when the item under a key is of another entity type', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    await testEngineClient().send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.tag(orgId, 'tag-1'),
          _type: 'Topic',
          id: 'tag-1',
          name: 'Red',
          createdAt: '2026-11-22T10:00:00.000Z',
        },
      }),
    );
    // Act
    const error = await deps.tags.get(orgId, 'tag-1').catch((e: unknown) => e);
    // Assert
    expect(error).toBeInstanceOf(ItemSchemaError);
    expect((error as ItemSchemaError).fields).toEqual(['_type']);
  });
});
