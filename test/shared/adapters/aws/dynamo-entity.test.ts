/**
 * The typed data layer on the embedded engine (issue 30, part 3): gets
 * parse, puts type the item, updates and conditions are built, failed
 * conditions become the caller's domain error, in a transaction too.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { entity } from '../../../../shared/adapters/aws/dynamo-entity.ts';
import {
  batchWrite,
  Counter,
  queryPages,
  transactWrite,
} from '../../../../shared/adapters/aws/dynamo-table.ts';
import { ifMissing, plus } from '../../../../shared/db/expressions.ts';
import { ItemSchemaError, itemSchema } from '../../../../shared/db/items.ts';
import { ConflictError, NotFoundError } from '../../../../shared/errors.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

const Note = itemSchema('Template', {
  id: v.string(),
  title: v.string(),
  views: Counter,
  tags: v.optional(v.set(v.string())),
  progress: v.optional(v.object({ sent: Counter })),
  firstSeenAt: v.optional(v.string()),
});

const table = async () => {
  const { tableName } = await createTestDeps();
  return { client: testEngineClient(), tableName };
};

const key = (id: string) => ({ PK: `ORG#${randomUUID()}`, SK: `NOTE#${id}` });

/** Every page of an async iterable (Node 20 has no Array.fromAsync). */
const collect = async <T>(pages: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const page of pages) all.push(page);
  return all;
};

const missing = (id: string) => (cause: unknown) =>
  new NotFoundError('template.notFound', `No note ${id}`, { cause });

describe('typed entities', () => {
  it('put then get: the item is typed and parsed, housekeeping kept out of the schema', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const at = key('n1');

    // Act
    await notes.put(
      at,
      { id: 'n1', title: 'Hello' },
      { if: (w) => w.missing(), housekeeping: { ttl: 123 } },
    );

    // Assert
    expect(await notes.get(at, { consistent: true })).toEqual({
      id: 'n1',
      title: 'Hello',
      views: 0,
    });
    const [stored] = (await collect(queryPages(t, { PK: at.PK }))).flat();
    expect(stored).toMatchObject({ _type: 'Template', ttl: 123, SK: at.SK });
  });

  it('a failed condition throws the error the caller names, and writes nothing', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const at = key('n1');
    await notes.put(at, { id: 'n1', title: 'First' });

    // Act
    const again = notes.put(
      at,
      { id: 'n1', title: 'Second' },
      {
        if: (w) => w.missing(),
        otherwise: (cause) =>
          new ConflictError('list.nameTaken', 'taken', { cause }),
      },
    );

    // Assert
    await expect(again).rejects.toMatchObject({ code: 'list.nameTaken' });
    expect((await notes.get(at))?.title).toBe('First');
  });

  it('update: set, add into a map, set elements, if_not_exists and plus, returning the item', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const at = key('n1');
    await notes.put(at, { id: 'n1', title: 'Hello', progress: { sent: 0 } });

    // Act
    await notes.update(at, {
      add: { views: 2, 'progress.sent': 5, tags: new Set(['a', 'b']) },
      set: { firstSeenAt: ifMissing('2026-11-28') },
    });
    const after = await notes.update(
      at,
      {
        set: { views: plus(1), firstSeenAt: ifMissing('2027-01-01') },
        delete: { tags: new Set(['a']) },
      },
      { if: (w) => w.eq('title', 'Hello'), returning: 'new' },
    );

    // Assert
    expect(after).toEqual({
      id: 'n1',
      title: 'Hello',
      views: 3,
      tags: new Set(['b']),
      progress: { sent: 5 },
      firstSeenAt: '2026-11-28',
    });
  });

  it('an update creating an item types it; a condition on its existence refuses to create', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const at = key('n2');

    const created = key('n3');

    // Act
    const refused = notes.update(
      at,
      { set: { title: 'x' } },
      { if: (w) => w.exists(), otherwise: missing('n2') },
    );
    await expect(refused).rejects.toBeInstanceOf(NotFoundError);
    await notes.update(created, { add: { views: 1 } });

    // Assert
    expect(await notes.get(at)).toBeUndefined();
    const [stored] = (await collect(queryPages(t, { PK: created.PK }))).flat();
    expect(stored).toEqual({ ...created, _type: 'Template', views: 1 });
  });

  it('an update sets housekeeping outside the schema; a failed condition may return the item as it was', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const at = key('n1');
    const absent = key('n2');
    await notes.update(
      at,
      { set: { id: 'n1', title: 'Hello' }, add: { views: 2 } },
      { housekeeping: { ttl: 123 } },
    );

    // Act
    const refused = await notes
      .update(
        at,
        { add: { views: 1 } },
        { if: (w) => w.lt('views', 2), returningOnFailure: 'old' },
      )
      .catch((error: unknown) => error);
    const refusedBare = await notes
      .update(at, { add: { views: 1 } }, { if: (w) => w.lt('views', 2) })
      .catch((error: unknown) => error);
    const refusedAbsent = await notes
      .delete(absent, { if: (w) => w.exists(), returningOnFailure: 'old' })
      .catch((error: unknown) => error);

    // Assert
    const [stored] = (await collect(queryPages(t, { PK: at.PK }))).flat();
    expect(stored).toEqual({
      ...at,
      _type: 'Template',
      id: 'n1',
      title: 'Hello',
      views: 2,
      ttl: 123,
    });
    expect(notes.failedItem(refused)).toEqual({
      id: 'n1',
      title: 'Hello',
      views: 2,
    });
    expect(notes.failedItem(refusedBare)).toBeUndefined();
    expect(notes.failedItem(refusedAbsent)).toBeUndefined();
    expect(notes.failedItem(new Error('other'))).toBeUndefined();
  });

  it("an update's housekeeping is set outside the schema; its entity type kept when there (set when not), or left alone", async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const owned = key('owned');
    const fresh = { PK: owned.PK, SK: 'NOTE#fresh' };
    const untyped = { PK: owned.PK, SK: 'NOTE#untyped' };
    // An item another writer owns and typed.
    await entity(t, itemSchema('List', { title: v.string() })).put(owned, {
      title: 'theirs',
    });

    // Act
    await notes.update(
      owned,
      { add: { views: 1 } },
      { entityType: 'ifMissing', housekeeping: { ttl: 7 } },
    );
    await transactWrite(t, [
      notes.updateTx(fresh, { add: { views: 1 } }, { entityType: 'ifMissing' }),
      notes.updateTx(untyped, { set: { title: 'x' } }, { entityType: 'keep' }),
    ]);

    // Assert
    const stored = (await collect(queryPages(t, { PK: owned.PK }))).flat();
    expect(stored).toEqual([
      { ...fresh, _type: 'Template', views: 1 },
      { ...owned, _type: 'List', title: 'theirs', views: 1, ttl: 7 },
      { ...untyped, title: 'x' },
    ]);
  });

  it('a transaction throws the error of the item whose condition failed, and writes none of it', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const a = key('a');
    const b = { PK: a.PK, SK: 'NOTE#b' };
    await notes.put(b, { id: 'b', title: 'B' });

    // Act
    const written = transactWrite(t, [
      notes.putTx(a, { id: 'a', title: 'A' }),
      notes.updateTx(
        b,
        { add: { views: 1 } },
        { if: (w) => w.eq('title', 'not B'), otherwise: missing('b') },
      ),
    ]);

    // Assert
    await expect(written).rejects.toMatchObject({ message: 'No note b' });
    expect(await notes.get(a)).toBeUndefined();
    expect((await notes.get(b))?.views).toBe(0);
  });

  it('delete with a condition; checkTx guards a transaction without writing', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const a = key('a');
    await notes.put(a, { id: 'a', title: 'A' });

    // Act
    const checked = transactWrite(t, [
      notes.checkTx(a, (w) => w.eq('title', 'Z'), { otherwise: missing('a') }),
      notes.deleteTx(a),
    ]);
    await expect(checked).rejects.toBeInstanceOf(NotFoundError);
    await notes.delete(a, { if: (w) => w.exists(), otherwise: missing('a') });

    // Assert
    expect(await notes.get(a)).toBeUndefined();
    await expect(
      notes.delete(a, { if: (w) => w.exists(), otherwise: missing('a') }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('putRequest: a batch write stores the item as put does, typed, housekeeping kept', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const { PK } = key('x');
    const at = (n: number) => ({ PK, SK: `NOTE#${n}` });

    // Act
    await batchWrite(t, [
      notes.putRequest(at(1), { id: 'n1', title: 'One' }),
      notes.putRequest(
        at(2),
        { id: 'n2', title: 'Two', views: 4 },
        { housekeeping: { ttl: 9 } },
      ),
    ]);

    // Assert
    expect(await notes.get(at(1))).toEqual({
      id: 'n1',
      title: 'One',
      views: 0,
    });
    const stored = (await collect(queryPages(t, { PK }))).flat();
    expect(stored).toEqual([
      { ...at(1), _type: 'Template', id: 'n1', title: 'One' },
      { ...at(2), _type: 'Template', id: 'n2', title: 'Two', views: 4, ttl: 9 },
    ]);
  });

  it('queries a prefix with a filter and a projection, and a stored item off its schema is a bug', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const { PK } = key('x');
    for (const n of [1, 2, 3]) {
      await notes.put(
        { PK, SK: `NOTE#${n}` },
        { id: `n${n}`, title: `T${n}`, views: n },
      );
    }

    // Act
    const found = await notes.all(
      { PK, skPrefix: 'NOTE#' },
      { filter: (w) => w.ge('views', 2), descending: true, consistent: true },
    );
    const titles = await collect(
      queryPages(
        t,
        { PK, from: 'NOTE#1', to: 'NOTE#2' },
        { project: ['title'] },
      ),
    );

    // Assert
    expect(found.map((n) => n.id)).toEqual(['n3', 'n2']);
    expect(titles.flat().map((item) => item.title)).toEqual(['T1', 'T2']);
    expect(titles.flat()[0]).not.toHaveProperty('views');
    await expect(
      notes.all({ PK, skPrefix: 'NOTE#' }, { project: ['title'] }),
    ).rejects.toBeInstanceOf(ItemSchemaError);
  });

  it('page: one request of at most `limit` items, resumed from its last key', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const { PK } = key('x');
    for (const n of [1, 2, 3]) {
      await notes.put({ PK, SK: `NOTE#${n}` }, { id: `n${n}`, title: 'T' });
    }

    // Act
    const first = await notes.page({ PK, skPrefix: 'NOTE#' }, { limit: 2 });
    const rest = await notes.page(
      { PK, skPrefix: 'NOTE#' },
      { limit: 2, ...(first.lastKey ? { startKey: first.lastKey } : {}) },
    );

    // Assert
    expect(first.items.map((n) => n.id)).toEqual(['n1', 'n2']);
    expect(first.lastKey).toEqual({ PK, SK: 'NOTE#2' });
    expect(rest.items.map((n) => n.id)).toEqual(['n3']);
    expect(rest.lastKey).toBeUndefined();
  });

  it('pages read on from a start key; a page counts what its filter evaluated', async () => {
    // Arrange
    const t = await table();
    const notes = entity(t, Note);
    const { PK } = key('x');
    await batchWrite(
      t,
      [1, 2, 3, 4].map((n) =>
        notes.putRequest(
          { PK, SK: `NOTE#${n}` },
          { id: `n${n}`, title: 'T', views: n },
        ),
      ),
    );

    // Act
    const after = await notes.all(
      { PK, skPrefix: 'NOTE#' },
      { startKey: { PK, SK: 'NOTE#2' }, pageSize: 1 },
    );
    const filtered = await notes.page(
      { PK, skPrefix: 'NOTE#' },
      { filter: (w) => w.ge('views', 3), limit: 3 },
    );

    // Assert
    expect(after.map((n) => n.id)).toEqual(['n3', 'n4']);
    expect(filtered.items.map((n) => n.id)).toEqual(['n3']);
    expect(filtered.scanned).toBe(3);
  });
});
