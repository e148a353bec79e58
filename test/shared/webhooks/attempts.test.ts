/**
 * Attempts of webhook deliveries on the embedded engine, with a fixed
 * clock and a stand-in HTTP client: the retry schedule (5 s, 5 min, 30
 * min, 2 h, 5 h, then 10 h: 13 attempts over 77 hours; waits above 15
 * minutes by a schedule), the give-up, the circuit (one probe, the others
 * parked and released on recovery), the disabling of an endpoint failing
 * for 5 days, and repeats after a crash.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Deps } from '../../../shared/deps.ts';
import { attemptDelivery } from '../../../shared/webhooks/attempts.ts';
import type {
  WebhookRequest,
  WebhookResponse,
} from '../../../shared/webhooks/delivery-ports.ts';
import {
  createWebhook,
  getWebhook,
  updateWebhook,
} from '../../../shared/webhooks/endpoints.ts';
import { webhookEventId } from '../../../shared/webhooks/events.ts';
import { fanOut } from '../../../shared/webhooks/fan-out.ts';
import {
  MAX_ATTEMPTS,
  RELEASE_FIRST_PAGE,
  RELEASE_PAUSE_SECONDS,
  RETRY_DELAYS_SECONDS,
} from '../../../shared/webhooks/model.ts';
import type { AttemptMessage } from '../../../shared/webhooks/queues.ts';
import { createTestDeps, fixedClock } from '../../support/dynamo.ts';
import {
  recordingQueue,
  recordingScheduler,
  runDueDeliveries,
} from '../../support/webhooks.ts';

const HOUR = 3_600_000;

describe('webhook attempts', () => {
  const clock = fixedClock('2030-07-01T08:00:00.000Z');
  let deps: Deps & {
    queues: { webhookDeliveries: ReturnType<typeof recordingQueue> };
  };
  let queue: ReturnType<typeof recordingQueue>;
  let scheduler: ReturnType<typeof recordingScheduler>;
  /** What each URL answers (default 200), and every call made. */
  let answers: Map<string, (request: WebhookRequest) => WebhookResponse>;
  let calls: WebhookRequest[];
  let orgId: string;

  beforeEach(async () => {
    clock.set('2030-07-01T08:00:00.000Z');
    queue = recordingQueue(clock);
    scheduler = recordingScheduler();
    answers = new Map();
    calls = [];
    const created = await createTestDeps({
      clock,
      scheduler,
      queues: {
        webhookDeliveries: queue,
        webhookFanout: { send: async () => {} },
        steps: { send: async () => {} },
      },
    });
    deps = {
      ...created.deps,
      scheduler,
      queues: { ...created.deps.queues, webhookDeliveries: queue },
      webhookSender: {
        post: async (request) => {
          calls.push(request);
          return (
            answers.get(request.url)?.(request) ?? {
              statusCode: 200,
              latencyMs: 3,
            }
          );
        },
      },
    };
    orgId = randomUUID();
  });

  const endpoint = async (url: string) =>
    (
      await createWebhook(deps, orgId, {
        url,
        events: ['contact.created'],
      })
    ).id;

  let facts = 0;
  const publish = (at = clock.now()) => {
    const from = `fact-${facts++}`;
    return fanOut(deps, {
      id: webhookEventId(orgId, 'contact.created', from),
      type: 'contact.created',
      orgId,
      occurredAt: at.toISOString(),
      data: { contact: { id: from } },
    });
  };

  const run = () => runDueDeliveries(deps, queue, scheduler);

  const down: (request: WebhookRequest) => WebhookResponse = () => ({
    statusCode: 503,
    body: 'maintenance',
    latencyMs: 12,
  });

  it('retries with growing waits for 77 hours, then gives up: 13 attempts, waits above 15 minutes scheduled', async () => {
    // Arrange
    const url = 'https://down.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    const [delivery] = await publish();
    if (!delivery) throw new Error('no delivery');
    const start = clock.now().getTime();
    const waits: number[] = [];
    const ways: string[] = [];

    // Act: each attempt, then to the instant the next one is due.
    await run();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const stored = await deps.webhookDeliveries.get(
        orgId,
        webhookId,
        delivery.id,
      );
      if (stored?.status !== 'pending' || !stored.nextAttemptAt) break;
      const due = Date.parse(stored.nextAttemptAt);
      waits.push((due - clock.now().getTime()) / 1000);
      ways.push(scheduler.schedules.size > 0 ? 'schedule' : 'queue delay');
      clock.set(new Date(due));
      await run();
    }
    const done = await deps.webhookDeliveries.get(
      orgId,
      webhookId,
      delivery.id,
    );

    // Assert
    expect(waits).toEqual(RETRY_DELAYS_SECONDS);
    expect(ways).toEqual([
      'queue delay',
      'queue delay',
      ...RETRY_DELAYS_SECONDS.slice(2).map(() => 'schedule'),
    ]);
    expect(done?.status).toBe('failed');
    expect(done?.reason).toBe('Gave up after 13 attempts');
    expect(done?.attempts).toHaveLength(13);
    expect(done?.attempts.map((a) => a.number)).toEqual(
      Array.from({ length: 13 }, (_, i) => i + 1),
    );
    expect(done?.attempts[0]).toMatchObject({
      statusCode: 503,
      error: 'HTTP 503',
      responseBody: 'maintenance',
      latencyMs: 12,
      manual: false,
    });
    expect(clock.now().getTime() - start).toBeGreaterThanOrEqual(72 * HOUR);
    expect(calls).toHaveLength(13);
    // 77 hours is short of 5 days: the endpoint stays enabled.
    expect((await getWebhook(deps, orgId, webhookId)).enabled).toBe(true);
  });

  it('counts a redirect, a timeout and a refused address as failures, and a 2xx as success', async () => {
    // Arrange
    const redirect = 'https://redirect.example.com/in';
    answers.set(redirect, () => ({ statusCode: 301, latencyMs: 1 }));
    const slow = 'https://slow.example.com/in';
    answers.set(slow, () => ({
      error: 'Timed out: no complete answer within 5 s',
      latencyMs: 5000,
    }));
    const ids = [await endpoint(redirect), await endpoint(slow)];
    const fine = await endpoint('https://fine.example.com/in');

    // Act
    const deliveries = await publish();
    await run();
    const stored = await Promise.all(
      deliveries.map((d) =>
        deps.webhookDeliveries.get(orgId, d.webhookId, d.id),
      ),
    );

    // Assert
    const byEndpoint = new Map(stored.map((d) => [d?.webhookId, d]));
    expect(byEndpoint.get(ids[0])?.attempts[0]?.error).toBe(
      'HTTP 301: a redirect, which is never followed',
    );
    expect(byEndpoint.get(ids[1])?.attempts[0]).toMatchObject({
      error: 'Timed out: no complete answer within 5 s',
      latencyMs: 5000,
    });
    expect(byEndpoint.get(ids[1])?.status).toBe('pending');
    expect(byEndpoint.get(fine)?.status).toBe('succeeded');
  });

  it('parks the deliveries of a failing endpoint behind one probe, and releases them when it recovers', async () => {
    // Arrange: the endpoint fails its first attempt.
    const url = 'https://flaky.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    const [probe] = await publish();
    await run();

    // Act: five more events while it is down…
    clock.advance(1000);
    const waiting = [];
    for (let i = 0; i < 5; i++) waiting.push(...(await publish()));
    await run();
    const callsWhileDown = calls.length;
    const parked = await deps.webhookDeliveries.parked(orgId, webhookId, 10);
    const health = await deps.webhookDeliveries.health(orgId, webhookId);
    const shown = await getWebhook(deps, orgId, webhookId);
    // …then it recovers, and the probe's retry (5 s on) succeeds.
    answers.delete(url);
    clock.advance(5000);
    await run();
    const after = await Promise.all(
      waiting.map((d) => deps.webhookDeliveries.get(orgId, webhookId, d.id)),
    );

    // Assert
    expect(callsWhileDown).toBe(1);
    expect(parked.map((p) => p.deliveryId).sort()).toEqual(
      waiting.map((d) => d.id).sort(),
    );
    expect(health.probe?.deliveryId).toBe(probe?.id);
    expect(shown.failingSince).toBe('2030-07-01T08:00:00.000Z');
    expect(after.map((d) => d?.status)).toEqual(waiting.map(() => 'succeeded'));
    expect(after.map((d) => d?.attempts.length)).toEqual(waiting.map(() => 1));
    expect(calls).toHaveLength(1 + 1 + 5);
    expect(await deps.webhookDeliveries.parked(orgId, webhookId, 10)).toEqual(
      [],
    );
    expect((await getWebhook(deps, orgId, webhookId)).failingSince).toBeNull();
  });

  /** An endpoint down, its probe failed once, and `count` deliveries parked. */
  const backlog = async (url: string, count: number) => {
    answers.set(url, down);
    const webhookId = await endpoint(url);
    const [probe] = await publish();
    await run();
    clock.advance(1000);
    for (let i = 0; i < count; i++) await publish();
    await run();
    const parked = await deps.webhookDeliveries.parked(orgId, webhookId, 1000);
    return { webhookId, probe, parked: parked.length };
  };

  it('releases a recovered endpoint’s backlog in growing pages, one page per pause (no storm)', async () => {
    // Arrange: 50 deliveries parked behind a failed probe.
    const url = 'https://backlog.example.com/in';
    const { webhookId, parked } = await backlog(url, 50);
    const callsWhileDown = calls.length;

    // Act: the endpoint recovers; the probe's retry succeeds 5 s on.
    answers.delete(url);
    clock.advance(5000);
    await run();
    const pages = [calls.length - callsWhileDown - 1];
    while ((await deps.webhookDeliveries.parked(orgId, webhookId, 1)).length) {
      const before = calls.length;
      clock.advance(RELEASE_PAUSE_SECONDS * 1000);
      await run();
      pages.push(calls.length - before);
    }

    // Assert: 10, then 20, then the 20 left — each after a pause.
    expect(parked).toBe(50);
    expect(callsWhileDown).toBe(1);
    expect(pages).toEqual([RELEASE_FIRST_PAGE, 20, 20]);
    expect(calls).toHaveLength(1 + 1 + 50);
  });

  it('stops a release when the endpoint fails again: the rest stay parked behind a new probe', async () => {
    // Arrange: 50 parked; the probe succeeds, then the endpoint fails again.
    const url = 'https://relapse.example.com/in';
    const { webhookId } = await backlog(url, 50);
    answers.delete(url);
    clock.advance(5000);
    let answered = 0;
    answers.set(url, () =>
      answered++ === 0
        ? { statusCode: 200, latencyMs: 3 }
        : { statusCode: 503, latencyMs: 12 },
    );
    await run();
    const afterFirstPage = calls.length;

    // Act: the pause passes; the first page's retries are due too.
    clock.advance(RELEASE_PAUSE_SECONDS * 1000);
    await run();
    const health = await deps.webhookDeliveries.health(orgId, webhookId);
    const parked = await deps.webhookDeliveries.parked(orgId, webhookId, 1000);

    // Assert: the second page never went; one probe, the first page's
    // other retries parked beside the 40 never released.
    expect(afterFirstPage).toBe(1 + 1 + RELEASE_FIRST_PAGE);
    expect(calls.length - afterFirstPage).toBe(1);
    expect(health.probe).toBeDefined();
    expect(parked).toHaveLength(50 - 1);
  });

  it('closes the circuit on a repeat when a crash came between a success’s log and the health', async () => {
    // Arrange: 5 parked; the probe's retry succeeds, but the health write
    // fails (the container dies).
    const url = 'https://crash-health.example.com/in';
    const { webhookId, probe } = await backlog(url, 5);
    if (!probe) throw new Error('no probe');
    answers.delete(url);
    clock.advance(5000);
    queue.queued.length = 0;
    scheduler.schedules.clear();
    const message: AttemptMessage = {
      kind: 'attempt',
      orgId,
      webhookId,
      deliveryId: probe.id,
      attempt: 2,
    };
    const updateHealth = deps.webhookDeliveries.updateHealth;
    deps.webhookDeliveries.updateHealth = async () => {
      throw new Error('the container died');
    };
    await expect(attemptDelivery(deps, message)).rejects.toThrow('died');
    deps.webhookDeliveries.updateHealth = updateHealth;
    const stale = await deps.webhookDeliveries.health(orgId, webhookId);

    // Act: SQS hands the message over again.
    await attemptDelivery(deps, message);
    await run();

    // Assert
    expect(stale.probe?.deliveryId).toBe(probe.id);
    expect(
      (await deps.webhookDeliveries.get(orgId, webhookId, probe.id))?.status,
    ).toBe('succeeded');
    expect(await deps.webhookDeliveries.health(orgId, webhookId)).toMatchObject(
      { failures: 0 },
    );
    expect((await deps.webhookDeliveries.health(orgId, webhookId)).probe).toBe(
      undefined,
    );
    expect(await deps.webhookDeliveries.parked(orgId, webhookId, 10)).toEqual(
      [],
    );
    expect(calls).toHaveLength(1 + 1 + 5);
  });

  it('shows a parked delivery waiting for the endpoint’s next try, its attempts unspent', async () => {
    // Arrange
    const url = 'https://waiting.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    await publish();
    await run();

    // Act
    const [waiting] = await publish();
    await run();
    const stored = await deps.webhookDeliveries.get(
      orgId,
      webhookId,
      waiting?.id ?? '',
    );

    // Assert
    expect(stored).toMatchObject({
      status: 'pending',
      parked: true,
      nextAttempt: 1,
      attempts: [],
      nextAttemptAt: new Date(clock.now().getTime() + 5000).toISOString(),
      reason: expect.stringContaining('Waits for its endpoint'),
    });
  });

  it('disables an endpoint failing for 5 days, saying why; its waiting deliveries fail', async () => {
    // Arrange: an event every 10 hours, for 5 days, to a dead endpoint.
    const url = 'https://dead.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    const since = clock.now().toISOString();
    const deliveries = [];
    for (let hour = 0; hour <= 5 * 24 + 10; hour += 10) {
      deliveries.push(...(await publish()));
      await run();
      clock.advance(10 * HOUR);
      await run();
    }
    await run();

    // Act
    const shown = await getWebhook(deps, orgId, webhookId);
    const stored = await Promise.all(
      deliveries.map((d) => deps.webhookDeliveries.get(orgId, webhookId, d.id)),
    );
    const types = await deps.webhookEvents.wanted(orgId);

    // Assert
    expect(shown.enabled).toBe(false);
    expect(shown.disabledReason).toBe(
      `Every attempt failed for 5 days, since ${since}; the last: HTTP 503`,
    );
    expect(Date.parse(shown.disabledAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(since) + 5 * 24 * HOUR,
    );
    expect(stored.every((d) => d?.status === 'failed')).toBe(true);
    expect(stored.at(-1)?.reason).toBe('Not sent: its endpoint is disabled');
    expect(types.has('contact.created')).toBe(false);
    expect(await deps.webhookDeliveries.parked(orgId, webhookId, 100)).toEqual(
      [],
    );
  });

  it('fails the parked deliveries when a call disables the endpoint; enabling it again forgets its failures', async () => {
    // Arrange: a failing endpoint, a delivery parked behind its probe.
    const url = 'https://switched.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    await publish();
    await run();
    const [waiting] = await publish();
    await run();

    // Act
    await updateWebhook(deps, orgId, webhookId, { enabled: false });
    await run();
    const afterDisable = await deps.webhookDeliveries.get(
      orgId,
      webhookId,
      waiting?.id ?? '',
    );
    const enabled = await updateWebhook(deps, orgId, webhookId, {
      enabled: true,
    });
    answers.delete(url);
    const [fresh] = await publish();
    await run();

    // Assert
    expect(afterDisable).toMatchObject({
      status: 'failed',
      reason: 'Not sent: its endpoint is disabled',
      attempts: [],
    });
    expect(enabled.failingSince).toBeNull();
    expect(
      (await deps.webhookDeliveries.get(orgId, webhookId, fresh?.id ?? ''))
        ?.status,
    ).toBe('succeeded');
  });

  it('makes one call for a message received twice at once, and the next attempt once', async () => {
    // Arrange
    const url = 'https://twice.example.com/in';
    answers.set(url, down);
    await endpoint(url);
    const [delivery] = await publish();
    if (!delivery) throw new Error('no delivery');
    queue.queued.length = 0;
    const message: AttemptMessage = {
      kind: 'attempt',
      orgId,
      webhookId: delivery.webhookId,
      deliveryId: delivery.id,
      attempt: 1,
    };

    // Act
    await Promise.all([
      attemptDelivery(deps, message),
      attemptDelivery(deps, message),
    ]);

    // Assert
    expect(calls).toHaveLength(1);
    expect(
      queue.queued.filter((q) => (q.message as AttemptMessage).attempt === 2)
        .length,
    ).toBeGreaterThanOrEqual(1);
    const stored = await deps.webhookDeliveries.get(
      orgId,
      delivery.webhookId,
      delivery.id,
    );
    expect(stored?.attempts).toHaveLength(1);
  });

  it('sends the next attempt again when a crash came between the log and the send', async () => {
    // Arrange: the send of the next attempt fails once.
    const url = 'https://crash.example.com/in';
    answers.set(url, down);
    await endpoint(url);
    const [delivery] = await publish();
    if (!delivery) throw new Error('no delivery');
    queue.queued.length = 0;
    const message: AttemptMessage = {
      kind: 'attempt',
      orgId,
      webhookId: delivery.webhookId,
      deliveryId: delivery.id,
      attempt: 1,
    };
    const send = queue.send;
    queue.send = async () => {
      queue.send = send;
      throw new Error('SQS is unreachable');
    };

    // Act: the message fails, and is received again.
    await expect(attemptDelivery(deps, message)).rejects.toThrow('unreachable');
    await attemptDelivery(deps, message);

    // Assert: one call, and the next attempt on its way.
    expect(calls).toHaveLength(1);
    expect(
      queue.queued.map((q) => (q.message as AttemptMessage).attempt),
    ).toEqual([2]);
  });

  it('hands the probe to the oldest parked delivery when the probe gives up', async () => {
    // Arrange: the probe is on its last attempt; another delivery waits.
    const url = 'https://handover.example.com/in';
    answers.set(url, down);
    const webhookId = await endpoint(url);
    const [probe] = await publish();
    if (!probe) throw new Error('no delivery');
    await run();
    const [waiting] = await publish();
    await run();
    const last = await deps.webhookDeliveries.get(orgId, webhookId, probe.id);
    if (!last) throw new Error('no probe');
    // As if twelve attempts had failed: the next is its last.
    await deps.webhookDeliveries.update(orgId, last, {
      ...last,
      nextAttempt: MAX_ATTEMPTS,
      version: last.version + 1,
    });
    queue.queued.length = 0;

    // Act
    await attemptDelivery(deps, {
      kind: 'attempt',
      orgId,
      webhookId,
      deliveryId: probe.id,
      attempt: MAX_ATTEMPTS,
    });
    const health = await deps.webhookDeliveries.health(orgId, webhookId);

    // Assert
    expect(
      (await deps.webhookDeliveries.get(orgId, webhookId, probe.id))?.status,
    ).toBe('failed');
    expect(health.probe?.deliveryId).toBe(waiting?.id);
    expect(await deps.webhookDeliveries.parked(orgId, webhookId, 10)).toEqual(
      [],
    );
    expect(
      [...scheduler.schedules.values()].map((s) => s.message),
    ).toContainEqual(
      expect.objectContaining({ deliveryId: waiting?.id, attempt: 1 }),
    );
  });
});
