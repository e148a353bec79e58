/**
 * Control of a campaign after its send was accepted (issue 33), through
 * the API with the asynchronous half running: unscheduling a scheduled
 * campaign. The spec's five statuses keep their meaning.
 */
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
