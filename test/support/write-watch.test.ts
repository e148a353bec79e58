/**
 * The write count that lets "a call wrote nothing" skip its table scan:
 * it must count every kind of write the stores send, or a test would miss
 * a change.
 */
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { localDynamo } from '../../shared/runtime/local.ts';
import { createTestDeps, testDynamoEndpoint } from './dynamo.ts';
import { watchWrites } from './write-watch.ts';

it('counts puts, updates, deletes, batch and transaction writes; not reads, nor writes of rate-limit logs only', async () => {
  const { dynamo, tableName, writes } = await createTestDeps();
  const TableName = tableName;
  const count = () => writes.count;

  await dynamo.send(new GetCommand({ TableName, Key: { PK: 'A', SK: 'A' } }));
  await dynamo.send(
    new QueryCommand({
      TableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': 'A' },
    }),
  );
  expect(count()).toBe(0);

  await dynamo.send(
    new UpdateCommand({
      TableName,
      Key: { PK: 'RATE#key', SK: 'RATE' },
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
  expect(count()).toBe(0);

  await dynamo.send(new PutCommand({ TableName, Item: { PK: 'A', SK: 'A' } }));
  expect(count()).toBe(1);
  await dynamo.send(
    new UpdateCommand({
      TableName,
      Key: { PK: 'A', SK: 'A' },
      UpdateExpression: 'SET x = :x',
      ExpressionAttributeValues: { ':x': 1 },
    }),
  );
  expect(count()).toBe(2);
  await dynamo.send(
    new BatchWriteCommand({
      RequestItems: {
        [TableName]: [{ DeleteRequest: { Key: { PK: 'A', SK: 'A' } } }],
      },
    }),
  );
  expect(count()).toBe(3);
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName,
            Key: { PK: 'RATE#key', SK: 'RATE' },
            UpdateExpression: 'ADD n :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
        { Put: { TableName, Item: { PK: 'B', SK: 'B' } } },
      ],
    }),
  );
  expect(count()).toBe(4);
});

it('reports the items each write names, rate-limit logs included: the stream records that wear the engine', async () => {
  const { tableName: TableName } = await createTestDeps();
  const heard: number[] = [];
  const { client: dynamo } = watchWrites(
    localDynamo(testDynamoEndpoint()),
    (items) => heard.push(items),
  );

  await dynamo.send(new GetCommand({ TableName, Key: { PK: 'A', SK: 'A' } }));
  await dynamo.send(
    new UpdateCommand({
      TableName,
      Key: { PK: 'RATE#key', SK: 'RATE' },
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
  await dynamo.send(
    new BatchWriteCommand({
      RequestItems: {
        [TableName]: ['A', 'B', 'C'].map((PK) => ({
          PutRequest: { Item: { PK, SK: PK } },
        })),
      },
    }),
  );
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName, Item: { PK: 'D', SK: 'D' } } },
        { Delete: { TableName, Key: { PK: 'A', SK: 'A' } } },
      ],
    }),
  );
  expect(heard).toEqual([1, 3, 2]);
});
