import {
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  pageByPrefix,
  putWithReservation,
} from '../../../../shared/adapters/aws/dynamo-collections.ts';
import { DynamoContactRepository } from '../../../../shared/adapters/aws/dynamo-contact-repository.ts';
import {
  batchGet,
  batchGetOnce,
  onFailedCondition,
  transactWrite,
} from '../../../../shared/adapters/aws/dynamo-table.ts';
import { keys } from '../../../../shared/db/keys.ts';
import { ConflictError } from '../../../../shared/errors.ts';

const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'eu-west-1' }),
);
const dynamo = mockClient(client);
const table = { client, tableName: 'table' };

const lastKey = (n: number) => ({ PK: 'ORG#o', SK: `TAG#${n}` });

/**
 * Answers queries page by page, `sizes[i]` items on page i, and records the
 * start key of each query when it is sent (the paginator reuses its input).
 */
const pagesOf = (sizes: number[], item: (n: number) => object) => {
  const startKeys: unknown[] = [];
  let page = 0;
  let next = 0;
  dynamo.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    startKeys.push(input.ExclusiveStartKey);
    const Items = Array.from({ length: sizes[page] ?? 0 }, () => item(next++));
    page++;
    return page < sizes.length
      ? { Items, LastEvaluatedKey: lastKey(next) }
      : { Items };
  });
  return startKeys;
};

const tag = (n: number) => ({
  id: `t${n}`,
  name: `Tag ${n}`,
  createdAt: '2026-11-22T10:00:00.000Z',
});

const contact = (n: number) => ({
  ...keys.contact('o', 'l', `p${n}@example.test`),
  id: `c${n}`,
  listId: 'l',
  email: `p${n}@example.test`,
  status: 'subscribed',
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
  version: 1,
});

describe('query pagination', () => {
  beforeEach(() => dynamo.reset());

  it('stops reading pages once a page of a collection is complete', async () => {
    // Arrange: the engine cuts pages at 2 items (its 1 MB limit, say).
    pagesOf([2, 2, 2, 2], tag);
    // Act
    const page = await pageByPrefix(table, keys.tagsOfOrganization('o'), 8, {
      page: 2,
      limit: 1,
    });
    // Assert
    expect(page.items).toEqual([tag(1)]);
    const queries = dynamo.commandCalls(QueryCommand);
    expect(queries).toHaveLength(1);
    expect(queries[0]?.args[0].input.Limit).toBe(2);
  });

  it('reads on from the last key while the page is short', async () => {
    // Arrange
    const startKeys = pagesOf([2, 2, 2, 2], tag);
    // Act
    const page = await pageByPrefix(table, keys.tagsOfOrganization('o'), 8, {
      page: 2,
      limit: 2,
    });
    // Assert
    expect(page.items).toEqual([tag(2), tag(3)]);
    expect(startKeys).toEqual([undefined, lastKey(2)]);
  });

  it('stops a filtered contact query at the page end when the total is known', async () => {
    // Arrange
    pagesOf([1, 1, 1, 1, 1], contact);
    const contacts = new DynamoContactRepository(table);
    // Act
    const page = await contacts.page(
      'o',
      'l',
      { status: 'subscribed' },
      { page: 1, limit: 2 },
      5,
    );
    // Assert
    expect(page.items.map((c) => c.id)).toEqual(['c0', 'c1']);
    expect(page.total).toBe(5);
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(2);
  });

  it('reads every page of a filtered contact query to count its matches', async () => {
    // Arrange
    pagesOf([1, 1, 1, 1, 1], contact);
    const contacts = new DynamoContactRepository(table);
    // Act
    const page = await contacts.page(
      'o',
      'l',
      { status: 'subscribed' },
      { page: 1, limit: 2 },
    );
    // Assert
    expect(page.total).toBe(5);
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(5);
  });
});

describe('transactWrite: a transaction another one held at that instant', () => {
  beforeEach(() => dynamo.reset());

  const cancelled = (...codes: string[]) =>
    new TransactionCanceledException({
      message: 'Transaction cancelled',
      $metadata: {},
      CancellationReasons: codes.map((Code) => ({ Code })),
    });
  const put = { Put: { TableName: 'table', Item: { PK: 'a', SK: 'b' } } };

  it('is sent again until it passes', async () => {
    // Arrange
    dynamo
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('TransactionConflict', 'None'))
      .rejectsOnce(cancelled('None', 'TransactionConflict'))
      .resolves({});
    // Act
    await transactWrite(table, [put, put]);
    // Assert
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(3);
  });

  it('is a 409 write.contended after the conflict budget, never a 500', async () => {
    // Arrange
    dynamo.on(TransactWriteCommand).rejects(cancelled('TransactionConflict'));
    // Act
    const failure = await transactWrite(table, [put]).catch((e) => e);
    // Assert
    expect(failure).toBeInstanceOf(ConflictError);
    expect(failure.code).toBe('write.contended');
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(5);
  });

  it('after the conflict budget, throws the conflict the caller names', async () => {
    // Arrange
    dynamo.on(TransactWriteCommand).rejects(cancelled('TransactionConflict'));
    const contended = (cause: unknown) =>
      new ConflictError('contact.changed', 'Changed', { cause });
    // Act
    const failure = await transactWrite(table, [put], { contended }).catch(
      (e) => e,
    );
    // Assert
    expect(failure).toBeInstanceOf(ConflictError);
    expect(failure.code).toBe('contact.changed');
    expect(failure.cause).toBeInstanceOf(TransactionCanceledException);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(5);
  });

  it('surfaces a failed condition at once: a name taken is not retried', async () => {
    // Arrange
    dynamo
      .on(TransactWriteCommand)
      .rejects(cancelled('ConditionalCheckFailed', 'None'));
    const taken = new ConflictError('tag.nameTaken', 'Taken');
    // Act
    const failure = await putWithReservation(table, {
      reservation: onFailedCondition(
        { Put: { TableName: 'table', Item: { PK: 'r', SK: 'r' } } },
        () => taken,
      ),
      item: { Put: { TableName: 'table', Item: { PK: 'i', SK: 'i' } } },
    }).catch((e) => e);
    // Assert
    expect(failure).toBe(taken);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});

describe('batch reads: keys DynamoDB left unprocessed', () => {
  beforeEach(() => dynamo.reset());

  const a = { PK: 'ORG#o', SK: 'TAG#a' };
  const b = { PK: 'ORG#o', SK: 'TAG#b' };
  const answers = () =>
    dynamo
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { table: [{ ...a, id: 'a' }] },
        UnprocessedKeys: { table: { Keys: [b] } },
      })
      .resolves({ Responses: { table: [{ ...b, id: 'b' }] } });

  it('batchGetOnce sends one request and names the keys left unprocessed', async () => {
    // Arrange
    answers();
    // Act
    const read = await batchGetOnce(table, [a, b]);
    // Assert
    expect(read).toEqual({ items: [{ ...a, id: 'a' }], unprocessed: [b] });
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(1);
    expect(
      dynamo.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems,
    ).toEqual({ table: { Keys: [a, b], ConsistentRead: true } });
  });

  it('batchGet asks again for the keys left unprocessed', async () => {
    // Arrange
    answers();
    // Act
    const items = await batchGet(table, [a, b], { consistent: false });
    // Assert
    expect(items.map((item) => item.id)).toEqual(['a', 'b']);
    expect(
      dynamo.commandCalls(BatchGetCommand)[1]?.args[0].input.RequestItems,
    ).toEqual({ table: { Keys: [b], ConsistentRead: false } });
  });
});
