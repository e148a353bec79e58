/**
 * The DynamoDB adapters read and write through the typed data layer (issue
 * 30, part 3): no adapter names the table, writes an expression string or
 * a `#name` / `:value` placeholder, or builds a request by hand. Only the
 * layer itself does (`dynamo-table.ts`, `dynamo-entity.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ADAPTERS = 'shared/adapters/aws';

/**
 * The files of the layer, which alone build requests, and the client's
 * item-size middleware, which builds none.
 */
const LAYER = new Set(['dynamo-table.ts', 'dynamo-entity.ts', 'item-size.ts']);

/** What only the layer writes: table names, expressions, placeholders, commands. */
const HAND_WRITTEN: [string, RegExp][] = [
  ['table name', /\bTableName\s*:/],
  [
    'expression string',
    /\b(?:Update|Condition|KeyCondition|Filter|Projection)Expression\s*:/,
  ],
  [
    'placeholder',
    /(?:ExpressionAttribute(?:Names|Values))|['"`][#:][a-zA-Z]\w*['"`]\s*:/,
  ],
  [
    'hand-built request',
    /new (?:Get|Put|Update|Delete|Query|Scan|TransactWrite)Command\(|\bpaginateQuery\(/,
  ],
];

/** The hand-written parts of a source, comments aside. */
const handWritten = (source: string): string[] =>
  source
    .split('\n')
    .map((line) => line.replace(/\/\/.*$/, ''))
    .filter((line) => !/^\s*\*/.test(line))
    .flatMap((line) =>
      HAND_WRITTEN.filter(([, pattern]) => pattern.test(line)).map(
        ([what]) => `${what}: ${line.trim()}`,
      ),
    );

describe('the data layer', () => {
  it('finds a hand-written request where there is one (the check can fail)', () => {
    expect(
      handWritten(
        [
          '  TableName: this.table.tableName,',
          "  ConditionExpression: 'attribute_exists(PK)',",
          "  ExpressionAttributeValues: { ':v': 1 },",
          "  { '#name': 'name' },",
          '  await client.send(new UpdateCommand({',
          '   * an UpdateExpression in a comment',
          "  const status = where.eq('status', 'sent'); // TableName: x",
        ].join('\n'),
      ).map((found) => found.split(':')[0]),
    ).toEqual([
      'table name',
      'expression string',
      'placeholder',
      'placeholder',
      'hand-built request',
    ]);
  });

  it('no AWS adapter builds a DynamoDB request by hand: only the layer does', () => {
    const found = readdirSync(ADAPTERS)
      .filter((file) => file.endsWith('.ts') && !LAYER.has(file))
      .flatMap((file) =>
        handWritten(readFileSync(join(ADAPTERS, file), 'utf8')).map(
          (line) => `${file}: ${line}`,
        ),
      );
    expect(found).toEqual([]);
  });
});
