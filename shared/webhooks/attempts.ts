/**
 * One attempt of one delivery, as the deliveries consumer makes it, and
 * what follows: the attempt logged, the next one scheduled (or the
 * delivery given up), the endpoint's health moved.
 *
 * The circuit of an endpoint: once an attempt failed, that delivery
 * becomes the endpoint's probe — its own retries test the endpoint — and
 * every other delivery that falls due meanwhile is parked instead of
 * spending up to 5 s on an endpoint that is down: it waits, without using
 * its attempts, until the probe (or any attempt) succeeds and releases the
 * parked ones, or the endpoint is disabled after failing for 5 days
 * (which fails them). A probe that gives up hands the role to the oldest
 * parked delivery; a probe overdue by 15 minutes (its schedule lost) is
 * replaced by the next delivery that falls due.
 *
 * At least once, and a repeat harmless: an attempt claims its delivery
 * (a lease on its version) before calling, so two copies of a message make
 * one call; a crash after the call and before the log is written calls
 * again once the lease is over (receivers drop the repeat by its
 * `webhook-id`); a message whose attempt was logged but whose next attempt
 * may not have been sent sends it again.
 */
import { setTimeout } from 'node:timers/promises';
import { logger } from '../observability.ts';
import type { AttemptDeps } from './delivery-ports.ts';
import {
  ATTEMPT_LEASE_MS,
  type DeliveryAttempt,
  DISABLE_AFTER_FAILING_MS,
  FAST_ATTEMPT_MS,
  MAX_ATTEMPTS,
  MAX_ERROR_CHARS,
  MAX_LOGGED_ATTEMPTS,
  MAX_LOGGED_RESPONSE_CHARS,
  PROBE_GRACE_MS,
  RELEASE_FIRST_PAGE,
  RELEASE_LARGEST_PAGE,
  RELEASE_PAUSE_SECONDS,
  RETRY_DELAYS_SECONDS,
  SLOW_ATTEMPT_MS,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookHealth,
} from './model.ts';
import type {
  AttemptMessage,
  DeliveryMessage,
  RedeliverMessage,
  ReleaseMessage,
} from './queues.ts';
import { nextAttemptAt, sendAttemptAt } from './retries.ts';
import { sendAll } from './send-all.ts';
import { signingSecrets, webhookHeaders } from './signing.ts';

/** Why a delivery waits, or stopped, without an attempt of its own. */
export const REASONS = {
  parked:
    'Waits for its endpoint, which is failing: it goes out once an attempt to the endpoint succeeds',
  gaveUp: `Gave up after ${MAX_ATTEMPTS} attempts`,
  disabled: 'Not sent: its endpoint is disabled',
  eventGone: 'Not sent: its event is no longer kept',
} as const;

/**
 * Rounds of a read-change-write on a delivery or a health before giving
 * up, with a pause between them (10 ms doubling up to 640 ms, drawn at
 * random between one and two times its step): many attempts to one
 * endpoint that fail together all write its health at once.
 */
const WRITE_ROUNDS = 8;

/** The pause before round `round` (2 and on) of a rewrite. */
const pauseBefore = (round: number) =>
  setTimeout(10 * 2 ** (round - 2) * (1 + Math.random()));

/** What one attempt came to. */
interface Outcome {
  attempt: DeliveryAttempt;
  succeeded: boolean;
}

const cut = (text: string, chars: number) =>
  text.length > chars ? `${text.slice(0, chars - 1)}…` : text;

/**
 * Re-reads and rewrites until the write lands (or the change is moot).
 * `known`: the item as this attempt last wrote it, tried first without a
 * read (the usual case: nobody wrote it since).
 */
const rewrite = async <T>(
  read: () => Promise<T | undefined>,
  change: (current: T) => T | undefined,
  write: (before: T, after: T) => Promise<boolean>,
  known?: T,
): Promise<T | undefined> => {
  for (let round = 1; round <= WRITE_ROUNDS; round++) {
    if (round > 1) await pauseBefore(round);
    const current = round === 1 && known !== undefined ? known : await read();
    if (current === undefined) return undefined;
    const after = change(current);
    if (after === undefined) return current;
    if (await write(current, after)) return after;
  }
  throw new Error(
    `A webhook delivery write lost its race ${WRITE_ROUNDS} times`,
  );
};

/** Makes one POST to the endpoint, signed, and reads what it came to. */
const post = async (
  deps: Pick<AttemptDeps, 'webhookSender' | 'clock'>,
  endpoint: WebhookEndpoint,
  event: { id: string; body: string },
  number: number,
  manual: boolean,
): Promise<Outcome> => {
  const now = deps.clock.now();
  const response = await deps.webhookSender.post({
    url: endpoint.url,
    body: event.body,
    headers: webhookHeaders({
      id: event.id,
      body: event.body,
      secrets: signingSecrets(endpoint.secrets, now),
      now,
    }),
  });
  const { statusCode } = response;
  const succeeded =
    statusCode !== undefined && statusCode >= 200 && statusCode < 300;
  const error = succeeded
    ? undefined
    : (response.error ??
      (statusCode !== undefined && statusCode >= 300 && statusCode < 400
        ? `HTTP ${statusCode}: a redirect, which is never followed`
        : `HTTP ${statusCode}`));
  return {
    succeeded,
    attempt: {
      number,
      at: now.toISOString(),
      ...(statusCode !== undefined ? { statusCode } : {}),
      latencyMs: Math.max(0, Math.round(response.latencyMs)),
      ...(error ? { error: cut(error, MAX_ERROR_CHARS) } : {}),
      ...(response.body
        ? { responseBody: cut(response.body, MAX_LOGGED_RESPONSE_CHARS) }
        : {}),
      manual,
    },
  };
};

/** The number the next attempt of a delivery takes in its log. */
const numberOfNext = (delivery: WebhookDelivery): number =>
  (delivery.attempts.at(-1)?.number ?? 0) + 1;

/** The log with one attempt more (the oldest dropped past the bound). */
const logged = (
  delivery: WebhookDelivery,
  attempt: DeliveryAttempt,
): DeliveryAttempt[] =>
  [...delivery.attempts, attempt].slice(-MAX_LOGGED_ATTEMPTS);

/** A delivery without what only a pending one carries. */
const settled = (
  delivery: WebhookDelivery,
  status: 'succeeded' | 'failed',
  reason?: string,
): WebhookDelivery => {
  const {
    nextAttemptAt: _at,
    parked: _parked,
    lease: _lease,
    reason: _reason,
    ...rest
  } = delivery;
  return { ...rest, status, ...(reason ? { reason } : {}) };
};

/**
 * Whether an endpoint is slow after an attempt that took `latencyMs`: a
 * second or more makes it slow, under half a second fast again, and in
 * between it stays as it was (no flapping).
 */
const slowAfter = (was: boolean | undefined, latencyMs: number): boolean =>
  latencyMs >= SLOW_ATTEMPT_MS
    ? true
    : latencyMs < FAST_ATTEMPT_MS
      ? false
      : Boolean(was);

/** A health with the slow mark an attempt gives it (absent when fast). */
const withSlowness = <H extends WebhookHealth>(
  health: H,
  latencyMs: number,
): H => {
  const { slow: _slow, ...rest } = health;
  return slowAfter(health.slow, latencyMs)
    ? ({ ...rest, slow: true } as H)
    : (rest as H);
};

/** Whether an endpoint's probe still holds the circuit. */
const probeHolds = (health: WebhookHealth, deliveryId: string, now: Date) =>
  health.probe !== undefined &&
  health.probe.deliveryId !== deliveryId &&
  now.getTime() <= Date.parse(health.probe.dueAt) + PROBE_GRACE_MS;

/** Whether an endpoint's circuit is open: a probe tests it, and is not overdue. */
const circuitOpen = (health: WebhookHealth, now: Date) =>
  health.probe !== undefined &&
  now.getTime() <= Date.parse(health.probe.dueAt) + PROBE_GRACE_MS;

/**
 * Sends the parked deliveries of an endpoint on their way again: the
 * first page at once, or the page named after its pause.
 */
const requestRelease = (
  deps: Pick<AttemptDeps, 'queues'>,
  orgId: string,
  webhookId: string,
  next: { page: number; delaySeconds?: number } | undefined = undefined,
) => {
  const message: ReleaseMessage = {
    kind: 'release',
    orgId,
    webhookId,
    ...(next ? { page: next.page } : {}),
  };
  return deps.queues.webhookDeliveries.send(message, {
    group: orgId,
    ...(next?.delaySeconds ? { delaySeconds: next.delaySeconds } : {}),
  });
};

/**
 * The endpoint answered: the circuit closes (failures forgotten) and, if
 * it was failing, the deliveries parked behind it are released.
 */
const recordSuccess = async (
  deps: AttemptDeps,
  orgId: string,
  webhookId: string,
  latencyMs: number,
): Promise<void> => {
  let wasFailing = false;
  await rewrite(
    () => deps.webhookDeliveries.health(orgId, webhookId),
    (health) => {
      wasFailing = health.failures > 0 || health.probe !== undefined;
      const slow = slowAfter(health.slow, latencyMs);
      if (!wasFailing && slow === Boolean(health.slow)) return undefined;
      return {
        failures: 0,
        ...(slow ? { slow } : {}),
        updatedAt: deps.clock.now().toISOString(),
        version: health.version + 1,
      };
    },
    (before, after) =>
      deps.webhookDeliveries.updateHealth(orgId, webhookId, before, after),
  );
  if (wasFailing) await requestRelease(deps, orgId, webhookId);
};

/**
 * Disables an endpoint that failed for 5 days, saying why; its parked
 * deliveries are released (and fail, finding it disabled).
 */
const disableFailing = async (
  deps: AttemptDeps,
  orgId: string,
  webhookId: string,
  health: WebhookHealth,
): Promise<void> => {
  const now = deps.clock.now();
  const reason = `Every attempt failed for 5 days, since ${health.failingSince}${health.lastError ? `; the last: ${cut(health.lastError, 200)}` : ''}`;
  const disabled = await rewrite(
    () => deps.webhooks.get(orgId, webhookId),
    (endpoint) =>
      endpoint.enabled
        ? {
            ...endpoint,
            enabled: false,
            disabledReason: reason,
            disabledAt: now.toISOString(),
            updatedAt: now.toISOString(),
            version: endpoint.version + 1,
          }
        : undefined,
    (before, after) => deps.webhooks.update(orgId, before, after),
  );
  if (disabled) {
    logger.warn('A webhook endpoint failed for 5 days: disabled', {
      orgId,
      webhookId,
      failingSince: health.failingSince,
    });
    await requestRelease(deps, orgId, webhookId);
  }
};

/**
 * Hands the probe of a failing endpoint to its oldest parked delivery (the
 * one that held it gave up): that delivery is released, its attempt due
 * after the longest wait of the schedule.
 */
const handOverProbe = async (
  deps: AttemptDeps,
  orgId: string,
  webhookId: string,
): Promise<{ deliveryId: string; dueAt: string } | undefined> => {
  const [next] = await deps.webhookDeliveries.parked(orgId, webhookId, 1);
  if (!next) return undefined;
  const longest = RETRY_DELAYS_SECONDS.at(-1) ?? 0;
  const dueAt = new Date(deps.clock.now().getTime() + longest * 1000);
  await sendAttemptAt(
    deps,
    {
      kind: 'attempt',
      orgId,
      webhookId,
      deliveryId: next.deliveryId,
      eventId: next.eventId,
      attempt: next.attempt,
    },
    dueAt,
  );
  await deps.webhookDeliveries.unpark(orgId, webhookId, [next.deliveryId]);
  return { deliveryId: next.deliveryId, dueAt: dueAt.toISOString() };
};

/**
 * The endpoint failed: one failure more, failing since the first; this
 * delivery becomes the probe unless another holds it; past 5 days of
 * failures the endpoint is disabled.
 */
const recordFailure = async (
  deps: AttemptDeps,
  orgId: string,
  delivery: WebhookDelivery,
  outcome: Outcome,
  next: Date | undefined,
): Promise<void> => {
  const now = deps.clock.now();
  const { webhookId } = delivery;
  const before = await deps.webhookDeliveries.health(orgId, webhookId);
  let probe = before.probe;
  if (!probeHolds(before, delivery.id, now)) {
    probe = next
      ? { deliveryId: delivery.id, dueAt: next.toISOString() }
      : await handOverProbe(deps, orgId, webhookId);
  }
  const health = await rewrite(
    () => deps.webhookDeliveries.health(orgId, webhookId),
    (current) => {
      const holder = probeHolds(current, delivery.id, now)
        ? current.probe
        : probe;
      return withSlowness(
        {
          failures: current.failures + 1,
          failingSince: current.failingSince ?? outcome.attempt.at,
          ...(outcome.attempt.error
            ? { lastError: outcome.attempt.error }
            : {}),
          ...(holder ? { probe: holder } : {}),
          ...(current.slow ? { slow: true } : {}),
          updatedAt: now.toISOString(),
          version: current.version + 1,
        },
        outcome.attempt.latencyMs,
      );
    },
    (was, after) =>
      deps.webhookDeliveries.updateHealth(orgId, webhookId, was, after),
  );
  if (
    health?.failingSince &&
    now.getTime() - Date.parse(health.failingSince) >= DISABLE_AFTER_FAILING_MS
  ) {
    await disableFailing(deps, orgId, webhookId, health);
  }
};

/**
 * A repeat of an attempt already logged: when the endpoint's health was
 * not written since the delivery's last attempt (a crash, or a health
 * write that lost every round, came between the log and the health), it
 * is written now. Else a circuit could stay open behind a probe that
 * already succeeded, or name a probe's old due time.
 */
const repairHealth = async (
  deps: AttemptDeps,
  orgId: string,
  delivery: WebhookDelivery,
  health: WebhookHealth,
): Promise<void> => {
  const last = delivery.attempts.at(-1);
  if (!last || last.manual) return;
  if (health.updatedAt && Date.parse(health.updatedAt) >= Date.parse(last.at)) {
    return;
  }
  const { statusCode } = last;
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) {
    if (health.failures > 0 || health.probe) {
      await recordSuccess(deps, orgId, delivery.webhookId, last.latencyMs);
    }
    return;
  }
  const next =
    delivery.status === 'pending' && delivery.nextAttemptAt
      ? new Date(delivery.nextAttemptAt)
      : undefined;
  await recordFailure(
    deps,
    orgId,
    delivery,
    { attempt: last, succeeded: false },
    next,
  );
};

/**
 * Parks a delivery behind its failing endpoint's probe. Then looks at the
 * health again: a release that ran between the first look and the park
 * could not see it, so a circuit closed meanwhile unparks it at once.
 * Returns whether it stays parked.
 */
const park = async (
  deps: AttemptDeps,
  orgId: string,
  delivery: WebhookDelivery,
  dueAt: string,
): Promise<boolean> => {
  const now = deps.clock.now();
  await deps.webhookDeliveries.park(orgId, delivery.webhookId, {
    deliveryId: delivery.id,
    eventId: delivery.eventId,
    attempt: delivery.nextAttempt,
    parkedAt: now.toISOString(),
  });
  if (!delivery.parked || delivery.nextAttemptAt !== dueAt) {
    await deps.webhookDeliveries.update(orgId, delivery, {
      ...delivery,
      parked: true,
      nextAttemptAt: dueAt,
      reason: REASONS.parked,
      version: delivery.version + 1,
    });
  }
  const health = await deps.webhookDeliveries.health(orgId, delivery.webhookId);
  if (probeHolds(health, delivery.id, now)) return true;
  await deps.webhookDeliveries.unpark(orgId, delivery.webhookId, [delivery.id]);
  return false;
};

/**
 * Attempt `message.attempt` of a delivery, by its schedule (or a test
 * call's first): skipped when the delivery moved on (a repeat), parked
 * when its endpoint is failing and another delivery probes it, else made
 * and logged, and the next one scheduled.
 */
export const attemptDelivery = async (
  deps: AttemptDeps,
  message: AttemptMessage,
  options: { parkedOnce?: boolean; lane?: Lane } = {},
): Promise<void> => {
  const { orgId, webhookId, deliveryId } = message;
  // 1. The delivery, its endpoint, the endpoint's health and the event's
  // body, in one request.
  const { delivery, endpoint, health, event } =
    await deps.webhookDeliveries.forAttempt(
      orgId,
      webhookId,
      deliveryId,
      message.eventId,
    );
  if (!delivery) return;
  if (
    delivery.status !== 'pending' ||
    delivery.nextAttempt !== message.attempt
  ) {
    await repairHealth(deps, orgId, delivery, health);
  }
  if (delivery.status !== 'pending') return;
  if (delivery.nextAttempt !== message.attempt) {
    // Logged already: make sure the next one was sent (a crash may have
    // come between the log and the send).
    if (
      delivery.nextAttempt === message.attempt + 1 &&
      delivery.nextAttemptAt &&
      !delivery.parked
    ) {
      await sendAttemptAt(
        deps,
        {
          kind: 'attempt',
          orgId,
          webhookId,
          deliveryId,
          eventId: delivery.eventId,
          attempt: delivery.nextAttempt,
        },
        new Date(delivery.nextAttemptAt),
      );
    }
    return;
  }
  // A deleted endpoint's deliveries stop, and expire with their log.
  if (!endpoint) return;
  const now = deps.clock.now();
  if (!endpoint.enabled) {
    await rewrite(
      () => deps.webhookDeliveries.get(orgId, webhookId, deliveryId),
      (current) =>
        current.status === 'pending'
          ? {
              ...settled(current, 'failed', REASONS.disabled),
              version: current.version + 1,
            }
          : undefined,
      (before, after) => deps.webhookDeliveries.update(orgId, before, after),
    );
    return;
  }
  // 2. The circuit: while another delivery probes the failing endpoint,
  // this one waits (unless someone asked for it).
  if (!message.manual && probeHolds(health, deliveryId, now) && health.probe) {
    if (await park(deps, orgId, delivery, health.probe.dueAt)) return;
    if (options.parkedOnce) return;
    return attemptDelivery(deps, message, { ...options, parkedOnce: true });
  }
  // A slow endpoint's attempts go to the slow lane, where each holds no
  // one else's delivery.
  const slowLane = deps.queues.webhookSlowDeliveries;
  if (health.slow && options.lane !== 'slow' && slowLane) {
    await slowLane.send(message, { group: orgId });
    return;
  }
  if (delivery.lease && Date.parse(delivery.lease.until) > now.getTime()) {
    // Another consumer is making this very attempt.
    return;
  }
  // 3. The claim: this attempt is ours for 30 s.
  const token = deps.ids.id();
  const claimed: WebhookDelivery = {
    ...delivery,
    lease: {
      token,
      until: new Date(now.getTime() + ATTEMPT_LEASE_MS).toISOString(),
    },
    version: delivery.version + 1,
  };
  if (!(await deps.webhookDeliveries.update(orgId, delivery, claimed))) return;
  // 4. The call, with the body every attempt of the event sends (read
  // now if the message did not name the event).
  const body =
    event ?? (await deps.webhookDeliveries.getEvent(orgId, delivery.eventId));
  if (!body) {
    await deps.webhookDeliveries.update(orgId, claimed, {
      ...settled(claimed, 'failed', REASONS.eventGone),
      version: claimed.version + 1,
    });
    return;
  }
  const outcome = await post(
    deps,
    endpoint,
    body,
    numberOfNext(delivery),
    Boolean(message.manual),
  );
  // 5. The log, and what comes next: done, the next attempt, or given up.
  const next = outcome.succeeded
    ? undefined
    : nextAttemptAt(message.attempt, new Date(outcome.attempt.at));
  let ours = true;
  await rewrite(
    () => deps.webhookDeliveries.get(orgId, webhookId, deliveryId),
    (current) => {
      // The lease went to another attempt (this one overran it): its own
      // log and schedule stand.
      ours = current.lease?.token === token;
      if (!ours) return undefined;
      const withAttempt = {
        ...current,
        attempts: logged(current, outcome.attempt),
        version: current.version + 1,
      };
      if (outcome.succeeded) return settled(withAttempt, 'succeeded');
      if (!next) return settled(withAttempt, 'failed', REASONS.gaveUp);
      const {
        lease: _lease,
        parked: _parked,
        reason: _reason,
        ...rest
      } = withAttempt;
      return {
        ...rest,
        nextAttempt: message.attempt + 1,
        nextAttemptAt: next.toISOString(),
      };
    },
    (before, after) => deps.webhookDeliveries.update(orgId, before, after),
    claimed,
  );
  if (!ours) return;
  // 6. The endpoint's health, then the next attempt on its way.
  if (outcome.succeeded) {
    // A healthy endpoint, as read before the call, stays so: no write (a
    // failure of another attempt meanwhile is closed by the probe's
    // retry), unless its speed changed lanes.
    if (
      health.failures > 0 ||
      health.probe ||
      slowAfter(health.slow, outcome.attempt.latencyMs) !== Boolean(health.slow)
    ) {
      await recordSuccess(deps, orgId, webhookId, outcome.attempt.latencyMs);
    }
    return;
  }
  await recordFailure(deps, orgId, delivery, outcome, next);
  if (next) {
    await sendAttemptAt(
      deps,
      {
        kind: 'attempt',
        orgId,
        webhookId,
        deliveryId,
        eventId: delivery.eventId,
        attempt: message.attempt + 1,
      },
      next,
    );
  }
};

/**
 * A redelivery someone asked for: one attempt now, whatever the circuit
 * says, logged as manual. Its success ends the delivery (and closes the
 * circuit); its failure leaves the delivery where it was (its schedule
 * goes on, or it stays failed).
 */
export const redeliver = async (
  deps: AttemptDeps,
  message: RedeliverMessage,
): Promise<void> => {
  const { orgId, webhookId, deliveryId, token } = message;
  const context = await deps.webhookDeliveries.forAttempt(
    orgId,
    webhookId,
    deliveryId,
    message.eventId,
  );
  const { delivery, endpoint } = context;
  if (!delivery || delivery.redelivery !== token) return;
  const event =
    endpoint?.enabled &&
    (context.event ??
      (await deps.webhookDeliveries.getEvent(orgId, delivery.eventId)));
  const outcome =
    endpoint && event
      ? await post(deps, endpoint, event, numberOfNext(delivery), true)
      : undefined;
  await rewrite(
    () => deps.webhookDeliveries.get(orgId, webhookId, deliveryId),
    (current) => {
      if (current.redelivery !== token) return undefined;
      const { redelivery: _token, ...rest } = current;
      const after = { ...rest, version: current.version + 1 };
      if (!outcome) return after;
      const withAttempt = {
        ...after,
        attempts: logged(current, {
          ...outcome.attempt,
          number: numberOfNext(current),
        }),
      };
      return outcome.succeeded
        ? settled(withAttempt, 'succeeded')
        : withAttempt;
    },
    (before, after) => deps.webhookDeliveries.update(orgId, before, after),
  );
  if (outcome?.succeeded) {
    await recordSuccess(deps, orgId, webhookId, outcome.attempt.latencyMs);
  }
};

/**
 * Sends a page of an endpoint's parked deliveries on their way (their
 * attempts now), then asks for the next, twice as large, after a pause:
 * a slow start that stops as soon as the endpoint fails again (the
 * circuit open: the success that closes it starts another release). A
 * disabled or deleted endpoint's deliveries are released without pause:
 * they make no call, and fail (or stop) at once.
 */
export const releaseParked = async (
  deps: AttemptDeps,
  message: ReleaseMessage,
): Promise<void> => {
  const { orgId, webhookId } = message;
  const [endpoint, health] = await Promise.all([
    deps.webhooks.get(orgId, webhookId),
    deps.webhookDeliveries.health(orgId, webhookId),
  ]);
  const calls = endpoint?.enabled === true;
  if (calls && circuitOpen(health, deps.clock.now())) return;
  const page = calls
    ? (message.page ?? RELEASE_FIRST_PAGE)
    : RELEASE_LARGEST_PAGE;
  const parked = await deps.webhookDeliveries.parked(orgId, webhookId, page);
  if (parked.length === 0) return;
  // Sent before they are unparked: a crash between sends them twice (one
  // attempt claims), never loses one.
  await sendAll(
    deps.queues.webhookDeliveries,
    parked.map((entry) => ({
      message: {
        kind: 'attempt',
        orgId,
        webhookId,
        deliveryId: entry.deliveryId,
        eventId: entry.eventId,
        attempt: entry.attempt,
      } satisfies AttemptMessage,
      options: { group: orgId },
    })),
  );
  await deps.webhookDeliveries.unpark(
    orgId,
    webhookId,
    parked.map((entry) => entry.deliveryId),
  );
  if (parked.length < page) return;
  await requestRelease(
    deps,
    orgId,
    webhookId,
    calls
      ? {
          page: Math.min(page * 2, RELEASE_LARGEST_PAGE),
          delaySeconds: RELEASE_PAUSE_SECONDS,
        }
      : { page },
  );
};

/** The queue a message came from: the deliveries queue, or the slow lane. */
export type Lane = 'fast' | 'slow';

/** One message of the deliveries queue (or of the slow lane). */
export const handleDeliveryMessage = (
  deps: AttemptDeps,
  message: DeliveryMessage,
  lane: Lane = 'fast',
): Promise<void> => {
  switch (message.kind) {
    case 'attempt':
      return attemptDelivery(deps, message, { lane });
    case 'redeliver':
      return redeliver(deps, message);
    case 'release':
      return releaseParked(deps, message);
  }
};
