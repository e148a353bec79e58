import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ensureTable, tableStreamArn } from '../../../infra/local/dynamodb.ts';
import { tableDefinition } from '../../../shared/db/table.ts';
import { testEngineClient } from '../../support/dynamo.ts';

describe('ensureTable on the embedded DynamoDB', () => {
  it('creates the table once, then adds an index the definition gained', async () => {
    // Arrange
    const client = testEngineClient();
    const name = `ensure-${randomUUID()}`;
    await ensureTable(client, name, tableDefinition);
    // Act: run again (idempotent), then with one more index.
    await ensureTable(client, name, tableDefinition);
    await ensureTable(client, name, {
      ...tableDefinition,
      indexes: [{ name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' }],
    });
    // Assert
    const { Table } = await client.send(
      new DescribeTableCommand({ TableName: name }),
    );
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'PK', KeyType: 'HASH' },
      { AttributeName: 'SK', KeyType: 'RANGE' },
    ]);
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual([
      'GSI1',
    ]);
  });

  it('creates the table with its change stream, both images', async () => {
    // Arrange
    const client = testEngineClient();
    const name = `ensure-${randomUUID()}`;
    // Act
    await ensureTable(client, name, tableDefinition);
    // Assert
    const { Table } = await client.send(
      new DescribeTableCommand({ TableName: name }),
    );
    expect(Table?.StreamSpecification).toEqual({
      StreamEnabled: true,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
    expect(await tableStreamArn(client, name)).toBe(Table?.LatestStreamArn);
  });

  it('turns the stream on for a table of an older data dir', async () => {
    // Arrange: a table made before streams, as an old data dir holds it.
    const client = testEngineClient();
    const name = `ensure-${randomUUID()}`;
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'PK', AttributeType: 'S' },
          { AttributeName: 'SK', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
      }),
    );
    // Act
    await ensureTable(client, name, tableDefinition);
    // Assert
    const { Table } = await client.send(
      new DescribeTableCommand({ TableName: name }),
    );
    expect(Table?.StreamSpecification?.StreamViewType).toBe(
      'NEW_AND_OLD_IMAGES',
    );
  });
});
