/**
 * Sequences and series as resources, through the API in process: creation
 * and the plan's cap, status, versions, nodes and their families, publish
 * checks, and deletion. Test names quote the spec's rules (section
 * "Sequences and series", the state tables "Sequence and series status"
 * and "Version of a sequence or series"). Tenancy and roles of every route
 * are in the route matrix.
 */
import { describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient } from '../support/api-client.ts';
import { CONTENT, type Org, organization } from '../support/sequences-api.ts';

const createSequence = (client: ApiClient, org: Org, name = 'Welcome') =>
  client.post('/sequences', {
    key: org.key,
    body: { name, triggerType: 'list_joined', triggerTargetId: org.listId },
  });

/** A sequence with one email node (from the template) in its draft. */
const sequenceWithEmail = async (client: ApiClient, org: Org) => {
  const created = await createSequence(client, org);
  const id = created.json.data.id as string;
  const draftId = (await client.get(`/sequences/${id}`, { key: org.key })).json
    .data.draftVersionId as string;
  const node = await client.post(`/sequences/${id}/versions/${draftId}/nodes`, {
    key: org.key,
    body: { type: 'send_email', templateId: org.templateId },
  });
  return { id, draftId, nodeId: node.json.data.id as string };
};

const publish = (client: ApiClient, org: Org, id: string, versionId: string) =>
  client.post(`/sequences/${id}/versions/${versionId}/publish`, {
    key: org.key,
  });

/** The items of one sequence's own partition. */
const itemsOf = async (client: ApiClient, sequenceId: string) =>
  (await client.scan()).filter((item) =>
    String(item.PK).endsWith(`#SEQUENCE#${sequenceId}`),
  );

describe('POST /sequences', () => {
  it('creates the sequence and its version 1 draft in one transaction; answers 201; the sequence is paused, publishedVersionId null', async () => {
    const client = await createApiClient();
    const org = await organization(client);

    const created = await createSequence(client, org);

    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: 'Welcome',
      status: 'paused',
      publishedVersionId: null,
      kind: 'sequence',
      triggerType: 'list_joined',
      triggerTargetId: org.listId,
    });
    const versions = await client.get(
      `/sequences/${created.json.data.id}/versions`,
      { key: org.key },
    );
    expect(versions.json.data).toHaveLength(1);
    expect(versions.json.data[0]).toMatchObject({
      id: created.json.data.draftVersionId,
      number: 1,
      status: 'draft',
      nodeCount: 0,
    });
  });

  it('refuses fixed_date, an unknown triggerType, a missing name and a malformed id with 400 naming the field', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const cases = [
      [
        { name: 'A', triggerType: 'fixed_date', triggerTargetId: org.listId },
        'triggerType',
      ],
      [
        { name: 'A', triggerType: 'opened', triggerTargetId: org.listId },
        'triggerType',
      ],
      [{ triggerType: 'list_joined', triggerTargetId: org.listId }, 'name'],
      [
        { name: 'A', triggerType: 'list_joined', triggerTargetId: 'list-1' },
        'triggerTargetId',
      ],
    ] as const;
    const before = await client.scan();

    for (const [body, field] of cases) {
      const answer = await client.post('/sequences', { key: org.key, body });
      expect(answer.status, field).toBe(400);
      expect(
        answer.json.details.map((d: { field: string }) => d.field),
      ).toContain(field);
    }
    expect(await client.scan()).toEqual(before);
  });

  it('answers 404 when the trigger target belongs to another organization or does not exist, and writes nothing', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const other = await organization(client, 'Other Co');
    const before = await client.scan();

    const foreignList = await client.post('/sequences', {
      key: org.key,
      body: {
        name: 'A',
        triggerType: 'list_joined',
        triggerTargetId: other.listId,
      },
    });
    const foreignTag = await client.post('/sequences', {
      key: org.key,
      body: {
        name: 'A',
        triggerType: 'tag_added',
        triggerTargetId: other.tagId,
      },
    });

    expect(foreignList.status).toBe(404);
    expect(foreignList.json.code).toBe('list.notFound');
    expect(foreignTag.status).toBe(404);
    expect(foreignTag.json.code).toBe('tag.notFound');
    expect(await client.scan()).toEqual(before);
  });

  it('Limits: the plan cap answers 400 naming the limit and the current count; a paused sequence counts; series do not', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    await client.admin('org', 'plan', '--org', org.orgId, '--sequences', '2');
    await createSequence(client, org, 'One');
    await createSequence(client, org, 'Two');
    const before = await client.scan();

    const third = await createSequence(client, org, 'Three');

    expect(third.status).toBe(400);
    expect(third.json.code).toBe('sequence.capReached');
    expect(third.json.error).toContain('allows 2 sequences');
    expect(third.json.error).toContain('has 2');
    expect(await client.scan()).toEqual(before);
    const series = await client.post('/series', {
      key: org.key,
      body: { name: 'Course', listId: org.listId },
    });
    expect(series.status).toBe(201);
  });

  it('Limits: the cap is checked inside the creating transaction: concurrent creates cannot pass it', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    await client.admin('org', 'plan', '--org', org.orgId, '--sequences', '3');

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createSequence(client, org, `S${i}`)),
    );

    const created = answers.filter((a) => a.status === 201).length;
    expect(created).toBeGreaterThan(0);
    expect(created).toBeLessThanOrEqual(3);
    expect(answers.every((a) => [201, 400, 409].includes(a.status))).toBe(true);
    const list = await client.get('/sequences', { key: org.key });
    expect(list.json.pagination.total).toBe(created);
    expect(list.json.data).toHaveLength(created);
  });

  it('admin org plan refuses a cap that is not a whole number from 0 to 10,000', async () => {
    const client = await createApiClient();
    const org = await organization(client);

    await expect(
      client.admin('org', 'plan', '--org', org.orgId, '--sequences', '-1'),
    ).rejects.toThrow(/sequences/);
    await expect(
      client.admin('org', 'plan', '--org', org.orgId, '--sequences', 'many'),
    ).rejects.toThrow(/sequences/);
    const set = await client.admin(
      'org',
      'plan',
      '--org',
      org.orgId,
      '--sequences',
      '0',
    );
    expect(set.sequenceCap).toBe(0);
    expect((await createSequence(client, org)).json.code).toBe(
      'sequence.capReached',
    );
  });
});

describe('Sequence and series status', () => {
  it('paused → PATCH status active is refused until a version is published; then active, then paused again', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);

    const early = await client.patch(`/sequences/${id}`, {
      key: org.key,
      body: { status: 'active' },
    });
    expect(early.status).toBe(400);
    expect(early.json.code).toBe('sequence.notPublished');

    expect((await publish(client, org, id, draftId)).status).toBe(200);
    const active = await client.patch(`/sequences/${id}`, {
      key: org.key,
      body: { status: 'active', name: 'Onboarding' },
    });
    expect(active.status).toBe(200);
    expect(active.json.data).toMatchObject({
      status: 'active',
      name: 'Onboarding',
      publishedVersionId: draftId,
      draftVersionId: null,
    });
    const paused = await client.patch(`/sequences/${id}`, {
      key: org.key,
      body: { status: 'paused' },
    });
    expect(paused.json.data.status).toBe('paused');
  });

  it('DELETE removes the sequence with its versions and nodes; tags are untouched; the cap counts one less', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);
    await publish(client, org, id, draftId);
    await client.post(`/sequences/${id}/versions`, { key: org.key });
    expect(await itemsOf(client, id)).not.toHaveLength(0);

    const deleted = await client.delete(`/sequences/${id}`, { key: org.key });

    expect(deleted.status).toBe(200);
    expect(deleted.json.data).toEqual({ id });
    expect(await itemsOf(client, id)).toEqual([]);
    expect(
      (await client.get(`/sequences/${id}`, { key: org.key })).status,
    ).toBe(404);
    const tags = await client.get('/tags', { key: org.key });
    expect(tags.json.data.map((t: { id: string }) => t.id)).toContain(
      org.tagId,
    );
    expect(
      (await client.get('/sequences', { key: org.key })).json.pagination.total,
    ).toBe(0);
  });
});

describe('Version of a sequence or series', () => {
  it('POST …/versions opens a draft that copies the published version (nodes keep their ids); one draft at a time (409)', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    await publish(client, org, id, draftId);

    const opened = await client.post(`/sequences/${id}/versions`, {
      key: org.key,
    });
    const again = await client.post(`/sequences/${id}/versions`, {
      key: org.key,
    });

    expect(opened.status).toBe(201);
    expect(opened.json.data).toMatchObject({
      number: 2,
      status: 'draft',
      nodeCount: 1,
    });
    expect(opened.json.data.nodes).toEqual([
      expect.objectContaining({
        id: nodeId,
        subject: 'Welcome aboard',
        position: 1,
      }),
    ]);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('sequence.draftOpen');
  });

  it('publishing a newer version supersedes the published one; GET …/versions shows each status', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);
    await publish(client, org, id, draftId);
    const v2 = (
      await client.post(`/sequences/${id}/versions`, { key: org.key })
    ).json.data.id;

    const published = await publish(client, org, id, v2);

    expect(published.status).toBe(200);
    const versions = await client.get(`/sequences/${id}/versions`, {
      key: org.key,
    });
    expect(
      versions.json.data.map((v: { number: number; status: string }) => [
        v.number,
        v.status,
      ]),
    ).toEqual([
      [1, 'superseded'],
      [2, 'published'],
    ]);
    const detail = await client.get(`/sequences/${id}`, { key: org.key });
    expect(detail.json.data.publishedVersionId).toBe(v2);
    expect(detail.json.data.published.nodes).toHaveLength(1);
    expect(detail.json.data.draft).toBeNull();
  });

  it('a published version never changes: node edits and publishing again answer 400 sequence.versionNotDraft', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    await publish(client, org, id, draftId);
    const before = await client.scan();

    const edit = await client.patch(
      `/sequences/${id}/versions/${draftId}/nodes/${nodeId}`,
      { key: org.key, body: { subject: 'Changed' } },
    );
    const add = await client.post(
      `/sequences/${id}/versions/${draftId}/nodes`,
      {
        key: org.key,
        body: { type: 'wait', waitHours: 24 },
      },
    );
    const again = await publish(client, org, id, draftId);

    for (const answer of [edit, add, again]) {
      expect(answer.status).toBe(400);
      expect(answer.json.code).toBe('sequence.versionNotDraft');
    }
    expect(await client.scan()).toEqual(before);
  });

  it('DELETE of the draft discards it and its nodes; the published version stays', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);
    await publish(client, org, id, draftId);
    const v2 = (
      await client.post(`/sequences/${id}/versions`, { key: org.key })
    ).json.data.id;

    const discarded = await client.delete(`/sequences/${id}/versions/${v2}`, {
      key: org.key,
    });
    const published = await client.delete(
      `/sequences/${id}/versions/${draftId}`,
      {
        key: org.key,
      },
    );

    expect(discarded.status).toBe(200);
    expect(published.status).toBe(400);
    const detail = (await client.get(`/sequences/${id}`, { key: org.key })).json
      .data;
    expect(detail.draftVersionId).toBeNull();
    expect(detail.versions.map((v: { id: string }) => v.id)).toEqual([draftId]);
    const nodesOfV2 = (await itemsOf(client, id)).filter((item) =>
      String(item.SK).startsWith(`NODE#${v2}`),
    );
    expect(nodesOfV2).toEqual([]);
    // The next draft is numbered after every version ever opened.
    const v3 = await client.post(`/sequences/${id}/versions`, { key: org.key });
    expect(v3.json.data.number).toBe(3);
  });
});

describe('Nodes', () => {
  it('a new send_email node has default content and no subject; with templateId, the template content and default subject', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);

    const plain = await client.post(
      `/sequences/${id}/versions/${draftId}/nodes`,
      {
        key: org.key,
        body: { type: 'send_email' },
      },
    );
    const wait = await client.post(
      `/sequences/${id}/versions/${draftId}/nodes`,
      {
        key: org.key,
        body: { type: 'wait', waitHours: 72 },
      },
    );

    expect(plain.status).toBe(201);
    expect(plain.json.data).toMatchObject({
      type: 'send_email',
      subject: null,
      templateId: null,
      sendTimeMinutes: null,
      position: 2,
    });
    expect(plain.json.data.content).toContain('{{unsubscribeUrl}}');
    expect(wait.json.data).toMatchObject({
      type: 'wait',
      waitHours: 72,
      position: 3,
      content: null,
    });
    const version = await client.get(`/sequences/${id}/versions/${draftId}`, {
      key: org.key,
    });
    expect(
      version.json.data.nodes.map((n: { type: string }) => n.type),
    ).toEqual(['send_email', 'send_email', 'wait']);
    expect(version.json.data.nodes[0]).toMatchObject({
      subject: 'Welcome aboard',
      content: CONTENT,
      templateId: org.templateId,
    });
  });

  it('refuses a node without a valid type or waitHours (400 naming the field)', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId } = await sequenceWithEmail(client, org);
    const path = `/sequences/${id}/versions/${draftId}/nodes`;

    const unknown = await client.post(path, {
      key: org.key,
      body: { type: 'sms' },
    });
    const noWait = await client.post(path, {
      key: org.key,
      body: { type: 'wait' },
    });
    const zero = await client.post(path, {
      key: org.key,
      body: { type: 'wait', waitHours: 0 },
    });

    expect(unknown.json.details[0].field).toBe('type');
    expect(noWait.json.details[0].field).toBe('waitHours');
    expect(zero.json.details[0].field).toBe('waitHours');
  });

  it('PATCH: fields come in families; two families in one call are refused and nothing changes', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    const path = `/sequences/${id}/versions/${draftId}/nodes/${nodeId}`;
    const before = await client.scan();

    const both = await client.patch(path, {
      key: org.key,
      body: { subject: 'Hi', sendTimeMinutes: 540 },
    });
    const wrongType = await client.patch(path, {
      key: org.key,
      body: { waitHours: 5 },
    });

    expect(both.status).toBe(400);
    expect(
      both.json.details.map((d: { field: string }) => d.field).sort(),
    ).toEqual(['sendTimeMinutes', 'subject']);
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.details[0].field).toBe('waitHours');
    expect(await client.scan()).toEqual(before);

    const message = await client.patch(path, {
      key: org.key,
      body: { subject: 'Day one', content: CONTENT },
    });
    const timing = await client.patch(path, {
      key: org.key,
      body: { sendTimeMinutes: 540 },
    });
    expect(message.json.data).toMatchObject({
      subject: 'Day one',
      content: CONTENT,
    });
    expect(timing.json.data).toMatchObject({
      subject: 'Day one',
      sendTimeMinutes: 540,
    });
    const cleared = await client.patch(path, {
      key: org.key,
      body: { sendTimeMinutes: null },
    });
    expect(cleared.json.data.sendTimeMinutes).toBeNull();
  });

  it('PATCH: sendTimeMinutes is a minute of the day (0 to 1439); content that does not render is a 400', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    const path = `/sequences/${id}/versions/${draftId}/nodes/${nodeId}`;

    const late = await client.patch(path, {
      key: org.key,
      body: { sendTimeMinutes: 1440 },
    });
    const broken = await client.patch(path, {
      key: org.key,
      body: { content: '<p>{% if %}</p>' },
    });

    expect(late.status).toBe(400);
    expect(late.json.details[0].field).toBe('sendTimeMinutes');
    expect(broken.status).toBe(400);
    expect(broken.json.details[0].field).toBe('content');
  });

  it('DELETE removes a node of a draft; the next ones move up a position', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    await client.post(`/sequences/${id}/versions/${draftId}/nodes`, {
      key: org.key,
      body: { type: 'wait', waitHours: 24 },
    });

    const removed = await client.delete(
      `/sequences/${id}/versions/${draftId}/nodes/${nodeId}`,
      { key: org.key },
    );
    const missing = await client.delete(
      `/sequences/${id}/versions/${draftId}/nodes/${nodeId}`,
      { key: org.key },
    );

    expect(removed.status).toBe(200);
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('sequenceNode.notFound');
    const version = await client.get(`/sequences/${id}/versions/${draftId}`, {
      key: org.key,
    });
    expect(version.json.data.nodeCount).toBe(1);
    expect(version.json.data.nodes).toEqual([
      expect.objectContaining({ type: 'wait', position: 1 }),
    ]);
  });
});

describe('Publish', () => {
  it('validates the whole version and answers 400 naming each problem: a missing subject, no unsubscribe link, {{topicOptOutUrl}} without a topic', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const created = await createSequence(client, org);
    const id = created.json.data.id;
    const draftId = created.json.data.draftVersionId;
    const nodes = `/sequences/${id}/versions/${draftId}/nodes`;
    await client.post(nodes, { key: org.key, body: { type: 'send_email' } });
    const second = await client.post(nodes, {
      key: org.key,
      body: { type: 'send_email', templateId: org.templateId },
    });
    await client.patch(`${nodes}/${second.json.data.id}`, {
      key: org.key,
      body: {
        content: '<p>Hi</p><a href="{{topicOptOutUrl}}">Less of this</a>',
      },
    });
    const before = await client.scan();

    const refused = await publish(client, org, id, draftId);

    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('sequence.publishInvalid');
    const problems = refused.json.details.map(
      (d: { field: string; message: string }) => `${d.field}: ${d.message}`,
    );
    expect(problems).toEqual([
      expect.stringMatching(/^nodes\.0\.subject: .*no subject/),
      expect.stringMatching(/^nodes\.1\.content: .*\{\{unsubscribeUrl\}\}/),
      expect.stringMatching(
        /^nodes\.1\.content: .*\{\{topicOptOutUrl\}\}.*no topic/,
      ),
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('refuses a version with no send_email node', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const created = await createSequence(client, org);
    const { id, draftVersionId } = created.json.data;
    await client.post(`/sequences/${id}/versions/${draftVersionId}/nodes`, {
      key: org.key,
      body: { type: 'wait', waitHours: 1 },
    });

    const refused = await publish(client, org, id, draftVersionId);

    expect(refused.json.details).toEqual([
      expect.objectContaining({ field: 'nodes' }),
    ]);
  });

  it('Topics: {{topicOptOutUrl}} publishes once the sequence has a topic, and that topic cannot then be removed', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const { id, draftId, nodeId } = await sequenceWithEmail(client, org);
    await client.patch(`/sequences/${id}/versions/${draftId}/nodes/${nodeId}`, {
      key: org.key,
      body: {
        content: `${CONTENT}<a href="{{topicOptOutUrl}}">Fewer tips</a>`,
      },
    });
    await client.patch(`/sequences/${id}`, {
      key: org.key,
      body: { topicId: org.topicId },
    });

    expect((await publish(client, org, id, draftId)).status).toBe(200);
    const removed = await client.patch(`/sequences/${id}`, {
      key: org.key,
      body: { topicId: null },
    });
    expect(removed.status).toBe(400);
    expect(removed.json.code).toBe('sequence.topicInUse');
  });
});

describe('Series', () => {
  it('POST /series creates the series and its version 1 draft; 201; paused; a triggerType in the body changes nothing', async () => {
    const client = await createApiClient();
    const org = await organization(client);

    const created = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        startsAt: '2099-03-01T09:00:00+01:00',
        audienceTagId: org.tagId,
        triggerType: 'tag_added',
      },
    });

    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: 'Course',
      status: 'paused',
      startsAt: '2099-03-01T08:00:00.000Z',
      listId: org.listId,
      audienceSegmentId: null,
      audienceTagId: org.tagId,
      topicId: null,
      publishedVersionId: null,
    });
    const asSequence = await client.get(`/sequences/${created.json.data.id}`, {
      key: org.key,
    });
    expect(asSequence.json.data).toMatchObject({
      kind: 'series',
      triggerType: null,
    });
    expect(
      (await client.get('/sequences', { key: org.key })).json.pagination.total,
    ).toBe(0);
    expect((await client.get('/series', { key: org.key })).json.data).toEqual([
      expect.objectContaining({ id: created.json.data.id, listId: org.listId }),
    ]);
  });

  it('POST /series answers 400 for an unreadable startsAt and 404 for a list of another organization', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const other = await organization(client, 'Other Co');

    const unreadable = await client.post('/series', {
      key: org.key,
      body: { name: 'Course', listId: org.listId, startsAt: 'next monday' },
    });
    const noOffset = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        startsAt: '2099-03-01T09:00:00',
      },
    });
    const foreign = await client.post('/series', {
      key: org.key,
      body: { name: 'Course', listId: other.listId },
    });

    expect(unreadable.json.details[0].field).toBe('startsAt');
    expect(noOffset.json.details[0].field).toBe('startsAt');
    expect(foreign.status).toBe(404);
  });

  it('PATCH /series: name, topic and status on the series; startsAt and the audience on the draft; a calendar field with no draft open is a 400, nothing changes and no draft is opened', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const created = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        startsAt: '2099-03-01T09:00:00Z',
      },
    });
    const { id, draftVersionId } = created.json.data;
    await client.post(`/sequences/${id}/versions/${draftVersionId}/nodes`, {
      key: org.key,
      body: { type: 'send_email', templateId: org.templateId },
    });

    const edited = await client.patch(`/series/${id}`, {
      key: org.key,
      body: {
        name: 'Spring course',
        startsAt: '2099-04-01T09:00:00Z',
        audienceTagId: org.tagId,
      },
    });
    expect(edited.status).toBe(200);
    expect(edited.json.data).toMatchObject({
      name: 'Spring course',
      startsAt: '2099-04-01T09:00:00.000Z',
      audienceTagId: org.tagId,
    });

    expect((await publish(client, org, id, draftVersionId)).status).toBe(200);
    const before = await client.scan();
    const noDraft = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { name: 'Renamed', startsAt: '2099-05-01T09:00:00Z' },
    });
    expect(noDraft.status).toBe(400);
    expect(noDraft.json.code).toBe('sequence.noDraft');
    expect(noDraft.json.details).toEqual([
      expect.objectContaining({ field: 'startsAt' }),
    ]);
    expect(await client.scan()).toEqual(before);
    const renamed = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { name: 'Renamed', status: 'active' },
    });
    expect(renamed.json.data).toMatchObject({
      name: 'Renamed',
      status: 'active',
      startsAt: '2099-04-01T09:00:00.000Z',
    });
  });

  it('publish refuses a series without startsAt, or with one in the past', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const created = await client.post('/series', {
      key: org.key,
      body: { name: 'Course', listId: org.listId },
    });
    const { id, draftVersionId } = created.json.data;
    await client.post(`/sequences/${id}/versions/${draftVersionId}/nodes`, {
      key: org.key,
      body: { type: 'send_email', templateId: org.templateId },
    });

    const unset = await publish(client, org, id, draftVersionId);
    await client.patch(`/series/${id}`, {
      key: org.key,
      body: { startsAt: '2020-01-01T00:00:00Z' },
    });
    const past = await publish(client, org, id, draftVersionId);

    expect(unset.status).toBe(400);
    expect(unset.json.details).toEqual([
      expect.objectContaining({ field: 'startsAt' }),
    ]);
    expect(past.json.details[0].message).toContain('in the past');
  });

  it('DELETE /series answers 400 for a sequence id, and DELETE /sequences 400 for a series id; nothing is deleted', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const sequence = (await createSequence(client, org)).json.data.id;
    const series = (
      await client.post('/series', {
        key: org.key,
        body: { name: 'C', listId: org.listId },
      })
    ).json.data.id;
    const before = await client.scan();

    const wrongSeries = await client.delete(`/series/${sequence}`, {
      key: org.key,
    });
    const wrongSequence = await client.delete(`/sequences/${series}`, {
      key: org.key,
    });
    const patchSeries = await client.patch(`/series/${sequence}`, {
      key: org.key,
      body: { name: 'X' },
    });

    expect(wrongSeries.json.code).toBe('sequence.notSeries');
    expect(wrongSequence.json.code).toBe('sequence.isSeries');
    expect(patchSeries.json.code).toBe('sequence.notSeries');
    expect(await client.scan()).toEqual(before);
    expect(
      (await client.delete(`/series/${series}`, { key: org.key })).status,
    ).toBe(200);
    expect(await itemsOf(client, series)).toEqual([]);
  });
});

describe('Series and segments', () => {
  const segmentOf = async (client: ApiClient, org: Org, listId: string) =>
    (
      await client.post('/segments', {
        key: org.key,
        body: {
          name: 'Subscribed',
          listId,
          match: 'all',
          conditions: [
            { field: 'status', operator: 'is', value: 'subscribed' },
          ],
        },
      })
    ).json.data.id as string;

  it("audienceSegmentId must be a segment of the series' list (400 segment.listMismatch, nothing written)", async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const otherList = (
      await client.post('/lists', { key: org.key, body: { name: 'Other' } })
    ).json.data.id;
    const segmentId = await segmentOf(client, org, otherList);
    const before = await client.scan();

    const refused = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        audienceSegmentId: segmentId,
      },
    });

    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('segment.listMismatch');
    expect(refused.json.details[0].field).toBe('audienceSegmentId');
    expect(await client.scan()).toEqual(before);
  });

  it('a segment in use by a series cannot be deleted (400 naming the series) until no live version holds it', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const first = await segmentOf(client, org, org.listId);
    const second = await segmentOf(client, org, org.listId);
    const created = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        startsAt: '2099-03-01T09:00:00Z',
        audienceSegmentId: first,
      },
    });
    const { id, draftVersionId } = created.json.data;
    await client.post(`/sequences/${id}/versions/${draftVersionId}/nodes`, {
      key: org.key,
      body: { type: 'send_email', templateId: org.templateId },
    });
    await publish(client, org, id, draftVersionId);

    const inUse = await client.delete(`/segments/${first}`, { key: org.key });
    expect(inUse.status).toBe(400);
    expect(inUse.json.code).toBe('segment.inUse');
    expect(inUse.json.error).toContain('Course');

    // A draft narrowing by another segment: the published version still holds the first.
    const v2 = (
      await client.post(`/sequences/${id}/versions`, { key: org.key })
    ).json.data.id;
    const patched = await client.patch(`/series/${id}`, {
      key: org.key,
      body: { audienceSegmentId: second, name: 'Spring course' },
    });
    expect(patched.json.data.audienceSegmentId).toBe(second);
    const stillHeld = await client.delete(`/segments/${first}`, {
      key: org.key,
    });
    expect(stillHeld.json.error).toContain('Spring course');
    expect(
      (await client.delete(`/segments/${second}`, { key: org.key })).json.code,
    ).toBe('segment.inUse');

    // Publishing the draft lets the first go; deleting the series, the second.
    await publish(client, org, id, v2);
    expect(
      (await client.delete(`/segments/${first}`, { key: org.key })).status,
    ).toBe(200);
    expect(
      (await client.delete(`/series/${id}`, { key: org.key })).status,
    ).toBe(200);
    expect(
      (await client.delete(`/segments/${second}`, { key: org.key })).status,
    ).toBe(200);
  });

  it('the only draft of a series never published is not discarded (400 sequence.onlyVersion: it holds the list), so its segment stays held; deleting the series lets it go', async () => {
    const client = await createApiClient();
    const org = await organization(client);
    const segmentId = await segmentOf(client, org, org.listId);
    const created = await client.post('/series', {
      key: org.key,
      body: {
        name: 'Course',
        listId: org.listId,
        audienceSegmentId: segmentId,
      },
    });
    const { id, draftVersionId } = created.json.data;

    const discarded = await client.delete(
      `/sequences/${id}/versions/${draftVersionId}`,
      { key: org.key },
    );
    const held = await client.delete(`/segments/${segmentId}`, {
      key: org.key,
    });
    const series = await client.get(`/series/${id}`, { key: org.key });
    await client.delete(`/series/${id}`, { key: org.key });

    expect([discarded.status, discarded.json.code]).toEqual([
      400,
      'sequence.onlyVersion',
    ]);
    expect(held.json.code).toBe('segment.inUse');
    expect(series.json.data).toMatchObject({
      listId: org.listId,
      draftVersionId,
    });
    expect(
      (await client.delete(`/segments/${segmentId}`, { key: org.key })).status,
    ).toBe(200);
  });
});
