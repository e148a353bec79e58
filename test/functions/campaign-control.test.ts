/**
 * Control of a campaign after its send was accepted (issue 33), through
 * the API with the asynchronous half running (the local provider sends 14
 * a second): unscheduling a scheduled campaign; pausing a send, resuming
 * it, cancelling it. The spec's five statuses keep their meaning.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readSentLog } from '../../shared/adapters/local/simulated-ses-events.ts';
import {
  campaignStack,
  createCampaign,
  eventually,
  organization,
} from '../support/campaigns.ts';

/** Ten minutes after the stack's clock, moved `moved` minutes ahead. */
const inTenMinutes = (moved = 0) =>
  new Date(Date.now() + (moved + 10) * 60_000).toISOString();

describe('campaigns: unschedule', () => {
  it('takes a scheduled campaign back to draft; its schedule fires no send, and it can be scheduled again', async () => {
    // Arrange
    const { client, sentLogFile, advanceMinutes } = await campaignStack();
    const org = await organization(client);
    const id = await createCampaign(client, org);
    await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: inTenMinutes() },
    });

    // Act
    const answer = await client.post(`/campaigns/${id}/unschedule`, {
      key: org.key,
    });
    advanceMinutes(11);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await client.get(`/campaigns/${id}`, { key: org.key });
    const sentMeanwhile = (await readSentLog(sentLogFile)).filter((m) =>
      org.emails.includes(m.to),
    );
    const again = await client.post(`/campaigns/${id}/send`, {
      key: org.key,
      body: { scheduledAt: inTenMinutes(11) },
    });
    advanceMinutes(11);
    const done = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data?.status === 'sent',
    );

    // Assert
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({
      id,
      status: 'draft',
      scheduledAt: null,
    });
    expect(after.json.data).toMatchObject({
      status: 'draft',
      scheduledAt: null,
    });
    expect(sentMeanwhile).toEqual([]);
    expect(again.status).toBe(202);
    expect(done.json.data.progress).toMatchObject({ sent: 3, total: 3 });
  });

  it('answers 409 campaign.notScheduled for a draft, 403 to a member and 404 for another organization’s campaign, changing nothing', async () => {
    // Arrange
    const { client } = await campaignStack();
    const org = await organization(client);
    const other = await organization(client);
    const id = await createCampaign(client, org);
    const scheduled = await createCampaign(client, org);
    await client.post(`/campaigns/${scheduled}/send`, {
      key: org.key,
      body: { scheduledAt: inTenMinutes() },
    });

    // Act
    const draft = await client.post(`/campaigns/${id}/unschedule`, {
      key: org.key,
    });
    const member = await client.post(`/campaigns/${scheduled}/unschedule`, {
      key: org.memberKey,
    });
    const foreign = await client.post(`/campaigns/${scheduled}/unschedule`, {
      key: other.key,
    });
    const still = await client.get(`/campaigns/${scheduled}`, { key: org.key });

    // Assert
    expect(draft.status).toBe(409);
    expect(draft.json.code).toBe('campaign.notScheduled');
    expect(member.status).toBe(403);
    expect(foreign.status).toBe(404);
    expect(still.json.data.status).toBe('scheduled');
  });
});

/** Addresses enough for a send of several seconds at the local rate. */
const many = (count: number) => {
  const run = randomUUID().slice(0, 8);
  return Array.from({ length: count }, (_, i) => `r${i}-${run}@example.test`);
};

/** What the local provider sent to these addresses, oldest first. */
const sentTo = async (file: string, emails: readonly string[]) => {
  const ours = new Set(emails);
  return (await readSentLog(file)).filter((m) => ours.has(m.to));
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bound of issue 33: no provider call starts later than this after a pause's answer. */
const PAUSE_BOUND_MS = 5_000;

describe('campaigns: pause, resume, cancel', () => {
  it('pause: no mail starts going out more than 5 s after the answer; resume sends the rest, each recipient exactly once, after two pauses', async () => {
    // Arrange: 60 recipients, about four seconds at 14 a second.
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client, { contacts: many(60) });
    const id = await createCampaign(client, org);
    await client.post(`/campaigns/${id}/send`, { key: org.key });
    const pauses: { answeredAt: number; sentBefore: number; status: number }[] =
      [];
    const lastSentAfter: number[] = [];

    // Act: pause once some went out, twice, resuming in between.
    for (const threshold of [8, 25]) {
      await eventually(
        () => sentTo(sentLogFile, org.emails),
        (sent) => sent.length >= threshold,
      );
      const paused = await client.post(`/campaigns/${id}/pause`, {
        key: org.key,
      });
      const answeredAt = Date.now();
      pauses.push({
        answeredAt,
        sentBefore: (await sentTo(sentLogFile, org.emails)).length,
        status: paused.status,
      });
      expect(paused.json.data).toMatchObject({
        status: 'sending',
        paused: { reason: 'requested' },
      });
      await sleep(PAUSE_BOUND_MS + 1_000);
      const sent = await sentTo(sentLogFile, org.emails);
      lastSentAfter.push(
        Math.max(...sent.map((m) => Date.parse(m.sentAt))) - answeredAt,
      );
      const resumed = await client.post(`/campaigns/${id}/resume`, {
        key: org.key,
      });
      expect(resumed.status).toBe(200);
      expect(resumed.json.data.paused).toBeNull();
    }
    const done = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (read) => read.json.data?.status === 'sent',
      60_000,
    );
    const sent = await sentTo(sentLogFile, org.emails);

    // Assert
    expect(pauses.map((p) => p.status)).toEqual([200, 200]);
    for (const late of lastSentAfter) expect(late).toBeLessThan(PAUSE_BOUND_MS);
    expect(pauses[0]?.sentBefore).toBeLessThan(60);
    expect(sent).toHaveLength(60);
    expect(new Set(sent.map((m) => m.to)).size).toBe(60);
    expect(done.json.data.progress).toMatchObject({
      total: 60,
      sent: 60,
      failed: 0,
      skipped: 0,
    });
  }, 120_000);

  it('cancel: nothing more goes out; the campaign fails with reason cancelled and its progress says what went out', async () => {
    // Arrange
    const { client, sentLogFile } = await campaignStack();
    const org = await organization(client, { contacts: many(60) });
    const id = await createCampaign(client, org);
    await client.post(`/campaigns/${id}/send`, { key: org.key });
    await eventually(
      () => sentTo(sentLogFile, org.emails),
      (sent) => sent.length >= 8,
    );

    // Act
    const cancelled = await client.post(`/campaigns/${id}/cancel`, {
      key: org.key,
    });
    const answeredAt = Date.now();
    await sleep(PAUSE_BOUND_MS + 1_000);
    const sent = await sentTo(sentLogFile, org.emails);
    const read = await eventually(
      () => client.get(`/campaigns/${id}`, { key: org.key }),
      (answer) => answer.json.data?.progress.sent === sent.length,
    );
    const again = await client.post(`/campaigns/${id}/send`, { key: org.key });

    // Assert
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.data).toMatchObject({
      status: 'failed',
      paused: null,
      failure: { reason: 'cancelled' },
    });
    expect(
      Math.max(...sent.map((m) => Date.parse(m.sentAt))) - answeredAt,
    ).toBeLessThan(PAUSE_BOUND_MS);
    expect(sent.length).toBeLessThan(60);
    expect(new Set(sent.map((m) => m.to)).size).toBe(sent.length);
    expect(read.json.data).toMatchObject({
      status: 'failed',
      progress: { total: 60, sent: sent.length },
    });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('campaign.failed');
  }, 120_000);

  it('answers 409 to a pause, resume or cancel that does not fit the state, 403 to a member, 404 to another organization — changing nothing', async () => {
    // Arrange
    const { client } = await campaignStack();
    const org = await organization(client);
    const other = await organization(client);
    const id = await createCampaign(client, org);

    // Act
    const pauseDraft = await client.post(`/campaigns/${id}/pause`, {
      key: org.key,
    });
    const resumeDraft = await client.post(`/campaigns/${id}/resume`, {
      key: org.key,
    });
    const cancelDraft = await client.post(`/campaigns/${id}/cancel`, {
      key: org.key,
    });
    const member = await client.post(`/campaigns/${id}/cancel`, {
      key: org.memberKey,
    });
    const foreign = await client.post(`/campaigns/${id}/pause`, {
      key: other.key,
    });
    const still = await client.get(`/campaigns/${id}`, { key: org.key });

    // Assert
    expect(
      [pauseDraft, resumeDraft, cancelDraft].map((a) => a.json.code),
    ).toEqual([
      'campaign.notSending',
      'campaign.notSending',
      'campaign.notSending',
    ]);
    expect(member.status).toBe(403);
    expect(foreign.status).toBe(404);
    expect(still.json.data).toMatchObject({ status: 'draft', paused: null });
  });
});
