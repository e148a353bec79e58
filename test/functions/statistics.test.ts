/**
 * Statistics a marketer can trust, through the API (issue 33, §3): SES's
 * events of a campaign's and a sequence's mail, as the events consumer
 * takes them in batches, read back as a campaign's statistics (opens and
 * clicks of a person and of a machine apart, by mailbox provider), a
 * sequence's steps' (GET /sequences/{sequenceId}/stats) and the
 * organization's months (GET /stats).
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { eventsConsumer } from '../../functions/events/consumer.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { fixedClock, publishDns } from '../support/dynamo.ts';
import { lambdaContext } from '../support/events.ts';

const SENT = '2026-05-04T09:00:00.000Z';
const at = (seconds: number) =>
  new Date(Date.parse(SENT) + seconds * 1000).toISOString();

const APPLE_PROXY = 'Mozilla/5.0';
const GMAIL_PROXY =
  'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** The mail of one message, tagged as the senders tag it. */
const mailOf = (
  orgId: string,
  to: string,
  tags: Record<string, string>,
): SesEvent['mail'] => ({
  messageId: `ses-${randomUUID()}`,
  timestamp: SENT,
  destination: [to],
  tags: Object.fromEntries(
    Object.entries({ org: orgId, contact: randomUUID(), ...tags }).map(
      ([name, value]) => [name, [value]],
    ),
  ),
});

/** SES's events of one message: its send, delivery, opens and clicks. */
const eventsOf = (
  mail: SesEvent['mail'],
  engagement: (
    | { open: number; agent: string }
    | { click: number; link: string; agent?: string; ip?: string }
  )[] = [],
): SesEvent[] => {
  const to = mail.destination[0] ?? '';
  return [
    { eventType: 'Send', mail },
    {
      eventType: 'Delivery',
      mail,
      delivery: { timestamp: at(1), recipients: [to] },
    },
    ...engagement.map(
      (e): SesEvent =>
        'open' in e
          ? {
              eventType: 'Open',
              mail,
              open: {
                timestamp: at(e.open),
                userAgent: e.agent,
                ipAddress: '82.64.1.2',
              },
            }
          : {
              eventType: 'Click',
              mail,
              click: {
                timestamp: at(e.click),
                link: `https://shop.example/${e.link}`,
                userAgent: e.agent ?? BROWSER,
                ipAddress: e.ip ?? '82.64.1.2',
              },
            },
    ),
  ];
};

/** The events consumer over the client's deps, one batch per call. */
const consume = async (client: ApiClient, events: SesEvent[]) => {
  const handler = createConsumerHandler(
    {
      ...client.deps,
      deadLetters: { send: async () => {} },
    },
    eventsConsumer,
  );
  // The delivery first, as SES publishes it; then the rest, one batch.
  const batch = (of: SesEvent[]): SQSEvent => ({
    Records: of.map((event, i) => ({
      messageId: `m-${i}-${randomUUID()}`,
      receiptHandle: `h-${i}`,
      body: JSON.stringify(event),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'sender',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:events',
      awsRegion: 'eu-west-1',
    })),
  });
  const first = events.filter(
    (e) => e.eventType !== 'Open' && e.eventType !== 'Click',
  );
  const then = events.filter(
    (e) => e.eventType === 'Open' || e.eventType === 'Click',
  );
  for (const part of [first, then]) {
    const answer = await handler(batch(part), lambdaContext());
    expect(answer.batchItemFailures).toEqual([]);
  }
};

const NO_PROVIDER = {
  sent: 0,
  delivered: 0,
  bounces: 0,
  complaints: 0,
  opens: 0,
  clicks: 0,
  rates: { bounce: 0, complaint: 0, open: 0, click: 0 },
};

/** An organization, its campaign's three readers' mail and a sequence's. */
const setup = async () => {
  const clock = fixedClock('2026-05-04T09:30:00.000Z');
  const client = await createApiClient({ clock });
  const org = await createOrganizationWithKeys(client, 'Trust Co');
  const list = await client.post('/lists', {
    key: org.ownerKey,
    body: { name: 'Readers' },
  });
  const sequence = await client.post('/sequences', {
    key: org.ownerKey,
    body: {
      name: 'Welcome',
      triggerType: 'list_joined',
      triggerTargetId: list.json.data.id,
    },
  });
  const template = await client.post('/templates', {
    key: org.ownerKey,
    body: {
      name: 'News',
      defaultSubject: 'News',
      content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    },
  });
  const draft = await client.post('/campaigns', {
    key: org.ownerKey,
    body: {
      name: 'Spring',
      templateId: template.json.data.id,
      listId: list.json.data.id,
    },
  });
  // Its events are made up: what SES would publish had it been sent.
  const campaignId = draft.json.data.id as string;
  const sequenceId = sequence.json.data.id as string;
  const campaign = { kind: 'campaign', campaign: campaignId };
  const step = (n: number) => ({
    kind: 'sequence',
    sequence: sequenceId,
    step: String(n),
  });
  return { client, clock, org, campaignId, sequenceId, campaign, step };
};

describe('statistics a marketer can trust, through the API', () => {
  it("GET /campaigns/{id}/stats keeps the spec's fields and adds a person's and a machine's opens and clicks, the human rates and each provider's figures", async () => {
    // Arrange: an Apple Mail reader (its proxy opens), a Gmail reader who
    // opens and clicks, an Outlook.com reader behind a scanner (every link
    // at once, at delivery) who clicks for real later.
    const { client, org, campaignId, campaign } = await setup();
    const orgId = org.orgId;
    await consume(client, [
      ...eventsOf(mailOf(orgId, 'ana@icloud.com', campaign), [
        { open: 4, agent: APPLE_PROXY },
        { open: 7200, agent: APPLE_PROXY },
      ]),
      ...eventsOf(mailOf(orgId, 'bob@gmail.com', campaign), [
        { open: 3600, agent: GMAIL_PROXY },
        { click: 3660, link: 'sale' },
      ]),
      ...eventsOf(mailOf(orgId, 'cy@outlook.com', campaign), [
        { click: 2, link: 'sale', ip: '40.107.22.56' },
        { click: 2.1, link: 'lookbook', ip: '40.107.22.56' },
        { click: 2.2, link: 'unsubscribe', ip: '40.107.22.56' },
        { click: 9000, link: 'lookbook' },
      ]),
    ]);

    // Act
    const answer = await client.get(`/campaigns/${campaignId}/stats`, {
      key: org.memberKey,
    });

    // Assert
    expect(answer.status).toBe(200);
    const stats = answer.json.data;
    expect(stats).toMatchObject({
      delivered: 3,
      opens: {
        total: 3,
        unique: 2,
        human: { total: 1, unique: 1 },
        machine: { total: 2, unique: 1 },
      },
      clicks: {
        total: 5,
        unique: 2,
        human: { total: 2, unique: 2 },
        scanner: { total: 3, unique: 1 },
      },
      // One reader a person opened for, two clicked for, of 3 delivered.
      rates: { open: 0.3333, click: 0.6667, clickToOpen: 1, basis: 'human' },
    });
    expect(stats.byProvider).toEqual({
      apple: {
        ...NO_PROVIDER,
        sent: 1,
        delivered: 1,
      },
      gmail: {
        sent: 1,
        delivered: 1,
        bounces: 0,
        complaints: 0,
        opens: 1,
        clicks: 1,
        rates: { bounce: 0, complaint: 0, open: 1, click: 1 },
      },
      microsoft: {
        sent: 1,
        delivered: 1,
        bounces: 0,
        complaints: 0,
        opens: 0,
        clicks: 1,
        rates: { bounce: 0, complaint: 0, open: 0, click: 1 },
      },
      yahoo: NO_PROVIDER,
      other: NO_PROVIDER,
    });
  });

  it('GET /sequences/{id}/stats answers each step that sent mail, in step order; another organization’s sequence is a 404', async () => {
    // Arrange
    const { client, org, sequenceId, step } = await setup();
    const other = await createOrganizationWithKeys(client, 'Other Co');
    // A company domain on Microsoft 365: its MX says so.
    const company = `c${randomUUID().slice(0, 8)}.example`;
    await publishDns({
      name: company,
      type: 'MX',
      value: `${company.replace('.', '-')}.mail.protection.outlook.com`,
      priority: 0,
    });
    await consume(client, [
      ...eventsOf(mailOf(org.orgId, `kai@${company}`, step(2))),
      ...eventsOf(mailOf(org.orgId, 'dee@yahoo.com', step(2)), [
        { open: 600, agent: BROWSER },
      ]),
      ...eventsOf(mailOf(org.orgId, 'eve@gmail.com', step(1)), [
        { open: 2, agent: GMAIL_PROXY },
        { click: 900, link: 'start' },
      ]),
      ...eventsOf(mailOf(org.orgId, 'fay@example.test', step(1))),
    ]);

    // Act
    const answer = await client.get(`/sequences/${sequenceId}/stats`, {
      key: org.memberKey,
    });
    const foreign = await client.get(`/sequences/${sequenceId}/stats`, {
      key: other.ownerKey,
    });

    // Assert
    expect(answer.status).toBe(200);
    const { steps } = answer.json.data;
    expect(answer.json.data.sequenceId).toBe(sequenceId);
    expect(steps.map((s: { step: number }) => s.step)).toEqual([1, 2]);
    expect(steps[0]).toMatchObject({
      step: 1,
      sent: 2,
      delivered: 2,
      // Gmail's proxy within 3 s of delivery: a prefetch, not a read.
      opens: { total: 1, human: { unique: 0 }, machine: { unique: 1 } },
      clicks: {
        total: 1,
        human: { unique: 1 },
        links: [{ url: 'https://shop.example/start', total: 1, unique: 1 }],
      },
      rates: { open: 0, click: 0.5 },
      byProvider: { gmail: { sent: 1, clicks: 1 }, other: { sent: 1 } },
    });
    expect(steps[1]).toMatchObject({
      step: 2,
      opens: { human: { total: 1, unique: 1 } },
      byProvider: {
        yahoo: { delivered: 1, opens: 1 },
        microsoft: { sent: 1, delivered: 1 },
      },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('sequence.notFound');
  });

  it("GET /stats sums the organization's campaign and step mail by the months asked; another organization sees none of it", async () => {
    // Arrange: May's campaign mail, June's step mail.
    const { client, clock, org, campaign, step } = await setup();
    const other = await createOrganizationWithKeys(client, 'Other Co');
    await consume(client, [
      ...eventsOf(mailOf(org.orgId, 'gus@gmail.com', campaign), [
        { open: 300, agent: GMAIL_PROXY },
      ]),
      ...eventsOf(mailOf(org.orgId, 'hal@icloud.com', campaign), [
        { open: 5, agent: APPLE_PROXY },
      ]),
    ]);
    clock.set('2026-06-02T08:00:00.000Z');
    await consume(
      client,
      eventsOf(mailOf(org.orgId, 'ivy@outlook.com', step(1)), [
        { click: 30, link: 'start' },
      ]),
    );
    const stats = (query?: Record<string, string>, key = org.memberKey) =>
      client.get('/stats', { key, ...(query ? { query } : {}) });

    // Act
    const all = await stats();
    const may = await stats({ from: '2026-05', to: '2026-05' });
    const fromJune = await stats({ from: '2026-06' });
    const foreign = await stats(undefined, other.ownerKey);

    // Assert
    expect(all.status).toBe(200);
    expect(all.json.data).toMatchObject({
      from: null,
      to: null,
      sent: 3,
      delivered: 3,
      opens: {
        total: 2,
        human: { unique: 1 },
        machine: { unique: 1 },
      },
      clicks: { total: 1, human: { unique: 1 } },
      rates: { open: 0.3333, click: 0.3333, basis: 'human' },
      byProvider: {
        gmail: { sent: 1, opens: 1 },
        apple: { sent: 1, opens: 0 },
        microsoft: { sent: 1, clicks: 1 },
      },
    });
    expect(all.json.data.clicks.links).toBeUndefined();
    expect(may.json.data).toMatchObject({
      from: '2026-05',
      to: '2026-05',
      sent: 2,
      clicks: { total: 0 },
    });
    expect(fromJune.json.data).toMatchObject({
      from: '2026-06',
      sent: 1,
      opens: { total: 0 },
    });
    expect(foreign.json.data).toMatchObject({ sent: 0, delivered: 0 });
  });

  it('GET /stats refuses a month that is not one, and from after to, naming the field', async () => {
    // Arrange
    const { client, org } = await setup();

    // Act
    const after = await client.get('/stats', {
      key: org.memberKey,
      query: { from: '2026-07', to: '2026-06' },
    });
    const malformed = await client.get('/stats', {
      key: org.memberKey,
      query: { to: '2026-13' },
    });

    // Assert
    expect(after.status).toBe(400);
    expect(after.json.details).toEqual([
      { field: 'from', message: 'must not be after to' },
    ]);
    expect(malformed.status).toBe(400);
    expect(malformed.json.details).toEqual([
      { field: 'to', message: 'must be a month, YYYY-MM' },
    ]);
  });
});
