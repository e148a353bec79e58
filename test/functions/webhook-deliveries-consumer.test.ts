/**
 * Fairness of the `webhookDeliveries` consumer, through its handler as
 * Lambda's SQS trigger calls it: one organization's dead endpoint (every
 * attempt runs to its timeout) never delays another organization's
 * deliveries — a batch's attempts start together, each with its own
 * timeout — and once the endpoint failed, its new deliveries wait behind
 * one probe instead of each spending the timeout. A slow endpoint (every
 * answer takes a while, successfully) has its attempts passed on to the
 * slow lane, one per batch there, so that no batch of the others waits on
 * it. Every message carries its organization as the fair queue's group.
 */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveriesConsumer } from '../../functions/webhook-deliveries/consumer.ts';
import { webhookSlowDeliveriesConsumer } from '../../functions/webhook-slow-deliveries/consumer.ts';
import type { Deps } from '../../shared/deps.ts';
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import type { WebhookRequest } from '../../shared/webhooks/delivery-ports.ts';
import { createWebhook } from '../../shared/webhooks/endpoints.ts';
import { webhookEventId } from '../../shared/webhooks/events.ts';
import { fanOut } from '../../shared/webhooks/fan-out.ts';
import { createTestDeps, fixedClock } from '../support/dynamo.ts';
import { lambdaContext } from '../support/events.ts';
import { recordingQueue, recordingScheduler } from '../support/webhooks.ts';

/** How long the dead endpoint holds each attempt (its timeout, scaled down). */
const HANG_MS = 1_000;

const recordOf = (body: unknown, group?: string): SQSRecord => ({
  messageId: randomUUID(),
  receiptHandle: randomUUID(),
  body: JSON.stringify(body),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: String(Date.now()),
    SenderId: 'sender',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
    ...(group ? { MessageGroupId: group } : {}),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:webhookDeliveries',
  awsRegion: 'eu-west-1',
});

describe('the webhook deliveries consumer, fair between organizations', () => {
  const clock = fixedClock('2030-08-01T09:00:00.000Z');
  const queue = recordingQueue(clock);
  const slowLane = recordingQueue(clock);
  const scheduler = recordingScheduler();
  const calls: { url: string; started: number; ended?: number }[] = [];
  let deps: Deps & {
    queues: {
      webhookDeliveries: ReturnType<typeof recordingQueue>;
      webhookSlowDeliveries: ReturnType<typeof recordingQueue>;
    };
  };
  const a = { orgId: randomUUID(), url: 'https://dead.a.example.com/in' };
  const b = { orgId: randomUUID(), url: 'https://fine.b.example.com/in' };
  const c = { orgId: randomUUID(), url: 'https://slow.c.example.com/in' };

  beforeAll(async () => {
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
      queues: {
        ...created.deps.queues,
        webhookDeliveries: queue,
        webhookSlowDeliveries: slowLane,
      },
      webhookSender: {
        post: async (request: WebhookRequest) => {
          const call: (typeof calls)[number] = {
            url: request.url,
            started: Date.now(),
          };
          calls.push(call);
          const dead = request.url === a.url;
          const slow = request.url === c.url;
          const took = dead || slow ? HANG_MS : 5;
          await new Promise((resolve) => setTimeout(resolve, took));
          call.ended = Date.now();
          return dead
            ? {
                error: 'Timed out: no complete answer within 5 s',
                latencyMs: took,
              }
            : { statusCode: 204, latencyMs: took };
        },
      },
    };
    for (const { orgId, url } of [a, b, c]) {
      await createWebhook(deps, orgId, { url, events: ['mail.delivered'] });
    }
  });

  let facts = 0;
  /** Events for organizations; the first attempts they queue, as records. */
  const eventsFor = async (
    each: number,
    orgs = [a, b],
  ): Promise<SQSRecord[]> => {
    queue.queued.length = 0;
    for (let i = 0; i < each; i++) {
      for (const { orgId } of orgs) {
        const from = `mail-${facts++}`;
        await fanOut(deps, {
          id: webhookEventId(orgId, 'mail.delivered', from),
          type: 'mail.delivered',
          orgId,
          occurredAt: clock.now().toISOString(),
          data: { mail: { id: from } },
        });
      }
    }
    return queue.queued.map((q) => recordOf(q.message, q.options?.group));
  };

  const handler = (group = webhookDeliveriesConsumer) =>
    createConsumerHandler(
      { ...deps, deadLetters: { send: async () => {} } },
      group,
    );

  it('attempts a batch at once: B’s deliveries are made while A’s dead endpoint holds its attempts', async () => {
    // Arrange
    const records = await eventsFor(5);
    calls.length = 0;

    // Act
    const started = Date.now();
    const response = await handler()({ Records: records }, lambdaContext());
    const took = Date.now() - started;

    // Assert: every message in its organization's group.
    expect(records.map((r) => r.attributes.MessageGroupId).sort()).toEqual(
      [...Array(5).fill(a.orgId), ...Array(5).fill(b.orgId)].sort(),
    );
    expect(response.batchItemFailures).toEqual([]);
    const ofB = calls.filter((c) => c.url === b.url);
    const ofA = calls.filter((c) => c.url === a.url);
    expect(ofB).toHaveLength(5);
    expect(ofA).toHaveLength(5);
    // Every attempt started before the first of A's timeouts ran out: none
    // waited for another (the reads and claims before each call are the
    // local engine's, one request at a time).
    const firstOfA = Math.min(...ofA.map((c) => c.ended ?? 0));
    for (const call of calls) expect(call.started).toBeLessThan(firstOfA);
    // B's were done long before.
    const lastOfB = Math.max(...ofB.map((c) => c.ended ?? Infinity));
    expect(firstOfA - lastOfB).toBeGreaterThan(HANG_MS / 2);
    // The batch took one timeout, not one per attempt.
    expect(took).toBeLessThan(HANG_MS * 3);
  });

  it('parks A’s new deliveries behind one probe: its dead endpoint no longer eats the consumer’s time', async () => {
    // Arrange: A's endpoint failed in the batch before.
    const records = await eventsFor(5);
    calls.length = 0;

    // Act
    const started = Date.now();
    const response = await handler()({ Records: records }, lambdaContext());
    const took = Date.now() - started;

    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(calls.filter((c) => c.url === a.url)).toEqual([]);
    expect(calls.filter((c) => c.url === b.url)).toHaveLength(5);
    expect(took).toBeLessThan(HANG_MS);
    const parked = await deps.webhookDeliveries.parked(
      a.orgId,
      (await deps.webhooks.all(a.orgId))[0]?.id ?? '',
      100,
    );
    expect(parked).toHaveLength(5);
  });

  it('passes a slow endpoint’s attempts on to the slow lane, one per batch there: no batch of the others waits on it', async () => {
    // Arrange: C's endpoint answers, after a second; its first attempts
    // show it slow.
    await handler()({ Records: await eventsFor(2, [c, b]) }, lambdaContext());
    const records = await eventsFor(5, [c, b]);
    calls.length = 0;
    slowLane.queued.length = 0;

    // Act
    const started = Date.now();
    const response = await handler()({ Records: records }, lambdaContext());
    const took = Date.now() - started;
    const passedOn = slowLane.queued.map((q) =>
      recordOf(q.message, q.options?.group),
    );
    const slowStarted = Date.now();
    await handler(webhookSlowDeliveriesConsumer)(
      { Records: passedOn.slice(0, 1) },
      lambdaContext(),
    );
    const slowTook = Date.now() - slowStarted;

    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(calls.filter((call) => call.url === c.url)).toHaveLength(1);
    expect(calls.filter((call) => call.url === b.url)).toHaveLength(5);
    expect(took).toBeLessThan(HANG_MS);
    expect(passedOn).toHaveLength(5);
    expect(passedOn.every((r) => r.attributes.MessageGroupId === c.orgId)).toBe(
      true,
    );
    expect(webhookSlowDeliveriesConsumer.queue.batchSize).toBe(1);
    expect(slowTook).toBeGreaterThanOrEqual(HANG_MS);
  });
});
