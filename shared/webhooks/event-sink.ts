/**
 * Where emitters hand events over (the `webhookEvents` binding): the event
 * types an organization's enabled endpoints take, read from its
 * subscription summary and remembered by the container for 5 seconds, and
 * the events someone takes sent to the fan-out queue, ten to a request,
 * each in its organization's fair-queue group. An organization without
 * webhooks costs its emitters one read per container every 5 seconds, and
 * no message. An event that could never be sent (too large, refused by the
 * queue) is logged and dropped, never a failure of its emitter.
 */
import { messageBytes } from '../message-body.ts';
import { logger } from '../observability.ts';
import {
  type Clock,
  MessagesRefusedError,
  type QueueSender,
} from '../ports.ts';
import type { WebhookSubscriptionReader } from './delivery-ports.ts';
import type { WebhookEvent, WebhookEventType } from './events.ts';
import { MAX_PAYLOAD_BYTES } from './model.ts';
import type { WebhookEventSink } from './ports.ts';
import { sendAll } from './send-all.ts';

/**
 * How long a container trusts what it read of an organization's
 * subscriptions: an endpoint created, changed or disabled is seen by
 * emitters that much later at most.
 */
export const SUBSCRIPTIONS_CACHE_MS = 5_000;

/** Organizations remembered at most (then forgotten all at once). */
const MAX_REMEMBERED = 10_000;

/** The sink over the summary and the fan-out queue. */
export class QueuedWebhookEventSink implements WebhookEventSink {
  private readonly remembered = new Map<
    string,
    { at: number; types: Promise<ReadonlySet<WebhookEventType>> }
  >();

  /**
   * @param options.queue the fan-out queue, asked for when first sent to
   */
  constructor(
    private readonly options: {
      subscriptions: WebhookSubscriptionReader;
      queue: () => QueueSender | Promise<QueueSender>;
      clock: Clock;
      cacheMs?: number;
    },
  ) {}

  wanted(orgId: string): Promise<ReadonlySet<WebhookEventType>> {
    const now = this.options.clock.now().getTime();
    const cacheMs = this.options.cacheMs ?? SUBSCRIPTIONS_CACHE_MS;
    const known = this.remembered.get(orgId);
    // A clock moved back (the local stack's reset) reads again too.
    if (known && now >= known.at && now - known.at < cacheMs) {
      return known.types;
    }
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    const types = this.options.subscriptions.subscribedTypes(orgId);
    this.remembered.set(orgId, { at: now, types });
    // A failed read is not remembered: the next call reads again.
    types.catch(() => {
      if (this.remembered.get(orgId)?.types === types) {
        this.remembered.delete(orgId);
      }
    });
    return types;
  }

  async publish(events: readonly WebhookEvent[]): Promise<void> {
    const wanted = new Map(
      await Promise.all(
        [...new Set(events.map((event) => event.orgId))].map(
          async (orgId) => [orgId, await this.wanted(orgId)] as const,
        ),
      ),
    );
    const sent = events.filter((event) => {
      if (!wanted.get(event.orgId)?.has(event.type)) return false;
      // Measured as the body it is sent as (escapes make it longer).
      const bytes = messageBytes(event);
      if (bytes <= MAX_PAYLOAD_BYTES) return true;
      // It could never be delivered: retrying its fact would not help.
      logger.error('A webhook event is too large to deliver: dropped', {
        orgId: event.orgId,
        eventId: event.id,
        type: event.type,
        bytes,
      });
      return false;
    });
    if (sent.length === 0) return;
    try {
      await sendAll(
        await this.options.queue(),
        sent.map((event) => ({
          message: event,
          options: { group: event.orgId },
        })),
      );
    } catch (error) {
      if (!(error instanceof MessagesRefusedError)) throw error;
      // Every other event was sent; these would be refused again, and
      // failing would hold the emitter's stream shard on them.
      for (const { message, code, reason } of error.refused) {
        const event = message as WebhookEvent;
        logger.error('The queue refused a webhook event: dropped', {
          orgId: event.orgId,
          eventId: event.id,
          type: event.type,
          code,
          reason,
        });
      }
    }
  }
}
