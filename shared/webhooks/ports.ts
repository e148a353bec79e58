/**
 * Ports of webhooks, as the code that finds events sees them: where events
 * go, and which ones anybody wants. The delivery side (endpoints, signing,
 * attempts, the log) declares its own stores beside it.
 */
import type { WebhookEvent, WebhookEventType } from './events.ts';

/**
 * Where events go to be delivered. Emitters ask first which types the
 * organization's enabled endpoints take, and build (and read for) only
 * those: an organization without webhooks costs its emitters one cached
 * read, and no message.
 */
export interface WebhookEventSink {
  /**
   * The event types some enabled endpoint of the organization takes now;
   * remembered by a container for a few seconds (an endpoint created or
   * changed is seen that much later).
   */
  wanted(orgId: string): Promise<ReadonlySet<WebhookEventType>>;
  /**
   * Hands events over for delivery, at least once: when it resolves, every
   * event is stored or queued. Events no endpoint takes are dropped.
   */
  publish(events: readonly WebhookEvent[]): Promise<void>;
}

/** What emitters need. */
export interface WebhookEmitDeps {
  webhookEvents: WebhookEventSink;
}
