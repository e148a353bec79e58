/**
 * From an emitter's event to its deliveries, on the embedded engine: the
 * sink (`webhookEvents`) asks the organization's subscription summary
 * (remembered 5 seconds) and sends only wanted events to the fan-out
 * queue, ten to a request; the fan-out makes one delivery per enabled
 * endpoint taking the type, once however often the event comes, and its
 * first attempt is never lost to a crash.
 */
import { randomUUID } from 'node:crypto';
import { validate, version } from 'uuid';
import { beforeEach, describe, expect, it } from 'vitest';
import { webhookFanoutConsumer } from '../../../functions/webhook-fanout/consumer.ts';
import { DynamoWebhookSubscriptions } from '../../../shared/adapters/aws/dynamo-webhook-subscriptions.ts';
import type { Deps } from '../../../shared/deps.ts';
import { createConsumerHandler } from '../../../shared/queue/consumer.ts';
import {
  createWebhook,
  updateWebhook,
} from '../../../shared/webhooks/endpoints.ts';
import { QueuedWebhookEventSink } from '../../../shared/webhooks/event-sink.ts';
import {
  payloadOf,
  type WebhookEvent,
  type WebhookEventType,
  webhookEventId,
} from '../../../shared/webhooks/events.ts';
import { deliveryIdOf, fanOut } from '../../../shared/webhooks/fan-out.ts';
import {
  createTestDeps,
  fixedClock,
  testEngineClient,
} from '../../support/dynamo.ts';
import { lambdaContext, sqsRecord } from '../../support/events.ts';
import {
  recordingQueue,
  recordingScheduler,
  runDueDeliveries,
} from '../../support/webhooks.ts';

describe('webhook events to deliveries', () => {
  const clock = fixedClock('2030-09-01T12:00:00.000Z');
  let deps: Deps & {
    queues: { webhookDeliveries: ReturnType<typeof recordingQueue> };
  };
  let queue: ReturnType<typeof recordingQueue>;
  let fanoutQueue: ReturnType<typeof recordingQueue>;
  let tableName: string;
  let orgId: string;

  beforeEach(async () => {
    queue = recordingQueue(clock);
    fanoutQueue = recordingQueue(clock);
    const created = await createTestDeps({
      clock,
      queues: {
        webhookDeliveries: queue,
        webhookFanout: fanoutQueue,
        steps: { send: async () => {} },
      },
    });
    tableName = created.tableName;
    deps = {
      ...created.deps,
      queues: { ...created.deps.queues, webhookDeliveries: queue },
      webhookSender: { post: async () => ({ statusCode: 200, latencyMs: 1 }) },
    };
    orgId = randomUUID();
  });

  let facts = 0;
  const eventOf = (type: WebhookEventType, org = orgId): WebhookEvent => {
    const from = `fact-${facts++}`;
    return {
      id: webhookEventId(org, type, from),
      type,
      orgId: org,
      occurredAt: clock.now().toISOString(),
      data: { from },
    };
  };

  it('makes one delivery per enabled endpoint taking the type, its first attempt in the organization’s group', async () => {
    // Arrange
    const taker = await createWebhook(deps, orgId, {
      url: 'https://a.example.com/in',
      events: ['contact.created'],
    });
    await createWebhook(deps, orgId, {
      url: 'https://b.example.com/in',
      events: ['contact.created'],
      enabled: false,
    });
    await createWebhook(deps, orgId, {
      url: 'https://c.example.com/in',
      events: ['mail.opened'],
    });
    const event = eventOf('contact.created');

    // Act
    const deliveries = await fanOut(deps, event);
    const stored = await deps.webhookDeliveries.getEvent(orgId, event.id);

    // Assert
    expect(deliveries.map((d) => d.webhookId)).toEqual([taker.id]);
    expect(deliveries[0]?.id).toBe(
      deliveryIdOf(taker.id, event.id, event.occurredAt),
    );
    expect(stored?.body).toBe(JSON.stringify(payloadOf(event)));
    expect(queue.queued).toEqual([
      expect.objectContaining({
        message: {
          kind: 'attempt',
          orgId,
          webhookId: taker.id,
          deliveryId: deliveries[0]?.id,
          eventId: event.id,
          attempt: 1,
        },
        options: { group: orgId },
      }),
    ]);
    expect(queue.batches).toBe(1);
  });

  it('writes nothing new for an event that comes again, and sends no attempt already made', async () => {
    // Arrange
    await createWebhook(deps, orgId, {
      url: 'https://again.example.com/in',
      events: ['contact.tagged'],
    });
    const event = eventOf('contact.tagged');
    const [first] = await fanOut(deps, event);
    await runDueDeliveries(deps, queue, recordingScheduler());

    // Act
    const [again] = await fanOut(deps, event);

    // Assert
    expect(again?.id).toBe(first?.id);
    expect(again?.status).toBe('succeeded');
    expect(queue.queued).toEqual([]);
  });

  it('sends the first attempt again when a crash came between the delivery and its send', async () => {
    // Arrange: the send fails once.
    await createWebhook(deps, orgId, {
      url: 'https://crash.example.com/in',
      events: ['contact.untagged'],
    });
    const event = eventOf('contact.untagged');
    const sendBatch = queue.sendBatch;
    queue.sendBatch = async () => {
      queue.sendBatch = sendBatch;
      throw new Error('SQS is unreachable');
    };

    // Act: the event fails, and is received again.
    await expect(fanOut(deps, event)).rejects.toThrow('unreachable');
    await fanOut(deps, event);

    // Assert
    expect(queue.queued).toHaveLength(1);
  });

  it('handles a batch of events with one read of each organization’s endpoints and the first attempts ten to a request', async () => {
    // Arrange: 15 events of two organizations, each with one endpoint.
    const other = randomUUID();
    for (const org of [orgId, other]) {
      await createWebhook(deps, org, {
        url: 'https://in.example.com/hooks',
        events: ['contact.created'],
      });
    }
    let reads = 0;
    const all = deps.webhooks.all.bind(deps.webhooks);
    const handler = createConsumerHandler(
      {
        ...deps,
        webhooks: {
          ...deps.webhooks,
          all: (org: string) => {
            reads++;
            return all(org);
          },
        },
        deadLetters: { send: async () => {} },
      },
      webhookFanoutConsumer,
    );
    const events = Array.from({ length: 15 }, (_, i) =>
      eventOf('contact.created', i % 3 === 0 ? other : orgId),
    );
    queue.batches = 0;

    // Act
    const response = await handler(
      {
        Records: events.map((event, i) =>
          sqsRecord(`m-${i}`, JSON.stringify(event)),
        ),
      },
      lambdaContext(),
    );

    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(reads).toBe(2);
    expect(queue.batches).toBe(2);
    expect(
      queue.queued.map((q) => (q.message as { kind: string }).kind),
    ).toEqual(events.map(() => 'attempt'));
  });

  it('gives each endpoint and event one delivery id: time-ordered by the event, the same every time', () => {
    // Act
    const id = deliveryIdOf('w1', 'evt_1', '2030-01-01T00:00:00.000Z');
    const later = deliveryIdOf('w1', 'evt_2', '2030-01-01T00:00:01.000Z');

    // Assert
    expect(validate(id) && version(id)).toBe(7);
    expect(id).toBe(deliveryIdOf('w1', 'evt_1', '2030-01-01T00:00:00.000Z'));
    expect(id).not.toBe(
      deliveryIdOf('w2', 'evt_1', '2030-01-01T00:00:00.000Z'),
    );
    expect(later > id).toBe(true);
  });

  it('sends only the events someone wants, ten to a request, each in its organization’s group', async () => {
    // Arrange
    await createWebhook(deps, orgId, {
      url: 'https://sink.example.com/in',
      events: ['mail.clicked'],
    });
    const nobody = randomUUID();
    const events = [
      ...Array.from({ length: 25 }, () => eventOf('mail.clicked')),
      ...Array.from({ length: 5 }, () => eventOf('mail.opened')),
      ...Array.from({ length: 5 }, () => eventOf('mail.clicked', nobody)),
    ];

    // Act
    await deps.webhookEvents.publish(events);

    // Assert
    expect(fanoutQueue.queued).toHaveLength(25);
    expect(fanoutQueue.batches).toBe(3);
    expect(
      fanoutQueue.queued.every(
        (q) =>
          q.options?.group === orgId &&
          (q.message as WebhookEvent).type === 'mail.clicked',
      ),
    ).toBe(true);
  });

  it('remembers an organization’s subscriptions for 5 seconds', async () => {
    // Arrange: a reader that counts its reads.
    let reads = 0;
    const reader = new DynamoWebhookSubscriptions({
      client: testEngineClient(),
      tableName,
    });
    const sink = new QueuedWebhookEventSink({
      subscriptions: {
        subscribedTypes: (org) => {
          reads++;
          return reader.subscribedTypes(org);
        },
      },
      queue: () => fanoutQueue,
      clock,
    });
    const before = await sink.wanted(orgId);
    const endpoint = await createWebhook(deps, orgId, {
      url: 'https://cache.example.com/in',
      events: ['signup.submitted'],
    });

    // Act
    clock.advance(4_999);
    const remembered = await sink.wanted(orgId);
    clock.advance(1);
    const fresh = await sink.wanted(orgId);
    await updateWebhook(deps, orgId, endpoint.id, { enabled: false });
    clock.advance(5_000);
    const disabled = await sink.wanted(orgId);

    // Assert
    expect(before.size).toBe(0);
    expect(remembered.size).toBe(0);
    expect(fresh).toEqual(new Set(['signup.submitted']));
    expect(disabled.size).toBe(0);
    expect(reads).toBe(3);
  });
});
