/**
 * Sequences and series through the API in process: the rules the first
 * suite left without a test. PATCH /series field by field, the lists'
 * pagination, names at their limits, the default plan cap, publish
 * refusals for content and for a list, tag or segment gone, GET
 * /series/{id} in full, and bulk import rule 1 over HTTP. Test names quote
 * the spec (sections "Series", "Sequences and series", "Sequence and
 * series status", "Version of a sequence or series", "Limits", "Audience:
 * bulk import").
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type Key, keys } from '../../shared/db/keys.ts';
import { type ApiClient, createApiClient } from '../support/api-client.ts';
import { fixedClock, testEngineClient } from '../support/dynamo.ts';
import { CONTENT, type Org, organization } from '../support/sequences-api.ts';

/** Day 1 of the series below: after any clock of these tests. */
const DAY_1 = '2099-03-01T09:00:00.000Z';

const createSequence = (
  client: ApiClient,
  org: Org,
  name = 'Welcome',
  trigger: { triggerType: string; triggerTargetId: string } = {
    triggerType: 'list_joined',
    triggerTargetId: org.listId,
  },
) => client.post('/sequences', { key: org.key, body: { name, ...trigger } });

const createSeries = (
  client: ApiClient,
  org: Org,
  body: Record<string, unknown> = {},
) =>
  client.post('/series', {
    key: org.key,
    body: { name: 'Course', listId: org.listId, startsAt: DAY_1, ...body },
  });

/** A segment of a list, matching subscribed contacts. */
const segmentOf = async (client: ApiClient, org: Org, name = 'Subscribed') =>
  (
    await client.post('/segments', {
      key: org.key,
      body: {
        name,
        listId: org.listId,
        match: 'all',
        conditions: [{ field: 'status', operator: 'is', value: 'subscribed' }],
      },
    })
  ).json.data.id as string;

/** Adds an email node from the template to a version. */
const addEmail = (client: ApiClient, org: Org, id: string, versionId: string) =>
  client.post(`/sequences/${id}/versions/${versionId}/nodes`, {
    key: org.key,
    body: { type: 'send_email', templateId: org.templateId },
  });

const publish = (client: ApiClient, org: Org, id: string, versionId: string) =>
  client.post(`/sequences/${id}/versions/${versionId}/publish`, {
    key: org.key,
  });

/** A series with one email, published (version 1), no draft open. */
const publishedSeries = async (
  client: ApiClient,
  org: Org,
  body: Record<string, unknown> = {},
) => {
  const created = await createSeries(client, org, body);
  const { id, draftVersionId } = created.json.data;
  await addEmail(client, org, id, draftVersionId);
  const published = await publish(client, org, id, draftVersionId);
  expect(published.status).toBe(200);
  return { id: id as string, versionId: draftVersionId as string };
};

/** Removes an item by hand: what no route can remove (a list, a tag). */
const deleteItem = (client: ApiClient, key: Key) =>
  testEngineClient().send(
    new DeleteCommand({ TableName: client.tableName, Key: key }),
  );

const fieldsOf = (answer: { json: { details?: { field: string }[] } }) =>
  (answer.json.details ?? []).map((d) => d.field);

describe('PATCH /series/{seriesId} (Series)', () => {
  it('topicId (uuid or null) is written on the series, with no draft open: set, then removed with null', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const { id } = await publishedSeries(client, org);

    // Act
    const set = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { topicId: org.topicId },
    });
    const readSet = await client.get(`/series/${id}`, { key: org.key });
    const cleared = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { topicId: null },
    });
    const readCleared = await client.get(`/series/${id}`, { key: org.key });

    // Assert
    expect(set.status).toBe(200);
    expect(set.json.data).toMatchObject({
      topicId: org.topicId,
      draftVersionId: null,
    });
    expect(readSet.json.data.topicId).toBe(org.topicId);
    expect(cleared.status).toBe(200);
    expect(cleared.json.data.topicId).toBeNull();
    expect(readCleared.json.data).toMatchObject({
      topicId: null,
      draftVersionId: null,
    });
  });

  it.each([
    { field: 'listId', value: 'another list' },
    { field: 'audienceSegmentId', value: 'a segment' },
    { field: 'audienceSegmentId', value: null },
    { field: 'audienceTagId', value: 'a tag' },
    { field: 'audienceTagId', value: null },
    { field: 'startsAt', value: null },
  ] as const)(
    '$field ($value) "needs an open draft": sent with no draft open it is a 400 sequence.noDraft naming it; nothing changes and no draft is opened',
    async ({ field, value }) => {
      // Arrange
      const client = await createApiClient();
      const org = await organization(client);
      const { id } = await publishedSeries(client, org, {
        audienceSegmentId: await segmentOf(client, org),
        audienceTagId: org.tagId,
      });
      const values: Record<string, string> = {
        'another list': (
          await client.post('/lists', { key: org.key, body: { name: 'Other' } })
        ).json.data.id,
        'a segment': await segmentOf(client, org, 'Another'),
        'a tag': (
          await client.post('/tags', { key: org.key, body: { name: 'Other' } })
        ).json.data.id,
      };
      const before = await client.scan();

      // Act
      const refused = await client.patch(`/series/${id}`, {
        key: org.key,
        body: {
          name: 'Renamed',
          [field]: value === null ? null : values[value],
        },
      });

      // Assert
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe('sequence.noDraft');
      expect(refused.json.details).toEqual([
        { field, message: 'needs an open draft' },
      ]);
      expect(await client.scan()).toEqual(before);
    },
  );

  it('Sequence and series status: PATCH status active before any publish is a 400 sequence.notPublished for a series; nothing changes', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const created = await createSeries(client, org);
    const before = await client.scan();

    // Act
    const refused = await client.patch(`/series/${created.json.data.id}`, {
      key: org.key,
      body: { status: 'active' },
    });

    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.notPublished');
    expect(await client.scan()).toEqual(before);
  });

  it("omitted calendar fields keep the draft's current value", async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const segmentId = await segmentOf(client, org);
    const created = await createSeries(client, org, {
      audienceSegmentId: segmentId,
      audienceTagId: org.tagId,
    });
    const { id, draftVersionId } = created.json.data;

    // Act
    const edited = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { startsAt: '2099-04-01T09:00:00+02:00' },
    });
    const draft = await client.get(
      `/sequences/${id}/versions/${draftVersionId}`,
      { key: org.key },
    );

    // Assert
    const calendar = {
      startsAt: '2099-04-01T07:00:00.000Z',
      listId: org.listId,
      audienceSegmentId: segmentId,
      audienceTagId: org.tagId,
    };
    expect(edited.status).toBe(200);
    expect(edited.json.data).toMatchObject(calendar);
    expect(draft.json.data).toMatchObject({ status: 'draft', ...calendar });
  });

  it('"The change takes effect after publishing": a calendar change shows on the series through its draft only; discarded, the published calendar shows again; published, it is the series\'', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const { id, versionId: v1 } = await publishedSeries(client, org);
    const openDraft = async () =>
      (await client.post(`/sequences/${id}/versions`, { key: org.key })).json
        .data.id as string;
    const read = async () =>
      (await client.get(`/series/${id}`, { key: org.key })).json.data;
    const LATER = '2099-06-01T09:00:00.000Z';

    // Act: a draft changes its start.
    const v2 = await openDraft();
    const edited = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { startsAt: LATER, audienceTagId: org.tagId },
    });
    const whileDrafted = await read();

    // Assert: the series shows the draft's calendar; v1 keeps its own.
    expect(edited.json.data).toMatchObject({
      startsAt: LATER,
      audienceTagId: org.tagId,
    });
    expect(whileDrafted).toMatchObject({
      startsAt: LATER,
      audienceTagId: org.tagId,
      publishedVersionId: v1,
      draftVersionId: v2,
    });
    expect(whileDrafted.published).toMatchObject({
      id: v1,
      startsAt: DAY_1,
      audienceTagId: null,
    });
    expect(whileDrafted.draft).toMatchObject({
      id: v2,
      startsAt: LATER,
      audienceTagId: org.tagId,
    });

    // Act: the draft is discarded.
    await client.delete(`/sequences/${id}/versions/${v2}`, { key: org.key });

    // Assert: the published calendar again.
    expect(await read()).toMatchObject({
      startsAt: DAY_1,
      audienceTagId: null,
      draftVersionId: null,
    });

    // Act: a new draft with the change is published.
    const v3 = await openDraft();
    await client.patch(`/series/${id}`, {
      key: org.key,
      body: { startsAt: LATER },
    });
    expect((await publish(client, org, id, v3)).status).toBe(200);

    // Assert: it is the series' calendar now.
    const after = await read();
    expect(after).toMatchObject({
      startsAt: LATER,
      publishedVersionId: v3,
      draftVersionId: null,
    });
    expect(
      after.versions.map((v: { number: number; startsAt: string }) => [
        v.number,
        v.startsAt,
      ]),
    ).toEqual([
      [1, DAY_1],
      [3, LATER],
    ]);
  });
});

describe('GET /sequences and GET /series: paginated like the other lists (Conventions)', () => {
  it('each lists its own kind only, newest first, with total, page, limit (20 by default) and totalPages; page 2; a limit above 100 is a 400 naming limit', async () => {
    // Arrange: sequences and series created in turn.
    const client = await createApiClient();
    const org = await organization(client);
    for (const n of [1, 2, 3]) {
      await createSequence(client, org, `Sequence ${n}`);
      if (n < 3) await createSeries(client, org, { name: `Series ${n}` });
    }
    const names = (answer: { json: { data: { name: string }[] } }) =>
      answer.json.data.map((row) => row.name);

    // Act
    const sequences = await client.get('/sequences', { key: org.key });
    const series = await client.get('/series', { key: org.key });
    const secondPage = await client.get('/sequences', {
      key: org.key,
      query: { page: '2', limit: '2' },
    });
    const seriesPage = await client.get('/series', {
      key: org.key,
      query: { page: '2', limit: '1' },
    });
    const tooMany = await Promise.all(
      ['/sequences', '/series'].map((path) =>
        client.get(path, { key: org.key, query: { limit: '101' } }),
      ),
    );

    // Assert
    expect(names(sequences)).toEqual([
      'Sequence 3',
      'Sequence 2',
      'Sequence 1',
    ]);
    expect(sequences.json.pagination).toEqual({
      total: 3,
      page: 1,
      limit: 20,
      totalPages: 1,
    });
    expect(
      sequences.json.data.map((row: { kind: string }) => row.kind),
    ).toEqual(['sequence', 'sequence', 'sequence']);
    expect(names(series)).toEqual(['Series 2', 'Series 1']);
    expect(series.json.pagination).toEqual({
      total: 2,
      page: 1,
      limit: 20,
      totalPages: 1,
    });
    expect(names(secondPage)).toEqual(['Sequence 1']);
    expect(secondPage.json.pagination).toEqual({
      total: 3,
      page: 2,
      limit: 2,
      totalPages: 2,
    });
    expect(names(seriesPage)).toEqual(['Series 1']);
    expect(seriesPage.json.pagination).toEqual({
      total: 2,
      page: 2,
      limit: 1,
      totalPages: 2,
    });
    for (const refused of tooMany) {
      expect(refused.status).toBe(400);
      expect(fieldsOf(refused)).toEqual(['limit']);
    }
  });
});

describe('Limits: name of a sequence or series, 1 to 100 characters', () => {
  const accepted = ['A', 'n'.repeat(100)];
  const refused = ['', 'n'.repeat(101), '   '];

  it('POST /sequences and POST /series accept 1 and 100 characters, and refuse 0, 101 and a blank name with 400 naming name', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const create = {
      sequence: (name: string) => createSequence(client, org, name),
      series: (name: string) => createSeries(client, org, { name }),
    };

    for (const [kind, post] of Object.entries(create)) {
      for (const name of accepted) {
        // Act
        const answer = await post(name);
        // Assert
        expect(answer.status, `${kind} of ${name.length}`).toBe(201);
        expect(answer.json.data.name).toBe(name);
      }
      const before = await client.scan();
      for (const name of refused) {
        const answer = await post(name);
        expect(answer.status, `${kind} "${name}"`).toBe(400);
        expect(fieldsOf(answer)).toEqual(['name']);
      }
      expect(await client.scan()).toEqual(before);
    }
  });

  it('PATCH /sequences/{id} and PATCH /series/{id} accept 1 and 100 characters, and refuse 0, 101 and a blank name with 400 naming name', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const sequenceId = (await createSequence(client, org)).json.data.id;
    const seriesId = (await createSeries(client, org)).json.data.id;
    const paths = [`/sequences/${sequenceId}`, `/series/${seriesId}`];

    for (const path of paths) {
      for (const name of accepted) {
        // Act
        const answer = await client.patch(path, {
          key: org.key,
          body: { name },
        });
        // Assert
        expect(answer.status, `${path} ${name.length}`).toBe(200);
        expect(answer.json.data.name).toBe(name);
      }
      const before = await client.scan();
      for (const name of refused) {
        const answer = await client.patch(path, {
          key: org.key,
          body: { name },
        });
        expect(answer.status, `${path} "${name}"`).toBe(400);
        expect(fieldsOf(answer)).toEqual(['name']);
      }
      expect(await client.scan()).toEqual(before);
    }
  });
});

describe('Limits: the sequence cap set by the plan (20 unless the operator sets it)', () => {
  it('a new organization creates 20 sequences; the 21st is 400 sequence.capReached naming the cap 20 and the count 20; series do not count', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    expect((await createSeries(client, org, { name: 'Before' })).status).toBe(
      201,
    );
    for (let n = 1; n <= 20; n++) {
      const answer = await createSequence(client, org, `Sequence ${n}`);
      expect(answer.status, `sequence ${n}`).toBe(201);
    }
    const before = await client.scan();

    // Act
    const refused = await createSequence(client, org, 'Sequence 21');

    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.capReached');
    expect(refused.json.error).toBe(
      'The plan allows 20 sequences and the organization has 20 (paused ones count): delete one, or ask the operator to raise the cap',
    );
    expect(await client.scan()).toEqual(before);
    expect((await createSeries(client, org, { name: 'After' })).status).toBe(
      201,
    );
    const listed = await client.get('/sequences', { key: org.key });
    expect(listed.json.pagination.total).toBe(20);
  });
});

describe('Publish refusals (400 sequence.publishInvalid, details naming each problem)', () => {
  it("content that does not render: PATCH and a template both refuse it (400 naming content), so set by hand in the node, publish names the node's content and nothing changes", async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const broken = `${CONTENT}<p>{% if %}</p>`;
    const created = await createSequence(client, org);
    const { id, draftVersionId } = created.json.data;
    const nodeId = (await addEmail(client, org, id, draftVersionId)).json.data
      .id as string;
    const patched = await client.patch(
      `/sequences/${id}/versions/${draftVersionId}/nodes/${nodeId}`,
      { key: org.key, body: { content: broken } },
    );
    const template = await client.post('/templates', {
      key: org.key,
      body: { name: 'Broken', defaultSubject: 'Hi', content: broken },
    });
    await testEngineClient().send(
      new UpdateCommand({
        TableName: client.tableName,
        Key: keys.sequenceNode(org.orgId, id, draftVersionId, nodeId),
        UpdateExpression: 'SET content = :broken',
        ExpressionAttributeValues: { ':broken': broken },
      }),
    );
    const before = await client.scan();

    // Act
    const refused = await publish(client, org, id, draftVersionId);

    // Assert
    expect([patched.status, fieldsOf(patched)]).toEqual([400, ['content']]);
    expect([template.status, fieldsOf(template)]).toEqual([400, ['content']]);
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.publishInvalid');
    // The render alone is named: what content that does not parse uses
    // (its unsubscribe link) is unknown, so nothing is said of it.
    expect(refused.json.details).toEqual([
      {
        field: 'nodes.0.content',
        message: expect.stringMatching(
          new RegExp(`^node ${nodeId} does not render: `),
        ),
      },
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('for a series, its list gone and its tag gone (no route deletes a list or a tag: 404; the items removed by hand) are each named', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const created = await createSeries(client, org, {
      audienceTagId: org.tagId,
    });
    const { id, draftVersionId } = created.json.data;
    await addEmail(client, org, id, draftVersionId);
    const noRoute = await Promise.all([
      client.delete(`/lists/${org.listId}`, { key: org.key }),
      client.delete(`/tags/${org.tagId}`, { key: org.key }),
    ]);
    await deleteItem(client, keys.list(org.orgId, org.listId));
    await deleteItem(client, keys.tag(org.orgId, org.tagId));
    const before = await client.scan();

    // Act
    const refused = await publish(client, org, id, draftVersionId);

    // Assert
    expect(noRoute.map((a) => [a.status, a.json.code])).toEqual([
      [404, 'route.notFound'],
      [404, 'route.notFound'],
    ]);
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.publishInvalid');
    expect(refused.json.details).toEqual([
      { field: 'listId', message: `list ${org.listId} no longer exists` },
      { field: 'audienceTagId', message: `tag ${org.tagId} no longer exists` },
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('for a series, its segment cannot be deleted while its draft holds it (400 segment.inUse); gone all the same (removed by hand), publish names audienceSegmentId', async () => {
    // Arrange
    const client = await createApiClient();
    const org = await organization(client);
    const segmentId = await segmentOf(client, org);
    const created = await createSeries(client, org, {
      audienceSegmentId: segmentId,
    });
    const { id, draftVersionId } = created.json.data;
    await addEmail(client, org, id, draftVersionId);

    // Act
    const inUse = await client.delete(`/segments/${segmentId}`, {
      key: org.key,
    });
    await deleteItem(client, keys.segment(org.orgId, segmentId));
    const refused = await publish(client, org, id, draftVersionId);

    // Assert
    expect(inUse.status).toBe(400);
    expect(inUse.json.code).toBe('segment.inUse');
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.publishInvalid');
    expect(refused.json.details).toEqual([
      {
        field: 'audienceSegmentId',
        message: `segment ${segmentId} no longer exists`,
      },
    ]);
  });

  it.each(['list_joined', 'tag_added'] as const)(
    "for a %s sequence, its trigger's list or tag gone (removed by hand) is named as triggerTargetId",
    async (triggerType) => {
      // Arrange
      const client = await createApiClient();
      const org = await organization(client);
      const byList = triggerType === 'list_joined';
      const targetId = byList ? org.listId : org.tagId;
      const created = await createSequence(client, org, 'Welcome', {
        triggerType,
        triggerTargetId: targetId,
      });
      const { id, draftVersionId } = created.json.data;
      await addEmail(client, org, id, draftVersionId);
      await deleteItem(
        client,
        byList ? keys.list(org.orgId, targetId) : keys.tag(org.orgId, targetId),
      );
      const before = await client.scan();

      // Act
      const refused = await publish(client, org, id, draftVersionId);

      // Assert
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe('sequence.publishInvalid');
      expect(refused.json.details).toEqual([
        {
          field: 'triggerTargetId',
          message: `the trigger's ${byList ? 'list' : 'tag'} ${targetId} no longer exists`,
        },
      ]);
      expect(await client.scan()).toEqual(before);
    },
  );
});

describe('GET /series/{seriesId}: the series with its versions and nodes', () => {
  it("after a publish and with a draft open: the draft's calendar on the series, every version by number, the published version and the draft with their nodes", async () => {
    // Arrange: a clock the test moves, so every instant is known.
    const clock = fixedClock('2026-11-22T10:00:00.000Z');
    const client = await createApiClient({ clock });
    const org = await organization(client);
    const T0 = clock.now().toISOString();
    const created = await createSeries(client, org, { topicId: org.topicId });
    const { id, draftVersionId: v1 } = created.json.data;
    const node = (await addEmail(client, org, id, v1)).json.data;
    clock.advance(60_000);
    const T1 = clock.now().toISOString();
    await publish(client, org, id, v1);
    clock.advance(60_000);
    const T2 = clock.now().toISOString();
    const v2 = (
      await client.post(`/sequences/${id}/versions`, { key: org.key })
    ).json.data.id;
    const wait = (
      await client.post(`/sequences/${id}/versions/${v2}/nodes`, {
        key: org.key,
        body: { type: 'wait', waitHours: 48 },
      })
    ).json.data;
    await client.patch(`/series/${id}`, {
      key: org.key,
      body: { audienceTagId: org.tagId },
    });

    // Act
    const answer = await client.get(`/series/${id}`, { key: org.key });

    // Assert
    const email = (versionId: string, at: string) => ({
      id: node.id,
      versionId,
      position: 1,
      type: 'send_email',
      waitHours: null,
      subject: 'Welcome aboard',
      content: CONTENT,
      sendTimeMinutes: null,
      templateId: org.templateId,
      createdAt: at,
      updatedAt: at,
    });
    const calendar = {
      startsAt: DAY_1,
      listId: org.listId,
      audienceSegmentId: null,
    };
    const version1 = {
      id: v1,
      sequenceId: id,
      number: 1,
      status: 'published',
      nodeCount: 1,
      ...calendar,
      audienceTagId: null,
      createdAt: T0,
      updatedAt: T1,
      publishedAt: T1,
      supersededAt: null,
    };
    const version2 = {
      id: v2,
      sequenceId: id,
      number: 2,
      status: 'draft',
      nodeCount: 2,
      ...calendar,
      audienceTagId: org.tagId,
      createdAt: T2,
      updatedAt: T2,
      publishedAt: null,
      supersededAt: null,
    };
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({
      id,
      name: 'Course',
      status: 'paused',
      topicId: org.topicId,
      publishedVersionId: v1,
      draftVersionId: v2,
      createdAt: T0,
      updatedAt: T2,
      ...calendar,
      audienceTagId: org.tagId,
      versions: [version1, version2],
      published: { ...version1, nodes: [email(v1, T0)] },
      draft: {
        ...version2,
        nodes: [
          email(v2, T2),
          {
            id: wait.id,
            versionId: v2,
            position: 2,
            type: 'wait',
            waitHours: 48,
            subject: null,
            content: null,
            sendTimeMinutes: null,
            templateId: null,
            createdAt: T2,
            updatedAt: T2,
          },
        ],
      },
    });
  });
});

describe('Audience: bulk import rule 1 ("no sequence enrolment, even for subscribed lines or added tags")', () => {
  it('POST /lists/{listId}/contacts/bulk into the list of an active list_joined sequence, with the tag of an active tag_added one, creates no journey; a single add and a tag call do', async () => {
    // Arrange: two active sequences, one per trigger.
    const client = await createApiClient();
    const org = await organization(client);
    const activate = async (trigger: {
      triggerType: string;
      triggerTargetId: string;
    }) => {
      const created = await createSequence(client, org, 'Welcome', trigger);
      const { id, draftVersionId } = created.json.data;
      await addEmail(client, org, id, draftVersionId);
      await publish(client, org, id, draftVersionId);
      await client.patch(`/sequences/${id}`, {
        key: org.key,
        body: { status: 'active' },
      });
      return id as string;
    };
    const byList = await activate({
      triggerType: 'list_joined',
      triggerTargetId: org.listId,
    });
    const byTag = await activate({
      triggerType: 'tag_added',
      triggerTargetId: org.tagId,
    });
    const journey = (sequenceId: string, contactId: string) =>
      client.deps.enrolments.get(org.orgId, sequenceId, contactId);

    // Act
    const imported = await client.post(`/lists/${org.listId}/contacts/bulk`, {
      key: org.key,
      body: {
        contacts: [
          {
            email: 'imported@example.test',
            status: 'subscribed',
            tags: ['Trial'],
          },
        ],
      },
    });
    const single = await client.post(`/lists/${org.listId}/contacts`, {
      key: org.key,
      body: { email: 'single@example.test', doubleOptIn: false },
    });
    const singleId = single.json.data.id as string;
    await client.post(`/contacts/${singleId}/tags`, {
      key: org.key,
      body: { name: 'Trial' },
    });
    await client.events.settle();

    // Assert
    expect(imported.json.data).toMatchObject({ created: 1, rejected: 0 });
    const importedId = (
      await client.deps.contacts.get(
        org.orgId,
        org.listId,
        'imported@example.test',
      )
    )?.id as string;
    expect(await journey(byList, importedId)).toBeUndefined();
    expect(await journey(byTag, importedId)).toBeUndefined();
    expect(await journey(byList, singleId)).toMatchObject({
      status: 'active',
    });
    expect(await journey(byTag, singleId)).toMatchObject({ status: 'active' });
  });
});
