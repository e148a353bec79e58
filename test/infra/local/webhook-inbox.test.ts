/**
 * The local webhook inbox, and webhooks on the local stack's asynchronous
 * half (issue 32, §1): an event published through the sink reaches the
 * inbox through the fan-out and deliveries consumers on the embedded SQS
 * engine, signed, and the inbox says it verified; an inbox told to fail
 * makes the delivery retry, by schedules the stack's movable clock fires.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { consumerFunctions } from '../../../functions/consumers.ts';
import {
  type LocalAsync,
  prepareLocalAsync,
} from '../../../infra/local/async.ts';
import {
  type InboxDelivery,
  startWebhookInbox,
  tableSecrets,
  type WebhookInbox,
} from '../../../infra/local/webhook-inbox.ts';
import type { Deps } from '../../../shared/deps.ts';
import { createWebhook } from '../../../shared/webhooks/endpoints.ts';
import {
  type WebhookEventType,
  webhookEventId,
} from '../../../shared/webhooks/events.ts';
import { newSecret, webhookHeaders } from '../../../shared/webhooks/signing.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';

const stopped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stopped.reverse()) await stop();
});

const inboxWith = async (secretsFor: (path: string) => string[]) => {
  const inbox = await startWebhookInbox({
    port: 0,
    secretsFor: async (path) => secretsFor(path),
  });
  stopped.push(() => inbox.stop());
  return inbox;
};

const deliveriesOf = async (inbox: WebhookInbox, name?: string) =>
  (await (
    await fetch(`${inbox.url}/deliveries${name ? `?inbox=${name}` : ''}`)
  ).json()) as InboxDelivery[];

/** Waits until `check` holds, polling; gives up after `ms`. */
const eventually = async <T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 15_000,
): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('the webhook inbox', () => {
  it('takes a delivery, says whether its signature verified, and answers as told', async () => {
    // Arrange
    const secret = newSecret({
      secret: (bytes) => Buffer.alloc(bytes, 5).toString('base64url'),
    });
    const inbox = await inboxWith((path) =>
      path === '/inbox/crm' ? [secret] : [],
    );
    const body = '{"id":"evt_1","type":"contact.created"}';
    const post = (path: string, headers: Record<string, string>, sent = body) =>
      fetch(`${inbox.url}${path}`, { method: 'POST', headers, body: sent });
    const signed = webhookHeaders({
      id: 'evt_1',
      body,
      secrets: [secret],
      now: new Date(),
    });

    // Act
    const good = await post('/inbox/crm', signed);
    const tampered = await post('/inbox/crm', signed, `${body} `);
    const stranger = await post('/inbox/nobody', signed);
    const failing = await post('/inbox/down?status=503', signed);
    await fetch(`${inbox.url}/inboxes/slow`, {
      method: 'PUT',
      body: JSON.stringify({ delayMs: 300 }),
    });
    const started = Date.now();
    const slow = await post('/inbox/slow', signed);
    const slowTook = Date.now() - started;
    const listed = await deliveriesOf(inbox);
    const page = await (await fetch(`${inbox.url}/`)).text();

    // Assert
    expect([good.status, tampered.status, stranger.status]).toEqual([
      200, 200, 200,
    ]);
    expect(failing.status).toBe(503);
    expect(slow.status).toBe(200);
    expect(slowTook).toBeGreaterThanOrEqual(290);
    expect(
      listed.map((d) => [d.inbox, d.verified, d.answered.status]).reverse(),
    ).toEqual([
      ['crm', true, 200],
      ['crm', false, 200],
      ['nobody', null, 200],
      ['down', null, 503],
      ['slow', null, 200],
    ]);
    expect(listed.at(-1)?.headers['webhook-id']).toBe('evt_1');
    expect(page).toContain('signature verified');
    expect(page).toContain('signature NOT verified');
  });
});

describe('webhooks on the local stack', () => {
  let asyncHalf: LocalAsync;
  let deps: Deps;
  let tableName: string;
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };

  const stack = async () => {
    const id = randomUUID().slice(0, 8);
    asyncHalf = await prepareLocalAsync({
      sqsEndpoint: inject('sqsEndpoint'),
      sentLogFile: join(inject('scratchDir'), `sent-${id}.jsonl`),
      schedulesFile: join(inject('scratchDir'), `schedules-${id}.json`),
      clock,
      queuePrefix: `h${id}-`,
      consumers: consumerFunctions.filter((fn) =>
        fn.group.name.startsWith('webhook'),
      ),
    });
    // Every wait a schedule: the movable clock moves them all.
    const created = await createTestDeps({
      clock,
      asyncHalf,
      queueDelayMaxSeconds: 0,
    });
    tableName = created.tableName;
    deps = asyncHalf.scheduler
      ? { ...created.deps, scheduler: asyncHalf.scheduler }
      : created.deps;
    asyncHalf.start(deps);
    stopped.push(() => asyncHalf.stop());
  };

  let facts = 0;
  const publish = (orgId: string, type: WebhookEventType) => {
    const from = `fact-${facts++}`;
    return deps.webhookEvents.publish([
      {
        id: webhookEventId(orgId, type, from),
        type,
        orgId,
        occurredAt: clock.now().toISOString(),
        data: { from },
      },
    ]);
  };

  it('delivers a published event to the inbox through both consumers, signed; a failing inbox is retried on the movable clock', async () => {
    // Arrange
    await stack();
    const inbox = await startWebhookInbox({
      port: 0,
      secretsFor: tableSecrets(testEngineClient(), tableName),
    });
    stopped.push(() => inbox.stop());
    const orgId = randomUUID();
    await createWebhook(deps, orgId, {
      url: `${inbox.url}/inbox/crm`,
      events: ['contact.created'],
    });
    await createWebhook(deps, orgId, {
      url: `${inbox.url}/inbox/down`,
      events: ['contact.created'],
    });
    await fetch(`${inbox.url}/inboxes/down`, {
      method: 'PUT',
      body: JSON.stringify({ status: 503 }),
    });

    // Act: one event for both; the failing inbox recovers after its
    // second attempt, and the clock moves past the next wait (5 min).
    await publish(orgId, 'contact.created');
    const delivered = await eventually(
      () => deliveriesOf(inbox),
      (found) => found.length >= 2,
    );
    offset += 6_000;
    const retried = await eventually(
      () => deliveriesOf(inbox, 'down'),
      (found) => found.length >= 2,
    );
    await fetch(`${inbox.url}/inboxes/down`, { method: 'DELETE' });
    offset += 5 * 60_000 + 1_000;
    const recovered = await eventually(
      () => deliveriesOf(inbox, 'down'),
      (found) => found.some((d) => d.answered.status === 200),
    );

    // Assert
    const crm = delivered.filter((d) => d.inbox === 'crm');
    expect(crm).toHaveLength(1);
    expect(crm[0]?.verified).toBe(true);
    expect(JSON.parse(crm[0]?.body ?? '{}')).toMatchObject({
      type: 'contact.created',
      organizationId: orgId,
    });
    expect(retried.map((d) => d.answered.status)).toEqual([503, 503]);
    expect(recovered.map((d) => d.answered.status)).toEqual([200, 503, 503]);
    expect(new Set(recovered.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(recovered.every((d) => d.verified === true)).toBe(true);
  });
});
