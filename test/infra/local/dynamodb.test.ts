import { randomUUID } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../../infra/local/dynamodb.ts';
import { tableDefinition } from '../../../shared/db/table.ts';
import { localDynamo } from '../../../shared/runtime/local.ts';

describe('ensureTable on the embedded DynamoDB', () => {
  it('creates the table once, then adds an index the definition gained', async () => {
    // Arrange
    const client = localDynamo(inject('dynamodbEndpoint'));
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
});
