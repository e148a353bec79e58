/**
 * What `npm start` shows of the split (issue 33, §3): a campaign sent on
 * the local stack's asynchronous half, its simulated SES set by `admin
 * local provider simulate` to open every message through Apple's privacy
 * proxy and scan every link as a gateway, reads back with its opens a
 * machine's, its clicks a scanner's, and its rates at 0.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import { setSimulation } from '../../shared/adapters/local/local-email-provider.ts';
import {
  type ApiAnswer,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';

const started: LocalAsync[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((half) => half.stop()));
});

/** Waits until `check` holds, polling; returns the last answer read. */
const eventually = async (
  read: () => Promise<ApiAnswer>,
  check: (answer: ApiAnswer) => boolean,
  ms = 20_000,
): Promise<ApiAnswer> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await read();
    if (check(answer) || Date.now() > deadline) return answer;
    // Under the key's rate limit (120 requests a minute).
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
};

describe('the local stack simulates machine opens and scanner clicks', () => {
  it('a campaign to readers all on Apple Mail and behind a gateway shows only machines: its human rates are 0', async () => {
    // Arrange: the asynchronous half over a provider state that simulates.
    const scratch = inject('scratchDir');
    const id = randomUUID().slice(0, 8);
    const providerStateFile = join(scratch, `provider-${id}.json`);
    await setSimulation(providerStateFile, {
      machineOpens: 1,
      scannerClicks: 1,
    });
    const sentLogFile = join(scratch, `sent-${id}.jsonl`);
    const asyncHalf = await prepareLocalAsync({
      sqsEndpoint: inject('sqsEndpoint'),
      sentLogFile,
      providerStateFile,
      clock: { now: () => new Date() },
      queuePrefix: `e${id}-`,
    });
    const client = await createApiClient({
      asyncHalf: { ...asyncHalf, sentLogFile },
    });
    asyncHalf.start(client.deps);
    started.push(asyncHalf);
    const org = await createOrganizationWithKeys(client, 'Simulated Co');
    const key = org.ownerKey;
    const list = await client.post('/lists', { key, body: { name: 'All' } });
    for (const name of ['ann', 'bob', 'cy']) {
      await client.post(`/lists/${list.json.data.id}/contacts`, {
        key,
        body: { email: `${name}-${id}@example.test`, doubleOptIn: false },
      });
    }
    const template = await client.post('/templates', {
      key,
      body: {
        name: 'News',
        defaultSubject: 'News',
        content:
          '<p>News</p><a href="https://shop.example/sale">Sale</a><a href="https://shop.example/new">New</a><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
      },
    });
    const campaign = await client.post('/campaigns', {
      key,
      body: {
        name: 'Simulated',
        templateId: template.json.data.id,
        listId: list.json.data.id,
      },
    });
    const campaignId = campaign.json.data.id as string;

    // Act
    await client.post(`/campaigns/${campaignId}/send`, { key });

    const stats = await eventually(
      () => client.get(`/campaigns/${campaignId}/stats`, { key }),
      ({ json }) =>
        json.data?.delivered === 3 &&
        json.data?.opens.machine.total === 6 &&
        json.data?.clicks.scanner.total === 9,
    );

    // Assert: each reader's proxy open and gateway open; its three links.
    expect(stats.json.data).toMatchObject({
      delivered: 3,
      opens: {
        total: 6,
        unique: 3,
        human: { total: 0, unique: 0 },
        machine: { total: 6, unique: 3 },
      },
      clicks: {
        total: 9,
        unique: 3,
        human: { total: 0, unique: 0 },
        scanner: { total: 9, unique: 3 },
      },
      rates: { open: 0, click: 0, basis: 'human' },
      byProvider: { other: { sent: 3, delivered: 3, opens: 0, clicks: 0 } },
    });
  });
});
