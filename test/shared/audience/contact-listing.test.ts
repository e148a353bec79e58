/**
 * What GET /contacts reads, at the domain on the embedded engine: a tag
 * filter goes through the tag index and reads about what it returns; a
 * counted filter (a search, a tag with a status) stops at its read budget,
 * says so, and its cursor reads on from there.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoContactRepository } from '../../../shared/adapters/aws/dynamo-contact-repository.ts';
import { DynamoTagRepository } from '../../../shared/adapters/aws/dynamo-tag-repository.ts';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import type { ContactQueryInput } from '../../../shared/audience/contact.schema.ts';
import { listContacts } from '../../../shared/audience/contacts.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';

/** A document client that counts the items each command hands back. */
const countingClient = () => {
  const client = testEngineClient();
  const read = { items: 0, requests: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const output = result.output as {
        Items?: unknown[];
        Responses?: Record<string, unknown[]>;
        Item?: unknown;
      };
      read.requests++;
      read.items +=
        (output.Items?.length ?? 0) +
        Object.values(output.Responses ?? {}).reduce(
          (n, items) => n + items.length,
          0,
        ) +
        (output.Item ? 1 : 0);
      return result;
    },
    { step: 'initialize', name: 'countItemsRead' },
  );
  return { client, read };
};

/** 60 contacts, every fourth tagged `vip`, every eighth unsubscribed. */
const seeded = async () => {
  const setup = await createTestDeps();
  const { deps, events } = setup;
  const { orgId, listId } = await orgWithList(deps);
  await importContacts(
    deps,
    orgId,
    listId,
    Array.from({ length: 60 }, (_, i) => ({
      email: `c${String(i).padStart(2, '0')}@example.test`,
      ...(i % 8 === 0 ? { status: 'unsubscribed' as const } : {}),
      tags: i % 4 === 0 ? ['vip'] : [],
    })),
  );
  await events.settle();
  const [vip] = (await deps.tags.page(orgId, { page: 1, limit: 10 })).items;
  if (!vip) throw new Error('no tag');
  return { ...setup, orgId, listId, vipId: vip.id };
};

const query = (
  listId: string,
  extra: Partial<ContactQueryInput>,
): ContactQueryInput => ({ listId, page: 1, limit: 5, ...extra });

describe('GET /contacts reads (tag index, read budget)', () => {
  // Every test only reads: they share one seeded table.
  let world: Awaited<ReturnType<typeof seeded>>;
  beforeAll(async () => {
    world = await seeded();
  });

  it('a tag alone reads its index entries up to the page and those contacts, not the list; its total comes from the per-list count', async () => {
    // Arrange
    const { deps, tableName, orgId, listId, vipId } = world;
    const { client, read } = countingClient();
    const contacts = new DynamoContactRepository({ client, tableName });

    // Act
    const page = await listContacts({ ...deps, contacts }, orgId, {
      ...query(listId, { tagId: vipId }),
      page: 2,
    });

    // Assert: entries up to the page's end (10), its 5 contacts.
    expect(page.total).toBe(15);
    expect(page.items.map((c) => c.email)).toEqual([
      'c20@example.test',
      'c24@example.test',
      'c28@example.test',
      'c32@example.test',
      'c36@example.test',
    ]);
    expect(read).toEqual({ items: 15, requests: 2 });
    expect(page.totalExact).toBeUndefined();
  });

  it('tag names are read once per container: a tag is never renamed nor deleted', async () => {
    // Arrange
    const { tableName, orgId, vipId } = world;
    const { client, read } = countingClient();
    const tags = new DynamoTagRepository({ client, tableName });

    // Act
    const first = await tags.refs(orgId, [vipId, 'unknown']);
    const requests = read.requests;
    const again = await tags.refs(orgId, [vipId]);

    // Assert
    expect([...first.values()]).toEqual([{ id: vipId, name: 'vip' }]);
    expect(again).toEqual(new Map([[vipId, { id: vipId, name: 'vip' }]]));
    expect(requests).toBe(1);
    expect(read.requests).toBe(1);
  });

  it('a tag of another organization, or an unknown tag, matches nothing', async () => {
    // Arrange
    const { deps, orgId, listId, vipId } = world;
    const other = await seeded();

    // Act
    const foreign = await listContacts(
      deps,
      orgId,
      query(listId, { tagId: other.vipId }),
    );
    const mine = await listContacts(
      deps,
      orgId,
      query(listId, { tagId: vipId }),
    );

    // Assert
    expect(foreign).toMatchObject({ total: 0, items: [], nextCursor: null });
    expect(mine.total).toBe(15);
  });

  it('a search within the budget is exact: every match counted, totalExact true', async () => {
    // Arrange
    const { deps, orgId, listId } = world;

    // Act
    const page = await listContacts(
      deps,
      orgId,
      query(listId, { search: 'C1' }),
    );

    // Assert
    expect(page.total).toBe(10);
    expect(page.totalExact).toBe(true);
    expect(page.items).toHaveLength(5);
    expect(page.nextCursor).toEqual(expect.any(String));
  });

  it.each([
    ['a search', { search: '@example' }, 60],
    ['a tag with a status other than subscribed', { tagUnsubscribed: true }, 8],
  ])(
    '%s past the budget: each call reads at most the budget, says totalExact false, and the cursor walk finds every match once, in order',
    async (_, filter, expected) => {
      // Arrange: a budget of 12 items read per call.
      const { deps, tableName, orgId, listId, vipId } = world;
      const { client, read } = countingClient();
      const contacts = new DynamoContactRepository({ client, tableName }, 12);
      const base = query(listId, {
        ...('search' in filter ? { search: filter.search } : {}),
        ...('tagUnsubscribed' in filter
          ? { tagId: vipId, status: 'unsubscribed' as const }
          : {}),
      });

      // Act: walk the cursors.
      const pages: Awaited<ReturnType<typeof listContacts>>[] = [];
      const reads: number[] = [];
      let cursor: string | null | undefined;
      do {
        const before = read.items;
        const page = await listContacts({ ...deps, contacts }, orgId, {
          ...base,
          ...(cursor ? { cursor } : {}),
        });
        reads.push(read.items - before);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor && pages.length < 40);

      // Assert
      const emails = pages.flatMap((p) => p.items.map((c) => c.email));
      expect(emails).toHaveLength(expected);
      expect(new Set(emails).size).toBe(expected);
      expect(emails).toEqual([...emails].sort());
      // A call reads the budget (an index entry and its contact count once
      // each for a tag), never the whole list.
      expect(Math.max(...reads)).toBeLessThanOrEqual(2 * 12 + 1);
      expect(pages[0]?.totalExact).toBe(false);
      expect(pages.at(-1)).toMatchObject({
        totalExact: true,
        total: expected,
        nextCursor: null,
      });
      const totals = pages.map((p) => p.total);
      expect(totals).toEqual([...totals].sort((a, b) => a - b));
      expect(pages.map((p) => p.page)).toEqual(pages.map((_, i) => i + 1));
    },
  );

  it('a tag with status subscribed takes its exact total from the tag’s kept counter and reads the index only until its page is full', async () => {
    // Arrange: 7 of the 15 vip carriers are subscribed.
    const { deps, tableName, orgId, listId, vipId } = world;
    const { client, read } = countingClient();
    const contacts = new DynamoContactRepository({ client, tableName }, 12);

    // Act
    const first = await listContacts({ ...deps, contacts }, orgId, {
      ...query(listId, { tagId: vipId, status: 'subscribed' }),
    });
    const second = await listContacts({ ...deps, contacts }, orgId, {
      ...query(listId, { tagId: vipId, status: 'subscribed' }),
      cursor: first.nextCursor ?? '',
    });

    // Assert
    expect(first).toMatchObject({ total: 7, totalExact: true });
    expect(first.items.map((c) => c.email)).toEqual([
      'c04@example.test',
      'c12@example.test',
      'c20@example.test',
      'c28@example.test',
      'c36@example.test',
    ]);
    expect(second.items.map((c) => c.email)).toEqual([
      'c44@example.test',
      'c52@example.test',
    ]);
    expect(second.nextCursor).toBeNull();
    // Entries and their contacts (rounds double), never the 60 contacts.
    expect(read.items).toBeLessThanOrEqual(3 * 15);
  });

  it('a page number past what the budget reached answers an empty page that is not exact, with a cursor reading on', async () => {
    // Arrange
    const { deps, tableName, orgId, listId } = world;
    const contacts = new DynamoContactRepository(
      { client: testEngineClient(), tableName },
      12,
    );

    // Act
    const page = await listContacts({ ...deps, contacts }, orgId, {
      ...query(listId, { search: '@example' }),
      page: 4,
    });

    // Assert: 12 read, 12 matched; page 4 starts at the 16th.
    expect(page).toMatchObject({ items: [], total: 12, totalExact: false });
    expect(page.nextCursor).toEqual(expect.any(String));
  });
});
