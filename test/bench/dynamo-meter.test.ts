/**
 * The benchmarks' DynamoDB meter, where it works out what AWS would charge
 * and DynamoDB Local does not say.
 */
import { describe, expect, it } from 'vitest';
import { batchGetMisses, transactionWcu } from './dynamo-meter.ts';

describe('the benchmarks’ DynamoDB meter', () => {
  it('charges each key a BatchGetItem did not find a read’s minimum: 1 unit strongly consistent, 0.5 eventually; unprocessed keys nothing', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
    expect(
      batchGetMisses(
        {
          RequestItems: {
            strong: { Keys: keys(10), ConsistentRead: true },
            eventual: { Keys: keys(6) },
          },
        },
        {
          Responses: { strong: keys(4), eventual: keys(1) },
          UnprocessedKeys: { eventual: { Keys: keys(1) } },
        },
      ),
    ).toBe(6 + 4 * 0.5);
    expect(
      batchGetMisses(
        { RequestItems: { t: { Keys: keys(2) } } },
        {
          Responses: { t: keys(2) },
        },
      ),
    ).toBe(0);
  });

  it('charges a transaction 2 write units per item and started KB', () => {
    expect(
      transactionWcu({
        TransactItems: [
          { Update: {} },
          { Put: { Item: { big: 'x'.repeat(1500) } } },
        ],
      }),
    ).toBe(2 + 4);
  });
});
