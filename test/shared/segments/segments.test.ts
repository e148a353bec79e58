import { describe, expect, it } from 'vitest';
import { DynamoContactRepository } from '../../../shared/adapters/aws/dynamo-contact-repository.ts';
import {
  releaseSegment,
  useSegment,
} from '../../../shared/adapters/aws/dynamo-segment-repository.ts';
import { transactWrite } from '../../../shared/adapters/aws/dynamo-table.ts';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import { createList } from '../../../shared/audience/lists.ts';
import type { Deps } from '../../../shared/deps.ts';
import {
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../../../shared/errors.ts';
import type { Segment } from '../../../shared/segments/model.ts';
import { listContactsOf } from '../../../shared/segments/segment-contacts.ts';
import {
  createSegment,
  deleteSegment,
  getSegment,
  listSegments,
  requireSegmentOfList,
  updateSegment,
} from '../../../shared/segments/segments.ts';
import { orgWithList } from '../../support/audience.ts';
import {
  createTestDeps,
  scanTable,
  testEngineClient,
} from '../../support/dynamo.ts';

/** How each test's deps catch their stream consumers up (the tag index). */
const settleOf = new WeakMap<Deps, () => Promise<unknown>>();

const setup = async () => {
  const { deps, tableName, events } = await createTestDeps();
  settleOf.set(deps, events.settle);
  const { orgId, listId } = await orgWithList(deps);
  return { deps, tableName, orgId, listId };
};

/** Imports contacts (statuses and dates as given) and answers the tag ids. */
const seed = async (
  deps: Deps,
  orgId: string,
  listId: string,
  lines: Record<string, unknown>[],
) => {
  const report = await importContacts(deps, orgId, listId, lines);
  expect(report.rejected, JSON.stringify(report.errors)).toBe(0);
  // The tag index follows the change stream, as on AWS.
  await settleOf.get(deps)?.();
  const tags = await deps.tags.findByNames(orgId, ['vip', 'gold']);
  return {
    vip: tags.get('vip')?.id ?? '',
    gold: tags.get('gold')?.id ?? '',
  };
};

const PEOPLE = [
  {
    email: 'ada@analytical.example',
    firstName: 'Ada',
    lastName: 'Lovelace',
    tags: ['vip'],
    confirmedAt: '2026-01-10T00:00:00Z',
  },
  { email: 'charles@engine.example', firstName: 'Charles', tags: ['gold'] },
  {
    email: 'grace@analytical.example',
    firstName: 'Grace',
    tags: ['vip', 'gold'],
    status: 'unsubscribed',
  },
  { email: 'alan@turing.example', status: 'pending' },
];

/**
 * Sends a transaction as the series code will: its own writes (none here)
 * and the entry that takes or lets go of a segment.
 */
const seriesWrite = (tableName: string, item: ReturnType<typeof useSegment>) =>
  transactWrite(tableOf(tableName), [item]);

/** The table as the series code passes it to `useSegment`. */
const tableOf = (tableName: string) => ({
  client: testEngineClient(),
  tableName,
});

describe('segments (create, read, list, change, delete)', () => {
  it('creates a segment over a list, reads it with live counts and lists it with a counter total', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const { vip } = await seed(deps, orgId, listId, PEOPLE);
    // Act
    const created = await createSegment(deps, orgId, {
      name: 'Analytical VIPs',
      listId,
      match: 'all',
      conditions: [
        { field: 'tag', operator: 'has', value: vip },
        { field: 'emailDomain', operator: 'is', value: 'analytical.example' },
      ],
    });
    await createSegment(deps, orgId, {
      name: 'Pending',
      listId,
      match: 'any',
      conditions: [{ field: 'status', operator: 'is', value: 'pending' }],
    });
    const read = await getSegment(deps, orgId, created.id);
    const page = await listSegments(deps, orgId, { page: 1, limit: 1 });
    // Assert
    expect(read).toMatchObject({
      id: created.id,
      name: 'Analytical VIPs',
      listId,
      match: 'all',
      usedBy: [],
      contactCount: 2,
      subscribedCount: 1,
    });
    expect(page.total).toBe(2);
    expect(page.items.map((s) => s.name)).toEqual(['Pending']);
  });

  it('counts what the segment matches in the list, any status, and the subscribed among them', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    await seed(deps, orgId, listId, PEOPLE);
    // Act
    const segment = await createSegment(deps, orgId, {
      name: 'Confirmed or named A',
      listId,
      match: 'any',
      conditions: [
        { field: 'confirmedAt', operator: 'exists' },
        { field: 'name', operator: 'contains', value: 'grace' },
      ],
    });
    const counted = await getSegment(deps, orgId, segment.id);
    // Assert: Ada (confirmed, subscribed) and Grace (unsubscribed).
    expect(counted.contactCount).toBe(2);
    expect(counted.subscribedCount).toBe(1);
  });

  it('answers 404 for a list that is not the organization’s, and writes nothing', async () => {
    // Arrange
    const { deps, orgId, tableName } = await setup();
    const other = await orgWithList(deps);
    const before = await scanTable(tableName);
    // Act
    const attempt = createSegment(deps, orgId, {
      name: 'Theirs',
      listId: other.listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });
    // Assert
    await expect(attempt).rejects.toThrow(NotFoundError);
    await expect(attempt).rejects.toMatchObject({ code: 'list.notFound' });
    expect(await scanTable(tableName)).toEqual(before);
  });

  it('refuses a tag the organization does not have, naming the condition path', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const other = await orgWithList(deps);
    const theirs = await seed(deps, other.orgId, other.listId, PEOPLE);
    const ours = await seed(deps, orgId, listId, PEOPLE);
    // Act
    const attempt = createSegment(deps, orgId, {
      name: 'Tags',
      listId,
      match: 'all',
      conditions: [
        { field: 'tag', operator: 'has', value: ours.vip },
        { field: 'tag', operator: 'hasNot', value: theirs.gold },
      ],
    });
    // Assert
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toMatchObject({
      details: [
        {
          field: 'conditions.1.value',
          message: `no tag of the organization has the id ${theirs.gold}`,
        },
      ],
    });
    expect((await listSegments(deps, orgId, { page: 1, limit: 5 })).total).toBe(
      0,
    );
  });

  it('changes name, match and conditions, keeps the list, and checks tags on change', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const { gold } = await seed(deps, orgId, listId, PEOPLE);
    const segment = await createSegment(deps, orgId, {
      name: 'Before',
      listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });
    // Act
    const changed = await updateSegment(deps, orgId, segment.id, {
      name: 'Gold',
      conditions: [{ field: 'tag', operator: 'has', value: gold }],
    });
    const refused = updateSegment(deps, orgId, segment.id, {
      conditions: [
        {
          field: 'tag',
          operator: 'has',
          value: '0195f3a0-0000-7000-8000-000000000000',
        },
      ],
    });
    // Assert
    expect(changed).toMatchObject({ name: 'Gold', match: 'all', listId });
    await expect(refused).rejects.toMatchObject({
      details: [{ field: 'conditions.0.value' }],
    });
    const read = await getSegment(deps, orgId, segment.id);
    expect(read.conditions).toEqual([
      { field: 'tag', operator: 'has', value: gold },
    ]);
    expect(read.contactCount).toBe(2);
  });

  it('deletes a segment, lowers the total, and answers 404 after', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const segment = await createSegment(deps, orgId, {
      name: 'Short-lived',
      listId,
      match: 'all',
      conditions: [{ field: 'joinedAt', operator: 'notExists' }],
    });
    // Act
    const deleted = await deleteSegment(deps, orgId, segment.id);
    // Assert
    expect(deleted).toEqual({ id: segment.id });
    expect((await listSegments(deps, orgId, { page: 1, limit: 5 })).total).toBe(
      0,
    );
    await expect(getSegment(deps, orgId, segment.id)).rejects.toMatchObject({
      code: 'segment.notFound',
    });
    await expect(deleteSegment(deps, orgId, segment.id)).rejects.toThrow(
      NotFoundError,
    );
  });

  it('answers 404 for another organization’s segment on every call', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    const other = await orgWithList(deps);
    const theirs = await createSegment(deps, other.orgId, {
      name: 'Theirs',
      listId: other.listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });
    // Act + Assert
    const attempts = [
      () => getSegment(deps, orgId, theirs.id),
      () => updateSegment(deps, orgId, theirs.id, { name: 'Mine' }),
      () => deleteSegment(deps, orgId, theirs.id),
    ];
    for (const attempt of attempts) {
      await expect(attempt()).rejects.toMatchObject({
        code: 'segment.notFound',
      });
    }
    expect((await getSegment(deps, other.orgId, theirs.id)).name).toBe(
      'Theirs',
    );
  });
});

describe('segments in use by series', () => {
  const create = (deps: Deps, orgId: string, listId: string) =>
    createSegment(deps, orgId, {
      name: 'Narrow',
      listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });

  it('cannot be deleted while a series uses it: 400 segment.inUse naming each series, nothing written', async () => {
    // Arrange
    const { deps, orgId, listId, tableName } = await setup();
    const segment = await create(deps, orgId, listId);
    const use = { orgId, segmentId: segment.id, listId };
    await seriesWrite(
      tableName,
      useSegment(tableOf(tableName), {
        ...use,
        seriesId: 'series-1',
        seriesName: 'Welcome',
      }),
    );
    await seriesWrite(
      tableName,
      useSegment(tableOf(tableName), {
        ...use,
        seriesId: 'series-2',
        seriesName: 'Advent',
      }),
    );
    const before = await scanTable(tableName);
    // Act
    const attempt = deleteSegment(deps, orgId, segment.id);
    // Assert
    await expect(attempt).rejects.toThrow(RuleViolationError);
    await expect(attempt).rejects.toMatchObject({ code: 'segment.inUse' });
    await expect(attempt).rejects.toThrow(
      /"Welcome" \(series-1\), "Advent" \(series-2\)/,
    );
    expect(await scanTable(tableName)).toEqual(before);
    expect((await getSegment(deps, orgId, segment.id)).usedBy).toEqual([
      { seriesId: 'series-1', name: 'Welcome' },
      { seriesId: 'series-2', name: 'Advent' },
    ]);
  });

  it('the store’s delete itself is conditional on no series: a series taking it after the check still wins', async () => {
    // Arrange: the segment read free, then taken before the delete lands.
    const { deps, orgId, listId, tableName } = await setup();
    const segment = await create(deps, orgId, listId);
    const read = await deps.segments.get(orgId, segment.id);
    await seriesWrite(
      tableName,
      useSegment(tableOf(tableName), {
        orgId,
        segmentId: segment.id,
        listId,
        seriesId: 'series-1',
        seriesName: 'Welcome',
      }),
    );
    const before = await scanTable(tableName);
    // Act
    const deleted = await deps.segments.delete(orgId, read as Segment);
    // Assert
    expect(deleted).toBe(false);
    expect(await scanTable(tableName)).toEqual(before);
  });

  it('can be deleted once every series released it; releasing twice is harmless', async () => {
    // Arrange
    const { deps, orgId, listId, tableName } = await setup();
    const segment = await create(deps, orgId, listId);
    const ids = { orgId, segmentId: segment.id, seriesId: 'series-1' };
    await seriesWrite(
      tableName,
      useSegment(tableOf(tableName), { ...ids, seriesName: 'Welcome', listId }),
    );
    // Act
    await seriesWrite(tableName, releaseSegment(tableOf(tableName), ids));
    await seriesWrite(tableName, releaseSegment(tableOf(tableName), ids));
    // Assert
    expect((await getSegment(deps, orgId, segment.id)).usedBy).toEqual([]);
    expect(await deleteSegment(deps, orgId, segment.id)).toEqual({
      id: segment.id,
    });
  });

  it('keeps its series through a change of the segment', async () => {
    // Arrange
    const { deps, orgId, listId, tableName } = await setup();
    const segment = await create(deps, orgId, listId);
    await seriesWrite(
      tableName,
      useSegment(tableOf(tableName), {
        orgId,
        segmentId: segment.id,
        listId,
        seriesId: 'series-1',
        seriesName: 'Welcome',
      }),
    );
    // Act
    await updateSegment(deps, orgId, segment.id, {
      name: 'Renamed',
      match: 'any',
    });
    // Assert
    await expect(deleteSegment(deps, orgId, segment.id)).rejects.toMatchObject({
      code: 'segment.inUse',
    });
  });

  it('useSegment fails the series transaction for a missing segment or one over another list, and creates no item', async () => {
    // Arrange
    const { deps, orgId, listId, tableName } = await setup();
    const segment = await create(deps, orgId, listId);
    const otherList = await orgWithList(deps);
    const before = await scanTable(tableName);
    const take = (segmentId: string, list: string) =>
      seriesWrite(
        tableName,
        useSegment(tableOf(tableName), {
          orgId,
          segmentId,
          listId: list,
          seriesId: 'series-1',
          seriesName: 'Welcome',
        }),
      );
    // Act + Assert
    await expect(
      take('0195f3a0-0000-7000-8000-000000000000', listId),
    ).rejects.toThrow(/ConditionalCheckFailed/);
    await expect(take(segment.id, otherList.listId)).rejects.toThrow(
      /ConditionalCheckFailed/,
    );
    expect(await scanTable(tableName)).toEqual(before);
    // The series code explains the refusal with requireSegmentOfList.
    await expect(
      requireSegmentOfList(deps, orgId, segment.id, otherList.listId),
    ).rejects.toMatchObject({
      code: 'segment.listMismatch',
      details: [{ field: 'listId' }],
    });
  });

  it('releaseSegment of a missing segment fails rather than create a stub', async () => {
    // Arrange
    const { orgId, tableName } = await setup();
    const before = await scanTable(tableName);
    // Act
    const attempt = seriesWrite(
      tableName,
      releaseSegment(tableOf(tableName), {
        orgId,
        segmentId: '0195f3a0-0000-7000-8000-000000000000',
        seriesId: 'series-1',
      }),
    );
    // Assert
    await expect(attempt).rejects.toThrow(/ConditionalCheckFailed/);
    expect(await scanTable(tableName)).toEqual(before);
  });
});

describe('contacts of a segment (GET /contacts?segmentId=)', () => {
  it('past the read budget a call says totalExact false, and the cursor walk finds every match once, in order, each call reading at most the budget', async () => {
    // Arrange: 40 contacts, one in two on the segment's domain; a budget of
    // 12 contacts read per call.
    const { deps, tableName, orgId, listId } = await setup();
    await seed(
      deps,
      orgId,
      listId,
      Array.from({ length: 40 }, (_, i) => ({
        email: `p${String(i).padStart(2, '0')}@${i % 2 ? 'other' : 'analytical'}.example`,
      })),
    );
    const segment = await createSegment(deps, orgId, {
      name: 'Analytical',
      listId,
      match: 'all',
      conditions: [
        { field: 'emailDomain', operator: 'is', value: 'analytical.example' },
      ],
    });
    let read = 0;
    const client = testEngineClient();
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const output = result.output as { ScannedCount?: number };
        read += output.ScannedCount ?? 0;
        return result;
      },
      { step: 'initialize', name: 'countScanned' },
    );
    const contacts = new DynamoContactRepository({ client, tableName }, 12);

    // Act
    const pages: Awaited<ReturnType<typeof listContactsOf>>[] = [];
    const reads: number[] = [];
    let cursor: string | null | undefined;
    do {
      const before = read;
      const page = await listContactsOf({ ...deps, contacts }, orgId, {
        segmentId: segment.id,
        page: 1,
        limit: 5,
        ...(cursor ? { cursor } : {}),
      });
      reads.push(read - before);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);

    // Assert
    const emails = pages.flatMap((p) => p.items.map((c) => c.email));
    expect(emails).toHaveLength(20);
    expect(new Set(emails).size).toBe(20);
    expect(emails.every((e) => e.endsWith('@analytical.example'))).toBe(true);
    expect(emails).toEqual([...emails].sort());
    expect(Math.max(...reads)).toBeLessThanOrEqual(12);
    expect(pages[0]?.totalExact).toBe(false);
    expect(pages.at(-1)).toMatchObject({
      totalExact: true,
      total: 20,
      nextCursor: null,
    });
  });

  it('pages the matching contacts of the segment’s list by email, with the total of matches', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const { vip } = await seed(deps, orgId, listId, PEOPLE);
    const segment = await createSegment(deps, orgId, {
      name: 'Not VIP',
      listId,
      match: 'all',
      conditions: [{ field: 'tag', operator: 'hasNot', value: vip }],
    });
    // Act
    const first = await listContactsOf(deps, orgId, {
      segmentId: segment.id,
      page: 1,
      limit: 1,
    });
    const second = await listContactsOf(deps, orgId, {
      segmentId: segment.id,
      listId,
      page: 2,
      limit: 1,
    });
    const past = await listContactsOf(deps, orgId, {
      segmentId: segment.id,
      page: 3,
      limit: 1,
    });
    // Assert
    expect(first.total).toBe(2);
    expect(first.items.map((c) => c.email)).toEqual(['alan@turing.example']);
    expect(second.items.map((c) => c.email)).toEqual([
      'charles@engine.example',
    ]);
    expect(past).toEqual({
      total: 2,
      items: [],
      page: 3,
      nextCursor: null,
      totalExact: true,
    });
    // The first page's cursor leads to the second.
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(second.nextCursor).toBeNull();
  });

  it('combines the segment with status, tagId and search (AND)', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const { gold } = await seed(deps, orgId, listId, PEOPLE);
    const segment = await createSegment(deps, orgId, {
      name: 'Analytical',
      listId,
      match: 'all',
      conditions: [
        { field: 'emailDomain', operator: 'is', value: 'analytical.example' },
      ],
    });
    const list = (query: Record<string, string>) =>
      listContactsOf(deps, orgId, {
        segmentId: segment.id,
        page: 1,
        limit: 10,
        ...query,
      });
    // Act
    const subscribed = await list({ status: 'subscribed' });
    const golden = await list({ tagId: gold });
    const searched = await list({ search: 'LOVE' });
    // Assert
    expect(subscribed.items.map((c) => c.email)).toEqual([
      'ada@analytical.example',
    ]);
    expect(golden.items.map((c) => c.email)).toEqual([
      'grace@analytical.example',
    ]);
    expect(searched.total).toBe(1);
  });

  it('answers 400 segment.listMismatch for another list of the organization, 404 for a list or segment of another organization', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const other = await orgWithList(deps);
    const segment = await createSegment(deps, orgId, {
      name: 'All subscribed',
      listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });
    const theirs = await createSegment(deps, other.orgId, {
      name: 'Theirs',
      listId: other.listId,
      match: 'all',
      conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
    });
    const another = await createList(deps, orgId, { name: 'Another' });
    const page = { page: 1, limit: 10 };
    // Act + Assert
    await expect(
      listContactsOf(deps, orgId, {
        ...page,
        segmentId: segment.id,
        listId: another.id,
      }),
    ).rejects.toMatchObject({
      code: 'segment.listMismatch',
      details: [{ field: 'listId' }],
    });
    await expect(
      listContactsOf(deps, orgId, {
        ...page,
        segmentId: segment.id,
        listId: other.listId,
      }),
    ).rejects.toMatchObject({ code: 'list.notFound' });
    await expect(
      listContactsOf(deps, orgId, { ...page, segmentId: theirs.id }),
    ).rejects.toMatchObject({ code: 'segment.notFound' });
  });
});
