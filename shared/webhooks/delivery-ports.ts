/**
 * Ports of the delivery side of webhooks: the endpoints' store (with the
 * per-organization summary of the types they take), the deliveries' store
 * (events, deliveries, endpoint health, parked deliveries), the HTTP client
 * that calls endpoints, and the rules an endpoint URL follows here.
 */
import type { CoreDeps, Page, PageRequest, QueueSender } from '../ports.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import type { WebhookEventType } from './events.ts';
import type {
  ParkedDelivery,
  StoredWebhookEvent,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookHealth,
} from './model.ts';

/**
 * An organization's endpoints. Every write is one transaction with the
 * organization's subscription summary (a counter per event type of its
 * enabled endpoints), so the summary is always the union of their types.
 */
export interface WebhookRepository {
  /** `RuleViolationError` `webhook.limitReached` past the cap. */
  create(orgId: string, endpoint: WebhookEndpoint): Promise<void>;
  get(orgId: string, webhookId: string): Promise<WebhookEndpoint | undefined>;
  /** Newest first, with the total. */
  page(orgId: string, request: PageRequest): Promise<Page<WebhookEndpoint>>;
  /** Every endpoint of the organization (at most the cap), strongly consistent. */
  all(orgId: string): Promise<WebhookEndpoint[]>;
  /**
   * Replaces `before` by `after` (whose version is one more); false, with
   * nothing written, when it changed meanwhile. `resetHealth` forgets its
   * failures (an endpoint enabled again starts afresh).
   */
  update(
    orgId: string,
    before: WebhookEndpoint,
    after: WebhookEndpoint,
    options?: { resetHealth?: boolean },
  ): Promise<boolean>;
  /** False, with nothing written, when it changed since it was read. */
  delete(orgId: string, endpoint: WebhookEndpoint): Promise<boolean>;
}

/** The summary emitters read: the types some enabled endpoint takes. */
export interface WebhookSubscriptionReader {
  subscribedTypes(orgId: string): Promise<ReadonlySet<WebhookEventType>>;
}

/** What one attempt reads before it calls. */
export interface AttemptContext {
  delivery?: WebhookDelivery;
  endpoint?: WebhookEndpoint;
  health: WebhookHealth;
  event?: StoredWebhookEvent;
}

/** A page of deliveries, newest first, walked by the last one's id. */
export interface DeliveryPage {
  items: WebhookDelivery[];
  more: boolean;
}

/** Deliveries, the events they carry, endpoint health and parked deliveries. */
export interface WebhookDeliveryRepository {
  /** Stores an event's body for its deliveries (the same event again: no change). */
  putEvent(orgId: string, event: StoredWebhookEvent): Promise<void>;
  getEvent(
    orgId: string,
    eventId: string,
  ): Promise<StoredWebhookEvent | undefined>;
  /** Creates the delivery unless it exists; false when it did. */
  create(orgId: string, delivery: WebhookDelivery): Promise<boolean>;
  get(
    orgId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<WebhookDelivery | undefined>;
  /** Newest first, after the delivery `after` (an id) if given. */
  page(
    orgId: string,
    webhookId: string,
    request: { limit: number; after?: string },
  ): Promise<DeliveryPage>;
  /** Replaces it on its version; false when it changed meanwhile. */
  update(
    orgId: string,
    before: WebhookDelivery,
    after: WebhookDelivery,
  ): Promise<boolean>;
  /**
   * What an attempt reads, in one request (strongly consistent): the
   * delivery, its endpoint, the endpoint's health and, when its id is
   * known, the event's body.
   */
  forAttempt(
    orgId: string,
    webhookId: string,
    deliveryId: string,
    eventId?: string,
  ): Promise<AttemptContext>;
  health(orgId: string, webhookId: string): Promise<WebhookHealth>;
  /** Replaces it on its version (0: none stored); false when it changed. */
  updateHealth(
    orgId: string,
    webhookId: string,
    before: WebhookHealth,
    after: WebhookHealth,
  ): Promise<boolean>;
  park(orgId: string, webhookId: string, entry: ParkedDelivery): Promise<void>;
  /** The oldest parked deliveries, at most `limit`. */
  parked(
    orgId: string,
    webhookId: string,
    limit: number,
  ): Promise<ParkedDelivery[]>;
  unpark(
    orgId: string,
    webhookId: string,
    deliveryIds: readonly string[],
  ): Promise<void>;
}

/** One request to an endpoint. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What an endpoint answered, or why it could not. */
export interface WebhookResponse {
  /** Absent when no answer came (refused address, timeout, reset…). */
  statusCode?: number;
  /** The start of the answer's body (a few KB at most). */
  body?: string;
  /** Why no answer came. */
  error?: string;
  latencyMs: number;
}

/**
 * Calls endpoints: one POST, no redirect followed, the whole call within
 * the attempt's timeout, the answer read only so far, and only to an
 * address the rules allow (resolved, checked, and connected to as checked).
 */
export interface WebhookSender {
  post(request: WebhookRequest): Promise<WebhookResponse>;
}

/**
 * What an endpoint URL may be here: https only on AWS; the local stack
 * takes http and loopback addresses, so its inbox can receive.
 */
export interface WebhookUrlRules {
  httpsOnly: boolean;
  allowLoopback: boolean;
}

/** The stores of webhook delivery, as the deps aggregate holds them. */
export interface WebhookStoresDeps {
  webhooks: WebhookRepository;
  webhookDeliveries: WebhookDeliveryRepository;
}

/** The guarded HTTP client and the URL rules of this stack. */
export interface WebhookCallsDeps {
  webhookSender: WebhookSender;
  webhookUrlRules: WebhookUrlRules;
}

/** What the endpoint routes need. */
export interface WebhookEndpointDeps extends Pick<CoreDeps, 'clock' | 'ids'> {
  webhooks: WebhookRepository;
  webhookUrlRules: WebhookUrlRules;
}

/** What sending to the deliveries queue needs. */
export interface DeliveryQueueDeps {
  queues: { webhookDeliveries: QueueSender };
}

/** What the delivery log's routes need (redeliver and test calls queue). */
export type WebhookDeliveryLogDeps = WebhookEndpointDeps &
  DeliveryQueueDeps & { webhookDeliveries: WebhookDeliveryRepository };

/** What the fan-out needs. */
export type FanOutDeps = Pick<CoreDeps, 'clock'> &
  DeliveryQueueDeps & {
    webhooks: Pick<WebhookRepository, 'all'>;
    webhookDeliveries: WebhookDeliveryRepository;
  };

/** What an attempt needs. */
export type AttemptDeps = Pick<CoreDeps, 'clock' | 'ids'> & {
  /**
   * The deliveries queue; the slow lane's, where the deliveries consumer
   * passes on the attempts to slow endpoints (none: it makes them itself).
   */
  queues: {
    webhookDeliveries: QueueSender;
    webhookSlowDeliveries?: QueueSender;
  };
} & SchedulingDeps & {
    webhooks: WebhookRepository;
    webhookDeliveries: WebhookDeliveryRepository;
    webhookSender: WebhookSender;
    /** Waits up to this long go by queue delay, longer ones by a schedule. */
    queueDelayMaxSeconds: number;
  };
