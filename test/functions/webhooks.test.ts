/**
 * Webhook endpoints and their delivery log through the pipeline (issue 32,
 * §1): registered with a secret shown once, listed, read, changed,
 * disabled and enabled, deleted, their secret rolled; the URL rules; the
 * cap; roles and tenancy. A test call and a redelivery go through the
 * deliveries consumer's service to a receiver on loopback, signed so that
 * the `standardwebhooks` package verifies them.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoWebhookSubscriptions } from '../../shared/adapters/aws/dynamo-webhook-subscriptions.ts';
import { ValidationError } from '../../shared/errors.ts';
import { createWebhook } from '../../shared/webhooks/endpoints.ts';
import { MAX_WEBHOOKS } from '../../shared/webhooks/model.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { fixedClock, testEngineClient } from '../support/dynamo.ts';
import {
  recordingQueue,
  recordingScheduler,
  runDueDeliveries,
  startReceiver,
} from '../support/webhooks.ts';

describe('webhooks, through the pipeline', () => {
  // In the future: DynamoDB Local deletes items whose TTL is past.
  const clock = fixedClock('2030-05-06T10:00:00.000Z');
  const queue = recordingQueue(clock);
  const scheduler = recordingScheduler();
  let client: ApiClient;
  let org: TestOrganization;
  let other: TestOrganization;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    client = await createApiClient({
      clock,
      asyncHalf: {
        mailerWith: (mailer) => mailer,
        senders: {
          webhookDeliveries: queue,
          webhookFanout: { send: async () => {} },
          steps: { send: async () => {} },
        },
        scheduler,
      },
    });
    org = await createOrganizationWithKeys(client, 'Hooks');
    other = await createOrganizationWithKeys(client, 'Other hooks');
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await receiver.stop();
  });

  /** The deliveries consumer's deps: the client's, with the queue recorded. */
  const attemptDeps = () => ({
    ...client.deps,
    queues: { webhookDeliveries: queue },
  });

  const register = (body: object, key = org.ownerKey) => {
    clock.advance(1000);
    return client.post('/webhooks', { key, body });
  };

  const subscribed = (orgId: string) =>
    new DynamoWebhookSubscriptions({
      client: testEngineClient(),
      tableName: client.tableName,
    }).subscribedTypes(orgId);

  /** Verifies a received delivery with a secret, at the clock's time. */
  const verify = (
    secret: string,
    received: { headers: object; body: string },
  ) => {
    vi.useFakeTimers({ toFake: ['Date'], now: clock.now() });
    try {
      return new Webhook(secret).verify(
        received.body,
        received.headers as Record<string, string>,
      );
    } finally {
      vi.useRealTimers();
    }
  };

  it('registers an endpoint with its secret shown once, reads and lists it without', async () => {
    // Act
    const created = await register({
      url: 'https://hooks.example.com/in',
      events: ['contact.unsubscribed', 'contact.created'],
      description: ' CRM sync ',
    });
    const read = await client.get(`/webhooks/${created.json.data.id}`, {
      key: org.memberKey,
    });
    const listed = await client.get('/webhooks', { key: org.memberKey });

    // Assert
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      url: 'https://hooks.example.com/in',
      // In the catalogue's order.
      events: ['contact.created', 'contact.unsubscribed'],
      description: 'CRM sync',
      enabled: true,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
    });
    expect(created.json.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(read.json.data).toEqual(
      Object.fromEntries(
        Object.entries(created.json.data).filter(([name]) => name !== 'secret'),
      ),
    );
    expect(JSON.stringify(listed.json)).not.toContain('whsec_');
    expect(listed.json.data.map((w: { id: string }) => w.id)).toContain(
      created.json.data.id,
    );
    expect(await subscribed(org.orgId)).toEqual(
      new Set(['contact.created', 'contact.unsubscribed']),
    );
  });

  it('refuses a URL that is not allowed, naming url; https only by the AWS rules', async () => {
    // Act
    const answers = await Promise.all(
      [
        'https://10.1.2.3/in',
        'http://169.254.169.254/latest/meta-data',
        'https://user:secret@hooks.example.com/in',
        'https://hooks.example.com/in#x',
        'ftp://hooks.example.com/in',
        'not a url',
      ].map((url) => register({ url, events: ['contact.created'] })),
    );
    const https = createWebhook(
      {
        ...client.deps,
        webhookUrlRules: { httpsOnly: true, allowLoopback: false },
      },
      org.orgId,
      { url: 'http://hooks.example.com/in', events: ['contact.created'] },
    );

    // Assert
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(
        answer.json.details.map((d: { field: string }) => d.field),
      ).toEqual(['url']);
    }
    expect(answers[0]?.json.details[0].message).toContain('private');
    expect(answers[1]?.json.details[0].message).toContain('metadata');
    await expect(https).rejects.toThrow(ValidationError);
    await expect(https).rejects.toThrow('must be an https URL');
  });

  it('refuses an empty or unknown list of event types, and one that names a type twice (as keys refuse a scope twice)', async () => {
    // Arrange
    const endpoint = await register({
      url: 'https://a.example.com',
      events: ['contact.created'],
    });
    const twice = ['contact.created', 'mail.bounced', 'contact.created'];

    // Act
    const empty = await register({ url: 'https://a.example.com', events: [] });
    const unknown = await register({
      url: 'https://a.example.com',
      events: ['contact.exploded'],
    });
    const repeated = await register({
      url: 'https://a.example.com',
      events: twice,
    });
    const patched = await client.patch(`/webhooks/${endpoint.json.data.id}`, {
      key: org.ownerKey,
      body: { events: twice },
    });
    const read = await client.get(`/webhooks/${endpoint.json.data.id}`, {
      key: org.ownerKey,
    });

    // Assert
    expect(empty.status).toBe(400);
    expect(empty.json.details[0].field).toBe('events');
    expect(unknown.status).toBe(400);
    expect(unknown.json.details[0].field).toBe('events.0');
    for (const answer of [repeated, patched]) {
      expect(answer.status).toBe(400);
      expect(answer.json.code).toBe('request.invalid');
      expect(answer.json.details).toEqual([
        { field: 'events', message: 'must not name an event type twice' },
      ]);
    }
    expect(read.json.data.events).toEqual(['contact.created']);
  });

  it('lets members read and admins write; another organization’s endpoint is 404', async () => {
    // Arrange
    const created = await register({
      url: 'https://hooks.example.com/roles',
      events: ['mail.bounced'],
    });
    const id = created.json.data.id;

    // Act
    const byMember = await register(
      { url: 'https://hooks.example.com/x', events: ['mail.bounced'] },
      org.memberKey,
    );
    const patchByMember = await client.patch(`/webhooks/${id}`, {
      key: org.memberKey,
      body: { enabled: false },
    });
    const foreign = await Promise.all([
      client.get(`/webhooks/${id}`, { key: other.ownerKey }),
      client.patch(`/webhooks/${id}`, {
        key: other.ownerKey,
        body: { enabled: false },
      }),
      client.delete(`/webhooks/${id}`, { key: other.ownerKey }),
      client.post(`/webhooks/${id}/secret/roll`, { key: other.ownerKey }),
      client.get(`/webhooks/${id}/deliveries`, { key: other.ownerKey }),
      client.post(`/webhooks/${id}/test`, { key: other.ownerKey }),
    ]);

    // Assert
    expect(byMember.status).toBe(403);
    expect(patchByMember.status).toBe(403);
    expect(foreign.map((a) => [a.status, a.json.code])).toEqual(
      foreign.map(() => [404, 'webhook.notFound']),
    );
    expect(
      (await client.get(`/webhooks/${id}`, { key: org.ownerKey })).json.data
        .enabled,
    ).toBe(true);
  });

  it('disables with a reason, enables again clearing it, and moves the summary each time', async () => {
    // Arrange
    const created = await register({
      url: 'https://hooks.example.com/toggle',
      events: ['campaign.sent'],
    });
    const id = created.json.data.id;

    // Act
    const disabled = await client.patch(`/webhooks/${id}`, {
      key: org.ownerKey,
      body: { enabled: false, description: 'paused' },
    });
    const whileDisabled = await subscribed(org.orgId);
    const enabled = await client.patch(`/webhooks/${id}`, {
      key: org.ownerKey,
      body: {
        enabled: true,
        events: ['campaign.sent', 'campaign.failed'],
        description: null,
      },
    });

    // Assert
    expect(disabled.json.data).toMatchObject({
      enabled: false,
      disabledReason: 'Disabled through the API',
      disabledAt: clock.now().toISOString(),
      description: 'paused',
    });
    expect(whileDisabled.has('campaign.sent')).toBe(false);
    expect(enabled.json.data).toMatchObject({
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      description: null,
      events: ['campaign.sent', 'campaign.failed'],
    });
    expect((await subscribed(org.orgId)).has('campaign.failed')).toBe(true);
  });

  it('sends a test event through the pipeline: signed, verified by standardwebhooks, logged', async () => {
    // Arrange
    const created = await register({
      url: receiver.url('crm'),
      events: ['contact.unsubscribed'],
    });
    const { id, secret } = created.json.data;

    // Act
    const tested = await client.post(`/webhooks/${id}/test`, {
      key: org.ownerKey,
    });
    await runDueDeliveries(attemptDeps(), queue, scheduler);
    const log = await client.get(`/webhooks/${id}/deliveries`, {
      key: org.memberKey,
    });
    const detail = await client.get(
      `/webhooks/${id}/deliveries/${tested.json.data.id}`,
      { key: org.memberKey },
    );

    // Assert
    expect(tested.status).toBe(202);
    expect(tested.json.data).toMatchObject({
      eventType: 'contact.unsubscribed',
      status: 'pending',
      attempts: [],
    });
    const [delivery] = receiver.received.filter((r) => r.inbox === 'crm');
    if (!delivery) throw new Error('nothing was delivered');
    expect(verify(secret, delivery)).toMatchObject({
      id: tested.json.data.eventId,
      type: 'contact.unsubscribed',
      organizationId: org.orgId,
      test: true,
      data: { via: 'link', contact: { status: 'unsubscribed' } },
    });
    expect(delivery.headers).toMatchObject({
      'webhook-id': tested.json.data.eventId,
      'content-type': 'application/json',
      'user-agent': 'email-marketing-webhooks/1.0',
    });
    expect(log.json.data).toEqual([
      expect.objectContaining({
        id: tested.json.data.id,
        status: 'succeeded',
        nextAttemptAt: null,
        attempts: [
          expect.objectContaining({
            number: 1,
            statusCode: 200,
            error: null,
            manual: true,
          }),
        ],
      }),
    ]);
    expect(log.json.pagination).toMatchObject({
      total: 1,
      totalExact: true,
      nextCursor: null,
    });
    expect(detail.json.data.payload).toEqual(JSON.parse(delivery.body));
    expect(detail.json.data.attempts[0].responseBody).toBe('{"ok":true}');
  });

  it('redelivers with the same webhook-id, logged as manual; both secrets verify after a roll', async () => {
    // Arrange
    const created = await register({
      url: receiver.url('rolled'),
      events: ['mail.opened'],
    });
    const { id, secret: old } = created.json.data;
    const tested = await client.post(`/webhooks/${id}/test`, {
      key: org.ownerKey,
    });
    await runDueDeliveries(attemptDeps(), queue, scheduler);

    // Act
    const rolled = await client.post(`/webhooks/${id}/secret/roll`, {
      key: org.ownerKey,
    });
    const again = await client.post(
      `/webhooks/${id}/deliveries/${tested.json.data.id}/redeliver`,
      { key: org.ownerKey },
    );
    await runDueDeliveries(attemptDeps(), queue, scheduler);
    const detail = await client.get(
      `/webhooks/${id}/deliveries/${tested.json.data.id}`,
      { key: org.ownerKey },
    );
    const read = await client.get(`/webhooks/${id}`, { key: org.ownerKey });

    // Assert
    expect(rolled.status).toBe(200);
    expect(rolled.json.data.secret).not.toBe(old);
    expect(rolled.json.data.previousSecretExpiresAt).toBe(
      new Date(clock.now().getTime() + 24 * 3_600_000).toISOString(),
    );
    expect(read.json.data.previousSecretExpiresAt).toBe(
      rolled.json.data.previousSecretExpiresAt,
    );
    expect(again.status).toBe(202);
    const deliveries = receiver.received.filter((r) => r.inbox === 'rolled');
    expect(deliveries).toHaveLength(2);
    const [first, second] = deliveries;
    if (!first || !second) throw new Error('not delivered twice');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(
      2,
    );
    expect(verify(old, second)).toBeDefined();
    expect(verify(rolled.json.data.secret, second)).toBeDefined();
    expect(() => verify(rolled.json.data.secret, first)).toThrow();
    expect(
      detail.json.data.attempts.map(
        (a: { number: number; manual: boolean }) => [a.number, a.manual],
      ),
    ).toEqual([
      [1, true],
      [2, true],
    ]);
  });

  it('refuses test calls and redeliveries to a disabled endpoint', async () => {
    // Arrange
    const created = await register({
      url: receiver.url('off'),
      events: ['mail.opened'],
      enabled: false,
    });

    // Act
    const tested = await client.post(`/webhooks/${created.json.data.id}/test`, {
      key: org.ownerKey,
      body: { type: 'mail.clicked' },
    });

    // Assert
    expect(created.json.data.disabledReason).toBe('Disabled through the API');
    expect(tested.status).toBe(409);
    expect(tested.json.code).toBe('webhook.disabled');
  });

  it('walks the log by cursor, newest first', async () => {
    // Arrange
    const created = await register({
      url: receiver.url('paged'),
      events: ['sequence.enrolled'],
    });
    const id = created.json.data.id;
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      const tested = await client.post(`/webhooks/${id}/test`, {
        key: org.ownerKey,
      });
      sent.push(tested.json.data.id);
    }

    // Act
    const first = await client.get(`/webhooks/${id}/deliveries`, {
      key: org.ownerKey,
      query: { limit: '2' },
    });
    const second = await client.get(`/webhooks/${id}/deliveries`, {
      key: org.ownerKey,
      query: { limit: '2', cursor: first.json.pagination.nextCursor },
    });
    const foreignCursor = await client.get(`/webhooks/${id}/deliveries`, {
      key: org.ownerKey,
      query: { limit: '3', cursor: first.json.pagination.nextCursor },
    });

    // Assert
    expect(first.json.data.map((d: { id: string }) => d.id)).toEqual([
      sent[2],
      sent[1],
    ]);
    expect(second.json.data.map((d: { id: string }) => d.id)).toEqual([
      sent[0],
    ]);
    // No total is counted: up to the page, exact on the last (the
    // activity's rule).
    expect(first.json.pagination).toMatchObject({
      page: 1,
      total: 2,
      totalExact: false,
    });
    expect(first.json.pagination.nextCursor).toEqual(expect.any(String));
    expect(second.json.pagination).toMatchObject({
      page: 2,
      total: 3,
      totalExact: true,
      nextCursor: null,
    });
    expect(foreignCursor.status).toBe(400);
    expect(foreignCursor.json.details[0].field).toBe('cursor');
  });

  it('deletes an endpoint: gone for reads, its types out of the summary', async () => {
    // Arrange
    const created = await register({
      url: 'https://hooks.example.com/gone',
      events: ['sequence.exited'],
    });

    // Act
    const deleted = await client.delete(`/webhooks/${created.json.data.id}`, {
      key: org.ownerKey,
    });
    const read = await client.get(`/webhooks/${created.json.data.id}`, {
      key: org.ownerKey,
    });

    // Assert
    expect(deleted.json.data).toEqual({ id: created.json.data.id });
    expect(read.status).toBe(404);
    expect((await subscribed(org.orgId)).has('sequence.exited')).toBe(false);
  });

  it(`caps an organization at ${MAX_WEBHOOKS} endpoints`, async () => {
    // Arrange
    const capped = await createOrganizationWithKeys(client, 'Capped hooks');
    for (let i = 0; i < MAX_WEBHOOKS; i++) {
      const answer = await register(
        { url: `https://hooks.example.com/${i}`, events: ['contact.created'] },
        capped.ownerKey,
      );
      expect(answer.status).toBe(201);
    }

    // Act
    const over = await register(
      { url: 'https://hooks.example.com/over', events: ['contact.created'] },
      capped.ownerKey,
    );
    const listed = await client.get('/webhooks', {
      key: capped.ownerKey,
      query: { limit: '5' },
    });

    // Assert
    expect(over.status).toBe(400);
    expect(over.json.code).toBe('webhook.limitReached');
    expect(listed.json.pagination.total).toBe(MAX_WEBHOOKS);
  });
});
