/**
 * GET /contacts walked with `pagination.nextCursor`: each page costs its
 * own items, the walk equals the page numbers, and a cursor stays with the
 * listing that gave it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

describe('GET /contacts with a cursor', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;
  let vipSegmentId: string;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Cursors');
    const key = org.ownerKey;
    listId = (await client.post('/lists', { key, body: { name: 'Walk' } })).json
      .data.id;
    const contacts = Array.from({ length: 45 }, (_, i) => ({
      email: `walker${String(i).padStart(2, '0')}@example.test`,
      ...(i % 3 === 0 ? { tags: ['vip'] } : {}),
      ...(i % 5 === 0 ? { status: 'unsubscribed' } : {}),
    }));
    await client.post(`/lists/${listId}/contacts/bulk`, {
      key,
      body: { contacts },
    });
    // The tag index follows the table's change stream.
    await client.events.settle();
    const tags = await client.get('/tags', { key });
    const vip = tags.json.data.find((t: { name: string }) => t.name === 'vip');
    vipSegmentId = (
      await client.post('/segments', {
        key,
        body: {
          name: 'VIP',
          listId,
          match: 'all',
          conditions: [{ field: 'tag', operator: 'has', value: vip.id }],
        },
      })
    ).json.data.id;
  });

  /** Every page of a listing, by cursor; and by page number. */
  const walk = async (query: Record<string, string>) => {
    const pages: { emails: string[]; page: number; total: number }[] = [];
    let cursor: string | null | undefined;
    do {
      const answer = await client.get('/contacts', {
        key: org.memberKey,
        query: { ...query, ...(cursor ? { cursor } : {}) },
      });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      pages.push({
        emails: answer.json.data.map((c: { email: string }) => c.email),
        page: answer.json.pagination.page,
        total: answer.json.pagination.total,
      });
      cursor = answer.json.pagination.nextCursor;
      expect(pages.length).toBeLessThan(10);
    } while (cursor);
    return pages;
  };
  const byNumbers = async (query: Record<string, string>, count: number) => {
    const emails: string[] = [];
    for (let page = 1; page <= count; page++) {
      const answer = await client.get('/contacts', {
        key: org.memberKey,
        query: { ...query, page: String(page) },
      });
      emails.push(...answer.json.data.map((c: { email: string }) => c.email));
    }
    return emails;
  };

  it.each([
    ['the whole list', {}],
    ['a status (counted by the list)', { status: 'subscribed' }],
    ['a tag (through the tag index, counted by the tag)', { tag: 'vip' }],
    [
      'a tag and a status (matches counted)',
      { tag: 'vip', status: 'subscribed' },
    ],
    ['a search', { search: 'walker1' }],
    ['a search and a tag', { search: 'walker', tag: 'vip' }],
    ['a segment', { segment: 'vip' }],
  ])(
    'walks %s page by page: the same contacts as the page numbers, numbered, ending with nextCursor null',
    async (_, filter: Record<string, string>) => {
      // Arrange
      const query: Record<string, string> = { limit: '7' };
      if (!filter.segment) query.listId = listId;
      if (filter.status) query.status = filter.status;
      if (filter.search) query.search = filter.search;
      if (filter.segment) query.segmentId = vipSegmentId;
      if (filter.tag) {
        const tags = await client.get('/tags', { key: org.memberKey });
        query.tagId = tags.json.data.find(
          (t: { name: string }) => t.name === filter.tag,
        ).id;
      }
      // Act
      const pages = await walk(query);
      const numbered = await byNumbers(query, pages.length);
      // Assert
      const walked = pages.flatMap((p) => p.emails);
      expect(walked).toEqual(numbered);
      expect(walked.length).toBe(pages[0]?.total);
      expect(new Set(walked).size).toBe(walked.length);
      expect(pages.map((p) => p.page)).toEqual(pages.map((_, i) => i + 1));
    },
  );

  it('refuses a cursor of another listing (filters or limit) or one it did not give: 400 naming cursor', async () => {
    // Arrange
    const first = await client.get('/contacts', {
      key: org.memberKey,
      query: { listId, limit: '5' },
    });
    const cursor = first.json.pagination.nextCursor as string;
    // Act
    const answers = await Promise.all([
      client.get('/contacts', {
        key: org.memberKey,
        query: { listId, limit: '6', cursor },
      }),
      client.get('/contacts', {
        key: org.memberKey,
        query: { listId, limit: '5', status: 'subscribed', cursor },
      }),
      client.get('/contacts', {
        key: org.memberKey,
        query: { listId, limit: '5', cursor: 'bm90IGEgY3Vyc29y' },
      }),
      client.get('/contacts', {
        key: org.memberKey,
        query: { listId, limit: '5', cursor: '%%%' },
      }),
    ]);
    // Assert
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.json.details[0].field).toBe('cursor');
    }
  });
});
