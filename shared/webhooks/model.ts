/**
 * The delivery side of webhooks, as data: an organization's endpoints and
 * their signing secrets, one delivery per endpoint and event with its
 * attempts, each endpoint's health (the circuit that keeps a failing
 * endpoint from eating the consumer's capacity), and the numbers that
 * govern them all: caps, the retry schedule, the grace of a rolled secret,
 * when a failing endpoint is disabled, how long deliveries are kept.
 */
import type { WebhookEventType } from './events.ts';

/** Most endpoints an organization registers (Svix's default is 50 per app; Stripe's 16). */
export const MAX_WEBHOOKS = 20;

/** Longest endpoint URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 1_000;

/** Longest description of an endpoint, in characters. */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;

/** Random bytes of a signing secret (Standard Webhooks asks 24 to 64). */
export const SECRET_BYTES = 24;

/** How long a rolled secret keeps signing beside its successor. */
export const SECRET_GRACE_MS = 24 * 3_600_000;

/**
 * The wait after each failed attempt, in seconds: the Standard Webhooks
 * (Svix) schedule, lengthened to cover 72 hours — 5 s, 5 min, 30 min, 2 h,
 * 5 h, then 10 h seven times: 13 attempts over 77 h 35 min.
 */
export const RETRY_DELAYS_SECONDS: readonly number[] = [
  5,
  5 * 60,
  30 * 60,
  2 * 3600,
  5 * 3600,
  ...Array.from({ length: 7 }, () => 10 * 3600),
];

/** Attempts a delivery makes by itself before it gives up (13). */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * An endpoint whose every attempt failed for this long is disabled, with
 * its reason (Svix's rule: five days).
 */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3_600_000;

/**
 * A probe (the failing delivery whose retries test the endpoint) this late
 * is taken as lost (a schedule that never fired): the next delivery due
 * becomes the probe.
 */
export const PROBE_GRACE_MS = 15 * 60_000;

/**
 * An attempt this slow marks its endpoint slow: its deliveries move to the
 * slow lane (a queue and consumer of their own, one attempt per batch), so
 * that they never hold a batch of other organizations' deliveries.
 */
export const SLOW_ATTEMPT_MS = 1_000;

/** An attempt this fast marks a slow endpoint fast again. */
export const FAST_ATTEMPT_MS = 500;

/** How long an attempt holds its delivery: the attempt takes 5 s at most. */
export const ATTEMPT_LEASE_MS = 30_000;

/** The whole attempt (address lookup, connection, TLS, answer): 5 s. */
export const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * The release of a recovered endpoint's parked deliveries, paced like a
 * slow start: the first page is small, each next one twice the last (up
 * to the largest), one page per pause — long enough for the page's
 * attempts to be made (they take 5 s at most) — and the release stops as
 * soon as one of them failed (the circuit open again). An endpoint back
 * after an hour takes its backlog at a rate it shows it can bear, rather
 * than all at once (which, measured, timed out and reopened the circuit).
 */
export const RELEASE_FIRST_PAGE = 10;

/** The largest page of a release. */
export const RELEASE_LARGEST_PAGE = 400;

/** Seconds between two pages of a release (a page's attempts take 5 s at most). */
export const RELEASE_PAUSE_SECONDS = 6;

/** Most bytes of an endpoint's answer read (the rest is dropped unread). */
export const MAX_RESPONSE_BYTES = 4_096;

/** Most characters of an answer's body kept in the delivery log. */
export const MAX_LOGGED_RESPONSE_CHARS = 1_000;

/** Most characters of an attempt's error kept in the delivery log. */
export const MAX_ERROR_CHARS = 500;

/**
 * Largest body sent, in bytes: what one SQS message carries (the event
 * reaches the fan-out in one).
 */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Attempts a delivery's log keeps (the oldest beyond are dropped). */
export const MAX_LOGGED_ATTEMPTS = 30;

/** How long deliveries, their events and their payloads are kept: 30 days. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;

/** One signing secret of an endpoint. */
export interface WebhookSecret {
  /** `whsec_` and the base64 of the key's bytes. */
  value: string;
  createdAt: string;
  /** When a rolled secret stops signing (absent: the current one). */
  expiresAt?: string;
}

/** An endpoint an organization registered. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description?: string;
  /** The event types it takes, in the catalogue's order. */
  events: WebhookEventType[];
  enabled: boolean;
  /** Why it is disabled (by a call, or after failing for days). */
  disabledReason?: string;
  disabledAt?: string;
  /** Newest first: the current secret, then one rolled (in its grace). */
  secrets: WebhookSecret[];
  createdAt: string;
  updatedAt: string;
  /** Bumped by every write: each one is conditional on it. */
  version: number;
}

/** What became of one attempt. */
export interface DeliveryAttempt {
  /** 1 for the first; manual attempts are numbered in the same sequence. */
  number: number;
  at: string;
  /** The answer's status; absent when none came (timeout, refusal…). */
  statusCode?: number;
  latencyMs: number;
  /** Why it failed; absent on success. */
  error?: string;
  /** The start of the answer's body (for the log). */
  responseBody?: string;
  /** A redelivery someone asked for, outside the retry schedule. */
  manual: boolean;
}

/** Where a delivery stands. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event for one endpoint: its attempts and what comes next. */
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: WebhookEventType;
  occurredAt: string;
  createdAt: string;
  status: DeliveryStatus;
  /** The number of the next scheduled attempt (attempts by the schedule + 1). */
  nextAttempt: number;
  /** When it falls due (absent once the delivery is over). */
  nextAttemptAt?: string;
  /**
   * Waiting for its endpoint to recover (the circuit is open): released
   * when a probe succeeds, or the endpoint is disabled.
   */
  parked?: boolean;
  /** Why it waits (parked), or why it stopped (given up, not sent). */
  reason?: string;
  attempts: DeliveryAttempt[];
  /** The attempt under way: who holds it, and until when. */
  lease?: { token: string; until: string };
  /** A redelivery asked for and not made yet. */
  redelivery?: string;
  version: number;
}

/**
 * An endpoint's health: consecutive failures, since when, and the probe —
 * the failing delivery whose own retries test the endpoint while every
 * other delivery due waits (parked).
 */
export interface WebhookHealth {
  failures: number;
  failingSince?: string;
  lastError?: string;
  probe?: { deliveryId: string; dueAt: string };
  /** Its last attempts took a second or more: its deliveries take the slow lane. */
  slow?: boolean;
  /** When it last changed (its item expires a month later). */
  updatedAt?: string;
  version: number;
}

/** A healthy endpoint's health (no item stored yet). */
export const HEALTHY: WebhookHealth = { failures: 0, version: 0 };

/** A delivery waiting for its endpoint to recover. */
export interface ParkedDelivery {
  deliveryId: string;
  /** Its event (its attempt reads the body with the delivery). */
  eventId: string;
  /** The attempt it makes once released. */
  attempt: number;
  parkedAt: string;
}

/** An event as stored for its deliveries: the exact body every attempt signs. */
export interface StoredWebhookEvent {
  id: string;
  type: WebhookEventType;
  occurredAt: string;
  /** The JSON body, as sent. */
  body: string;
}
