/**
 * The custom fields a segment names are held by the segment's own writes,
 * on each key's reservation (`segmentIds`), so that a field is never
 * deleted while a segment names it. These tests put the other write
 * exactly between a service's read and its write, on the embedded engine:
 * the transactions, not the checks before them, keep the two apart.
 */
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../shared/deps.ts';
import { ConflictError, ValidationError } from '../../../shared/errors.ts';
import { createField, deleteField } from '../../../shared/fields/fields.ts';
import type { CreateSegmentInput } from '../../../shared/segments/segment.schema.ts';
import {
  createSegment,
  deleteSegment,
  updateSegment,
} from '../../../shared/segments/segments.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps, scanTable } from '../../support/dynamo.ts';

const setup = async () => {
  const { deps, tableName } = await createTestDeps();
  const { orgId, listId } = await orgWithList(deps);
  const field = (key: string) =>
    createField(deps, orgId, { key, label: key, type: 'number' });
  return { deps, tableName, orgId, listId, field };
};

/** A segment body whose conditions name these custom fields. */
const naming = (listId: string, ...keys: string[]): CreateSegmentInput => ({
  name: `Over ${keys.join(', ')}`,
  listId,
  match: 'all',
  conditions: keys.map((key) => ({
    field: `fields.${key}` as const,
    operator: 'exists' as const,
  })),
});

/** The segments each field key's reservation holds, by key. */
const holds = async (tableName: string) =>
  Object.fromEntries(
    (await scanTable(tableName))
      .filter((item) => item._type === 'FieldKey')
      .map((item) => [
        String(item.SK).slice('FIELDKEY#'.length),
        [...((item.segmentIds as Set<string> | undefined) ?? [])].sort(),
      ]),
  );

/** A repository with some methods replaced, the others its own. */
const overriding = <R extends object>(
  repository: R,
  overrides: Partial<R>,
): R => Object.assign(Object.create(repository) as R, overrides);

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
};

describe('segments hold the custom fields they name', () => {
  it('a create, an update and a delete of a segment hold and release exactly the keys named', async () => {
    // Arrange
    const { deps, tableName, orgId, listId, field } = await setup();
    await field('a');
    await field('b');
    await field('c');
    // Act
    const one = await createSegment(deps, orgId, naming(listId, 'a', 'b', 'a'));
    const two = await createSegment(deps, orgId, naming(listId, 'b'));
    const afterCreates = await holds(tableName);
    await updateSegment(deps, orgId, one.id, {
      conditions: naming(listId, 'b', 'c').conditions,
    });
    const afterUpdate = await holds(tableName);
    await updateSegment(deps, orgId, one.id, { name: 'Renamed' });
    const afterRename = await holds(tableName);
    await deleteSegment(deps, orgId, two.id);
    await deleteSegment(deps, orgId, one.id);
    // Assert
    expect(afterCreates).toEqual({
      a: [one.id],
      b: [one.id, two.id].sort(),
      c: [],
    });
    expect(afterUpdate).toEqual({
      a: [],
      b: [one.id, two.id].sort(),
      c: [one.id],
    });
    expect(afterRename).toEqual(afterUpdate);
    expect(await holds(tableName)).toEqual({ a: [], b: [], c: [] });
  });

  it('a field deleted between the check of the conditions and the segment’s write: the write is refused (400 naming each condition), nothing written', async () => {
    // Arrange: the delete lands right after the check read the fields.
    const { deps, tableName, orgId, listId, field } = await setup();
    const kept = await field('kept');
    const gone = await field('gone');
    const racing: Deps = {
      ...deps,
      segments: overriding(deps.segments, {
        create: async (...args) => {
          await deleteField(deps, orgId, gone.id);
          return deps.segments.create(...args);
        },
      }),
    };
    const before = await scanTable(tableName);
    // Act
    const error = await rejection(
      createSegment(racing, orgId, naming(listId, 'gone', 'kept', 'gone')),
    );
    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.map((d) => d.field)).toEqual([
      'conditions.0.field',
      'conditions.2.field',
    ]);
    const after = await scanTable(tableName);
    expect(after.filter((item) => item._type === 'Segment')).toEqual([]);
    expect(await holds(tableName)).toEqual({ kept: [], gone: [] });
    // Only the field's deletion was written.
    expect(after.length).toBe(before.length - 1);
    expect(kept.id).toBeDefined();
  });

  it('a segment naming the field written between the delete’s read and its write: the delete is refused (409 field.inUse), the field kept', async () => {
    // Arrange: the segment lands right after the delete read the field.
    const { deps, tableName, orgId, listId, field } = await setup();
    const score = await field('score');
    let segmentId = '';
    const racing: Deps = {
      ...deps,
      fields: overriding(deps.fields, {
        delete: async (...args) => {
          if (!segmentId) {
            segmentId = (
              await createSegment(deps, orgId, naming(listId, 'score'))
            ).id;
          }
          return deps.fields.delete(...args);
        },
      }),
    };
    // Act
    const error = await rejection(deleteField(racing, orgId, score.id));
    // Assert
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe('field.inUse');
    expect((error as ConflictError).message).toContain(
      `"Over score" (${segmentId})`,
    );
    expect(await deps.fields.get(orgId, score.id)).toBeDefined();
    expect(await holds(tableName)).toEqual({ score: [segmentId] });
  });

  it('an update whose segment changed between its read and its write applies again over the change, holding what the segment names after both', async () => {
    // Arrange: another update moves the segment from a to b meanwhile.
    const { deps, tableName, orgId, listId, field } = await setup();
    for (const key of ['a', 'b', 'c']) await field(key);
    const segment = await createSegment(deps, orgId, naming(listId, 'a'));
    let raced = false;
    const racing: Deps = {
      ...deps,
      segments: overriding(deps.segments, {
        update: async (...args) => {
          if (!raced) {
            raced = true;
            await updateSegment(deps, orgId, segment.id, {
              conditions: naming(listId, 'b').conditions,
            });
          }
          return deps.segments.update(...args);
        },
      }),
    };
    // Act
    const renamed = await updateSegment(racing, orgId, segment.id, {
      name: 'Renamed',
    });
    raced = false;
    const moved = await updateSegment(racing, orgId, segment.id, {
      conditions: naming(listId, 'c').conditions,
    });
    // Assert: the rename kept b (not the a it first read); the move to c
    // released b, then a, in turn, never leaving a key held by mistake.
    expect(renamed.conditions).toEqual(naming(listId, 'b').conditions);
    expect(moved).toMatchObject({ name: 'Renamed' });
    expect(moved.conditions).toEqual(naming(listId, 'c').conditions);
    expect(await holds(tableName)).toEqual({ a: [], b: [], c: [segment.id] });
  });

  it('a delete whose segment changed between its read and its write releases the keys the segment names then', async () => {
    // Arrange
    const { deps, tableName, orgId, listId, field } = await setup();
    for (const key of ['a', 'b']) await field(key);
    const segment = await createSegment(deps, orgId, naming(listId, 'a'));
    let raced = false;
    const racing: Deps = {
      ...deps,
      segments: overriding(deps.segments, {
        delete: async (...args) => {
          if (!raced) {
            raced = true;
            await updateSegment(deps, orgId, segment.id, {
              conditions: naming(listId, 'b').conditions,
            });
          }
          return deps.segments.delete(...args);
        },
      }),
    };
    // Act
    await deleteSegment(racing, orgId, segment.id);
    // Assert
    expect(await holds(tableName)).toEqual({ a: [], b: [] });
    expect(await deps.segments.get(orgId, segment.id)).toBeUndefined();
  });
});
