/**
 * Campaigns through the API, in process, with the asynchronous half as the
 * local stack runs it: the dispatcher and senders on the embedded SQS
 * engine, the simulated SES events, the local scheduler on a movable clock.
 * Test names quote the spec's rules and the rows of its state table.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readSentLog } from '../../shared/adapters/local/simulated-ses-events.ts';
import { LINK_PURPOSES } from '../../shared/links/public-links.ts';
import {
  CONTENT,
  campaignStack,
  createCampaign,
  eventually,
  organization,
} from '../support/campaigns.ts';
import { mailTo, tokenOf } from '../support/mailbox.ts';

describe('campaigns: drafts', () => {
  it('POST /campaigns creates a draft with its own copy of the content; later template edits do not change it', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    await client.patch(`/templates/${org.templateId}`, {
      key: org.key,
      body: { content: '<p>changed {{unsubscribeUrl}}</p>' },
    });
    const read = await client.get(`/campaigns/${id}`, { key: org.key });
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({
      status: 'draft',
      subject: 'News for {{firstName}}',
      content: CONTENT,
      recipientCount: 3,
      progress: { total: 0, sent: 0, failed: 0, skipped: 0 },
      sendingEnabled: true,
      scheduledAt: null,
      sendingIdentityId: null,
    });
  });

  it('answers 404 for any id of another organization, and creates nothing', async () => {
    const { client } = await campaignStack();
    const a = await organization(client);
    const b = await organization(client);
    const foreign = await client.post('/campaigns', {
      key: a.key,
      body: { name: 'x', templateId: b.templateId, listId: a.listId },
    });
    const foreignList = await client.post('/campaigns', {
      key: a.key,
      body: { name: 'x', templateId: a.templateId, listId: b.listId },
    });
    const listed = await client.get('/campaigns', { key: a.key });
    expect(foreign.status).toBe(404);
    expect(foreignList.status).toBe(404);
    expect(listed.json.pagination.total).toBe(0);
  });

  it('recipientCount is readable before sending: subscribed contacts of the list (∩ tag) minus topic opt-outs', async () => {
    const { client } = await campaignStack();
    const org = await organization(client, {
      contacts: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test'],
    });
    const [a, b, c, d] = org.contactIds as [string, string, string, string];
    const key = org.key;
    const tag = await client.post('/tags', { key, body: { name: 'vip' } });
    for (const id of [a, b, c]) {
      await client.post(`/contacts/${id}/tags`, { key, body: { name: 'vip' } });
    }
    await client.post(`/contacts/${d}/unsubscribe`, { key });
    const topic = await client.post('/topics', {
      key,
      body: { name: 'Deals' },
    });
    await client.post(`/topics/${topic.json.data.id}/opt-outs`, {
      key,
      body: { contactId: b },
    });
    const whole = await createCampaign(client, org);
    const tagged = await createCampaign(client, org, {
      tagId: tag.json.data.id,
      topicId: topic.json.data.id,
    });
    const read = (id: string) => client.get(`/campaigns/${id}`, { key });
    expect((await read(whole)).json.data.recipientCount).toBe(3);
    expect((await read(tagged)).json.data.recipientCount).toBe(2);
    void c;
  });

  it('PATCH edits drafts only (null sendingIdentityId means the default); DELETE removes a draft only', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const identity = await client.post('/settings/identities', {
      key: org.key,
      body: { senderEmail: 'news@campaign.example' },
    });
    const id = await createCampaign(client, org, {
      sendingIdentityId: identity.json.data.id,
    });
    const edited = await client.patch(`/campaigns/${id}`, {
      key: org.key,
      body: { subject: 'Hi', sendingIdentityId: null, content: CONTENT },
    });
    expect(edited.status).toBe(200);
    expect(edited.json.data).toMatchObject({
      subject: 'Hi',
      sendingIdentityId: null,
    });
    const sentId = await createCampaign(client, org);
    await client.post(`/campaigns/${sentId}/send`, { key: org.key });
    const late = await client.patch(`/campaigns/${sentId}`, {
      key: org.key,
      body: { name: 'Too late' },
    });
    const gone = await client.delete(`/campaigns/${sentId}`, { key: org.key });
    const deleted = await client.delete(`/campaigns/${id}`, { key: org.key });
    expect(late.status).toBe(409);
    expect(late.json.code).toBe('campaign.notDraft');
    expect(gone.status).toBe(409);
    expect(deleted.status).toBe(200);
    expect(
      (await client.get(`/campaigns/${id}`, { key: org.key })).status,
    ).toBe(404);
  });

  it('address book rule 4: an address named by a campaign cannot be deleted (400 naming the campaign) until it points elsewhere', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    await client.post('/settings/identities', {
      key: org.key,
      body: { senderEmail: 'main@campaign.example' },
    });
    const spare = await client.post('/settings/identities', {
      key: org.key,
      body: { senderEmail: 'spare@campaign.example' },
    });
    const spareId = spare.json.data.id as string;
    const id = await createCampaign(client, org, {
      sendingIdentityId: spareId,
    });
    const refused = await client.delete(`/settings/identities/${spareId}`, {
      key: org.key,
    });
    await client.patch(`/campaigns/${id}`, {
      key: org.key,
      body: { sendingIdentityId: null },
    });
    const allowed = await client.delete(`/settings/identities/${spareId}`, {
      key: org.key,
    });
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('identity.usedByCampaigns');
    expect(refused.json.error).toContain(id);
    expect(allowed.status).toBe(200);
  });
});

describe('campaigns: POST /campaigns/{id}/send, rules and state table', () => {
  it('rule 1: a date without an offset is refused with 400 (never read as UTC)', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const answer = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: '2030-01-01T10:00:00' },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.details[0].field).toBe('scheduledAt');
  });

  it('rule 2: an instant in the past or nearer than the minimum lead time is refused with 400; nothing is scheduled', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const past = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: '2020-01-01T10:00:00Z' },
    });
    const near = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: new Date(Date.now() + 30_000).toISOString() },
    });
    const read = await client.get(`/campaigns/${id}`, { key: org.key });
    expect(past.status).toBe(400);
    expect(past.json.code).toBe('campaign.scheduleInvalid');
    expect(near.status).toBe(400);
    expect(read.json.data.status).toBe('draft');
  });

  it('draft + scheduledAt: 202 scheduled, the instant stored to the minute with seconds dropped; scheduled + scheduledAt: 400', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const at = new Date(Date.now() + 3 * 3_600_000);
    at.setUTCSeconds(42, 123);
    const answer = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: at.toISOString().replace('Z', '+00:00') },
    });
    const again = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: at.toISOString() },
    });
    const read = await client.get(`/campaigns/${id}`, { key: org.key });
    const minute = new Date(at);
    minute.setUTCSeconds(0, 0);
    expect(answer.status).toBe(202);
    expect(answer.json.data).toEqual({ campaignId: id, status: 'scheduled' });
    expect(again.status).toBe(400);
    expect(again.json.code).toBe('campaign.notDraftToSchedule');
    expect(read.json.data).toMatchObject({
      status: 'scheduled',
      scheduledAt: minute.toISOString(),
    });
  });

  it('rule 3: content without {{unsubscribeUrl}} answers 400 and nothing is sent or scheduled; {{topicOptOutUrl}} without a topic is refused', async () => {
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client, {
      content: '<p>No way out</p>',
    });
    const id = await createCampaign(client, org);
    const now = await client.post(`/campaigns/${id}/send`, { key: org.key });
    await client.patch(`/campaigns/${id}`, {
      key: org.key,
      body: {
        content:
          '<a href="{{unsubscribeUrl}}">u</a><a href="{{topicOptOutUrl}}">t</a>',
      },
    });
    const topicless = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
    });
    const read = await client.get(`/campaigns/${id}`, { key: org.key });
    expect(now.status).toBe(400);
    expect(now.json.code).toBe('template.unsubscribeMissing');
    expect(topicless.status).toBe(400);
    expect(topicless.json.code).toBe('message.topicRequired');
    expect(read.json.data.status).toBe('draft');
    expect(await readSentLog(sentLogFile)).toEqual([]);
  });

  it('draft → sending → sent: every recipient gets one email with unsubscribe headers and a signed link; progress is exact', async () => {
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const answer = await client.post(`/campaigns/${id}/send`, { key: org.key });
    const done = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data.status === 'sent',
    );
    expect(answer.status).toBe(202);
    expect(answer.json.data).toEqual({
      campaignId: id,
      status: 'send_requested',
    });
    expect(done.json.data).toMatchObject({
      status: 'sent',
      recipientCount: 3,
      progress: { total: 3, sent: 3, failed: 0, skipped: 0, percent: 100 },
    });
    const sent = (await readSentLog(sentLogFile)).filter((m) =>
      org.emails.includes(m.to),
    );
    expect(sent.map((m) => m.to).sort()).toEqual([...org.emails].sort());
    expect(sent[0]?.tags).toMatchObject({
      kind: ['campaign'],
      campaign: [id],
    });
    // The mail as the reader gets it: one-click unsubscribe headers, a
    // signed link naming the reader and the campaign.
    const [mail] = await mailTo(org.emails[0] as string);
    const header = (name: string) =>
      mail?.headers?.find((h) => h.name.toLowerCase() === name.toLowerCase())
        ?.value;
    expect(mail?.subject).toBe(`News for ${org.emails[0]?.split('@')[0]}`);
    expect(header('List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const link = /<(.+)>/.exec(header('List-Unsubscribe') ?? '')?.[1] ?? '';
    const claims = await client.deps.links.verify(
      LINK_PURPOSES.unsubscribe,
      tokenOf(link),
    );
    expect(claims).toMatchObject({ o: org.orgId, c: org.contactIds[0], k: id });
    expect(mail?.body.html).toContain(link.replace(/&/g, '&amp;'));
  });

  it('rule 5 and the sent row: send twice never sends twice — a second call answers 409 and no mail is duplicated', async () => {
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const [first, second] = await Promise.all([
      client.post(`/campaigns/${id}/send`, { key: org.key }),
      client.post(`/campaigns/${id}/send`, { key: org.key }),
    ]);
    await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data.status === 'sent',
    );
    const after = await client.post(`/campaigns/${id}/send`, { key: org.key });
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([202, 409]);
    expect(after.status).toBe(409);
    expect(after.json.code).toBe('campaign.sent');
    const sent = (await readSentLog(sentLogFile)).filter((m) =>
      org.emails.includes(m.to),
    );
    expect(sent).toHaveLength(3);
  });

  it('held: mass sending off answers 202 and the campaign stays a draft with progress.total 0 (sendingEnabled false)', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    await client.admin('sending', 'disable');
    try {
      const answer = await client.post(`/campaigns/${id}/send`, {
        key: org.key,
      });
      const read = await client.get(`/campaigns/${id}`, { key: org.key });
      expect(answer.status).toBe(202);
      expect(read.json.data).toMatchObject({
        status: 'draft',
        sendingEnabled: false,
        progress: { total: 0 },
      });
    } finally {
      await client.admin('sending', 'enable');
    }
  });

  it('held: the organization’s 24-hour quota below recipientCount answers 202 and the campaign is unchanged (sendingEnabled true)', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    await client.admin('org', 'quota', '--org', org.orgId, '--max24h', '2');
    const id = await createCampaign(client, org);
    const before = await client.get(`/campaigns/${id}`, { key: org.key });
    const answer = await client.post(`/campaigns/${id}/send`, { key: org.key });
    const after = await client.get(`/campaigns/${id}`, { key: org.key });
    expect(answer.status).toBe(202);
    expect(after.json.data).toEqual(before.json.data);
    expect(after.json.data.sendingEnabled).toBe(true);
  });

  it('an organization that cannot send answers 409 sending.blocked naming its blockers', async () => {
    const { client } = await campaignStack();
    const org = await organization(client);
    await client.admin('org', 'disallow', '--org', org.orgId);
    const id = await createCampaign(client, org);
    const answer = await client.post(`/campaigns/${id}/send`, { key: org.key });
    expect(answer.status).toBe(409);
    expect(answer.json.code).toBe('sending.blocked');
    expect(answer.json.details).toEqual([
      { field: 'blockers', message: 'organization_not_allowed' },
      { field: 'blockers', message: 'no_sender_identity' },
    ]);
  });

  it('scheduled: the campaign starts when the local clock reaches its minute, and is sent', async () => {
    const { client, advanceMinutes } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const at = new Date(Date.now() + 10 * 60_000).toISOString();
    await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: at },
    });
    advanceMinutes(11);
    const done = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data.status === 'sent',
    );
    expect(done.json.data.progress).toMatchObject({ sent: 3, total: 3 });
  });

  it('scheduled + send now starts now; the pending schedule then does nothing', async () => {
    const { client, sentLogFile, advanceMinutes } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: new Date(Date.now() + 10 * 60_000).toISOString() },
    });
    const now = await client.post(`/campaigns/${id}/send`, { key: org.key });
    await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data.status === 'sent',
    );
    advanceMinutes(11);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(now.status).toBe(202);
    const sent = (await readSentLog(sentLogFile)).filter((m) =>
      org.emails.includes(m.to),
    );
    expect(sent).toHaveLength(3);
  });

  it('an unsubscribe that lands before a recipient’s send is honoured (skipped)', async () => {
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    await client.post(`/contacts/${org.contactIds[1]}/unsubscribe`, {
      key: org.key,
    });
    await client.post(`/campaigns/${id}/send`, { key: org.key });
    const done = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data.status === 'sent',
    );
    const sent = (await readSentLog(sentLogFile)).map((m) => m.to);
    expect(done.json.data.progress).toMatchObject({ total: 2, sent: 2 });
    expect(sent).not.toContain(org.emails[1]);
  });
});

describe('campaigns: test send and stats', () => {
  it('POST /campaigns/{id}/test-send sends "[Test]" mail to each address and writes nothing', async () => {
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    const before = await client.get(`/campaigns/${id}`, { key: org.key });
    const qa = `qa-${randomUUID().slice(0, 8)}@example.test`;
    const answer = await client.post(`/campaigns/${id}/test-send`, {
      key: org.key,
      body: { emails: [qa, `boss-${randomUUID().slice(0, 8)}@example.test`] },
    });
    const after = await client.get(`/campaigns/${id}`, { key: org.key });
    const stats = await client.get(`/campaigns/${id}/stats`, { key: org.key });
    expect(answer.status).toBe(200);
    expect(answer.json.data.sent).toBe(2);
    expect(after.json.data).toEqual(before.json.data);
    expect(stats.json.data).toMatchObject({ sent: 0, delivered: 0 });
    const sent = await readSentLog(sentLogFile);
    expect(sent.map((m) => m.tags.kind)).toEqual([['test'], ['test']]);
    const [mail] = await mailTo(qa);
    expect(mail?.subject).toBe('[Test] News for ');
  });

  it('GET /campaigns/{id}/stats counts deliveries and bounces from SES events', async () => {
    const { client } = await campaignStack();
    const org = await organization(client, {
      contacts: [
        'success@simulator.amazonses.com',
        'bounce@simulator.amazonses.com',
      ],
    });
    const id = await createCampaign(client, org);
    await client.post(`/campaigns/${id}/send`, { key: org.key });
    const stats = await eventually(
      () => client.get(`/campaigns/${id}/stats`, { key: org.key }),
      // SES's events may be counted before the batch's progress is.
      (read) =>
        read.json.data.sent === 2 &&
        read.json.data.delivered === 1 &&
        read.json.data.bounces.hard === 1,
    );
    expect(stats.json.data).toMatchObject({
      sent: 2,
      delivered: 1,
      bounces: { hard: 1, soft: 0, total: 1 },
    });
  });
});
