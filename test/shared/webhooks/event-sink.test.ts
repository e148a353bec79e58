/**
 * The webhook event sink: what it sends to the fan-out queue, and what it
 * drops — an event too large once written as the body it is sent as, an
 * event the queue refuses — without failing its emitter.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../shared/observability.ts';
import {
  MessagesRefusedError,
  type QueueMessage,
  type QueueSender,
} from '../../../shared/ports.ts';
import { QueuedWebhookEventSink } from '../../../shared/webhooks/event-sink.ts';
import type { WebhookEvent } from '../../../shared/webhooks/events.ts';
import { MAX_PAYLOAD_BYTES } from '../../../shared/webhooks/model.ts';

const event = (id: string, data: Record<string, unknown> = {}) =>
  ({
    id,
    type: 'contact.created',
    orgId: 'org-1',
    occurredAt: '2030-09-01T12:00:00.000Z',
    data,
  }) satisfies WebhookEvent;

/** A sink whose organization takes every event, over the given queue. */
const sinkOver = (queue: QueueSender) =>
  new QueuedWebhookEventSink({
    subscriptions: {
      subscribedTypes: async () => new Set(['contact.created'] as const),
    },
    queue: () => queue,
    clock: { now: () => new Date('2030-09-01T12:00:00.000Z') },
  });

/** A queue that keeps what it takes and refuses the events named. */
const refusingQueue = (refuse: readonly string[]) => {
  const sent: unknown[] = [];
  const queue: QueueSender & { sent: unknown[] } = {
    sent,
    send: async () => {
      throw new Error('sent one by one');
    },
    sendBatch: async (messages: readonly QueueMessage[]) => {
      const refused = messages.filter(({ message }) =>
        refuse.includes((message as WebhookEvent).id),
      );
      sent.push(
        ...messages
          .filter((entry) => !refused.includes(entry))
          .map(({ message }) => message),
      );
      if (refused.length > 0) {
        throw new MessagesRefusedError(
          refused.map(({ message }) => ({
            message,
            code: 'InvalidParameterValue',
            reason: 'Message must be shorter than 262144 bytes.',
          })),
        );
      }
    },
  };
  return queue;
};

describe('the webhook event sink', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('drops and logs the events the queue refuses, and sends every other', async () => {
    // Arrange: 12 events, two batches; one refused in each.
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => {});
    const events = Array.from({ length: 12 }, (_, n) => event(`evt_${n}`));
    const queue = refusingQueue(['evt_3', 'evt_11']);

    // Act
    await sinkOver(queue).publish(events);

    // Assert
    expect(queue.sent.map((sent) => (sent as WebhookEvent).id)).toEqual(
      events
        .map(({ id }) => id)
        .filter((id) => id !== 'evt_3' && id !== 'evt_11'),
    );
    expect(logged.mock.calls).toEqual(
      ['evt_3', 'evt_11'].map((eventId) => [
        'The queue refused a webhook event: dropped',
        {
          orgId: 'org-1',
          eventId,
          type: 'contact.created',
          code: 'InvalidParameterValue',
          reason: 'Message must be shorter than 262144 bytes.',
        },
      ]),
    );
  });

  it('lets through an error a retry may cure', async () => {
    // Arrange
    const queue: QueueSender = {
      send: async () => {},
      sendBatch: async () => {
        throw new Error('throttled');
      },
    };

    // Act
    const published = sinkOver(queue).publish([event('evt_1')]);

    // Assert
    await expect(published).rejects.toThrow('throttled');
  });

  it('measures an event as the body it is sent as, escapes included', async () => {
    // Arrange: 30,000 emoji are 120 KB of JSON, 360 KB once escaped.
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => {});
    const large = event('evt_large', { firstName: '🎉'.repeat(30_000) });
    expect(Buffer.byteLength(JSON.stringify(large))).toBeLessThan(
      MAX_PAYLOAD_BYTES,
    );
    const queue = refusingQueue([]);

    // Act
    await sinkOver(queue).publish([large, event('evt_small')]);

    // Assert
    expect(queue.sent.map((sent) => (sent as WebhookEvent).id)).toEqual([
      'evt_small',
    ]);
    expect(logged).toHaveBeenCalledWith(
      'A webhook event is too large to deliver: dropped',
      expect.objectContaining({ eventId: 'evt_large', bytes: 360_123 }),
    );
  });
});
