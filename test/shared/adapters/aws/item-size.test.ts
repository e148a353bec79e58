/**
 * An item-size refusal of DynamoDB is a 413, never a 500 (issue 29,
 * defect 3): the guard on the client, against the embedded engine.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import {
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '../../../../infra/local/dynamodb.ts';
import { isItemSizeRefusal } from '../../../../shared/adapters/aws/item-size.ts';
import { tableDefinition } from '../../../../shared/db/table.ts';
import { PayloadTooLargeError } from '../../../../shared/errors.ts';
import { toErrorResponse } from '../../../../shared/http/errors.ts';
import { testEngineClient } from '../../../support/dynamo.ts';

const TableName = `test-${randomUUID()}`;
const dynamo = testEngineClient();
const big = 'x'.repeat(410_000);
const Key = { PK: 'ORG#o', SK: 'PAGE#p' };

/** What the call threw. */
const thrownBy = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('a record over 400 KB', () => {
  beforeAll(async () => {
    await ensureTable(dynamo, TableName, tableDefinition);
  });
  afterAll(async () => {
    await dynamo.send(new DeleteTableCommand({ TableName }));
  });

  it.each([
    ['PutItem', () => new PutCommand({ TableName, Item: { ...Key, big } })],
    [
      'UpdateItem',
      () =>
        new UpdateCommand({
          TableName,
          Key,
          UpdateExpression: 'SET big = :big',
          ExpressionAttributeValues: { ':big': big },
        }),
    ],
    [
      'TransactWriteItems',
      () =>
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName, Item: { ...Key, big } } },
            { Put: { TableName, Item: { PK: 'ORG#o', SK: 'OTHER', n: 1 } } },
          ],
        }),
    ],
  ] as const)(
    'refused by %s answers 413 request.tooLarge, its cause kept',
    async (_, command) => {
      // Act
      const error = await thrownBy(dynamo.send(command() as never));

      // Assert
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect(isItemSizeRefusal((error as Error).cause)).toBe(true);
      expect(toErrorResponse(error)).toMatchObject({
        statusCode: 413,
        body: { code: 'request.tooLarge' },
        unexpected: false,
      });
    },
  );

  it('leaves other refusals as they are', async () => {
    const error = await thrownBy(
      dynamo.send(
        new PutCommand({
          TableName,
          Item: { ...Key, n: 1 },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    );
    expect(error).toBeUndefined();
    const conflict = await thrownBy(
      dynamo.send(
        new PutCommand({
          TableName,
          Item: { ...Key, n: 2 },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    );
    expect((conflict as Error).name).toBe('ConditionalCheckFailedException');
  });
});
