/**
 * The expression compiler (issue 30, part 3): conditions and updates built
 * from paths and values, each name and value its own placeholder.
 */
import { describe, expect, it } from 'vitest';
import {
  compileCondition,
  compileFilter,
  compileUpdate,
  ifMissing,
  Placeholders,
  plus,
  type Update,
  where,
  whereOf,
} from '../../../shared/db/expressions.ts';

interface Send {
  status: string;
  version: number;
  progress: { sent: number };
  topicIds: Set<string>;
  messageId?: string;
}

const compiled = (update: Update<Send>) => {
  const p = new Placeholders();
  const expression = compileUpdate(update, p);
  return { expression, names: p.names, values: p.values };
};

describe('expressions', () => {
  it('an update names every attribute and value by placeholder, by clause', () => {
    // Act
    const { expression, names, values } = compiled({
      set: { status: 'sent', messageId: ifMissing('m-1') },
      add: { version: 1, 'progress.sent': 3 },
      remove: ['progress.sent'],
      delete: { topicIds: new Set(['t']) },
    });

    // Assert
    expect(expression).toBe(
      'SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1) ADD #n2 :v2, #n3.#n4 :v3 REMOVE #n3.#n4 DELETE #n5 :v4',
    );
    expect(names).toEqual({
      '#n0': 'status',
      '#n1': 'messageId',
      '#n2': 'version',
      '#n3': 'progress',
      '#n4': 'sent',
      '#n5': 'topicIds',
    });
    expect(values).toEqual({
      ':v0': 'sent',
      ':v1': 'm-1',
      ':v2': 1,
      ':v3': 3,
      ':v4': new Set(['t']),
    });
  });

  it('set skips undefined values; plus moves a number in place', () => {
    // Act
    const { expression, values } = compiled({
      set: { status: undefined, version: plus(2) },
    });

    // Assert
    expect(expression).toBe('SET #n0 = #n0 + :v0');
    expect(values).toEqual({ ':v0': 2 });
  });

  it('an update that changes nothing is refused before it is sent', () => {
    expect(() => compiled({ set: { status: undefined } })).toThrow(
      'An update that changes nothing',
    );
  });

  it('conditions nest with parentheses and share the placeholders of the request', () => {
    // Arrange
    const w = whereOf<Send>();
    const p = new Placeholders();
    compileUpdate<Send>({ set: { status: 'sending' } }, p);

    // Act
    const text = compileCondition(
      w.and(
        w.exists(),
        w.or(w.missing('messageId'), w.lt('version', 3)),
        w.not(w.contains('topicIds', 't')),
        w.in('status', ['draft', 'scheduled']),
        false,
      ),
      p,
    );

    // Assert
    expect(text).toBe(
      '(attribute_exists(#n1)) AND ((attribute_not_exists(#n2)) OR (#n3 < :v1)) AND (NOT (contains(#n4, :v2))) AND (#n0 IN (:v3, :v4))',
    );
    expect(p.names).toMatchObject({ '#n0': 'status', '#n1': 'PK' });
  });

  it('a filter compiles alone: between, begins_with and size', () => {
    expect(
      compileFilter(
        where.and(
          where.between('at', 1, 2),
          where.beginsWith('SK', 'C#'),
          where.size('usedBy', '=', 0),
        ),
      ),
    ).toEqual({
      expression:
        '(#n0 BETWEEN :v0 AND :v1) AND (begins_with(#n1, :v2)) AND (size(#n2) = :v3)',
      names: { '#n0': 'at', '#n1': 'SK', '#n2': 'usedBy' },
      values: { ':v0': 1, ':v1': 2, ':v2': 'C#', ':v3': 0 },
    });
  });

  it('IN of nothing and AND of nothing are refused (DynamoDB would reject them)', () => {
    expect(() => compileFilter(where.in('status', []))).toThrow('IN needs');
    expect(() => compileFilter(where.and(false))).toThrow('AND of nothing');
  });
});
