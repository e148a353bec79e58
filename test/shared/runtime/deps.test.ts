/**
 * The composition root's rule for the address key: the delivery store keys
 * suppressions with it, so a function naming that store without an
 * `addressKey` binding (or a root that provides no key) fails at its cold
 * start, not on its first suppression.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { addressKey, table } from '../../../shared/bindings.ts';
import { buildDeps } from '../../../shared/runtime/deps.ts';

// Never sent anything: the deps are only built.
const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1' }),
);
const tableOptions = () => ({
  dynamo,
  tableName: 'table',
  apiKeyCacheTtlSeconds: 10,
});
const delivery = table({
  stores: ['delivery'],
  actions: ['dynamodb:BatchGetItem'],
});

describe('the address key in the composition root', () => {
  it('refuses the delivery store without an addressKey binding', async () => {
    // Act
    const built = buildDeps([delivery], {
      table: tableOptions,
      addressKeySecret: () => async () => 'k'.repeat(32),
    });

    // Assert
    await expect(built).rejects.toThrow(/bind addressKey/);
  });

  it('refuses an addressKey binding the root provides no key for', async () => {
    // Act
    const built = buildDeps([delivery, addressKey], { table: tableOptions });

    // Assert
    await expect(built).rejects.toThrow(
      'The composition root provides nothing for the addressKey binding',
    );
  });

  it('builds the delivery store with both', async () => {
    // Act
    const deps = await buildDeps([delivery, addressKey], {
      table: tableOptions,
      addressKeySecret: () => async () => 'k'.repeat(32),
    });

    // Assert
    expect(typeof deps.delivery.suppressions).toBe('function');
  });
});
