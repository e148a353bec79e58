/**
 * `npm run bench:webhooks`: webhook delivery on the local stack, measured.
 *
 * Two organizations import contacts at a steady pace (`BENCH_RATE` events
 * a second in all); each contact added is a `contact.created` event, found
 * by the contacts stream consumer in the table's change stream, fanned out
 * to the organization's endpoints and delivered. The endpoints are local
 * HTTP servers that verify every delivery with the `standardwebhooks`
 * package and record its `webhook-id`, when it came and what they
 * answered:
 * - A: a healthy endpoint, and one that answers 503 for the first hour of
 *   the bench clock (dead) and 200 after it;
 * - B: a healthy endpoint, and a slow one (answers after 4 s).
 *
 * 1. The baseline: `BENCH_BASELINE_EVENTS` (1,000) events at the same pace,
 *    nothing dead (A's second endpoint healthy).
 * 2. The main run: `BENCH_EVENTS` (10,000) events, A's second endpoint dead;
 *    it waits until every healthy endpoint has all its events.
 * 3. The recovery: the clock moves to the dead endpoint's probe's next
 *    attempt (a schedule of the local scheduler) until the hour is over
 *    and the probe's success released the parked deliveries.
 *
 * It prints events lost, unsigned and unverified deliveries, duplicates
 * by `webhook-id`, the time from the fact (the event's `timestamp`) to
 * the first attempt, B's healthy endpoint beside the baseline, the dead
 * endpoint's deliveries after it recovered, and the cost per 1,000 events
 * of the main run and its recovery (DynamoDB, SQS, the scheduler, Lambda),
 * by consumer. No crash is injected: a duplicate here is an attempt the
 * sender gave up on (its 5 s) that the receiver took anyway. Figures, not
 * assertions, but it exits 1 when events are lost or a delivery is
 * unsigned.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import * as v from 'valibot';
import { importContacts } from '../../shared/audience/bulk-import.ts';
import { createList } from '../../shared/audience/lists.ts';
import { createOrganization } from '../../shared/organizations/organizations.ts';
import { createWebhook } from '../../shared/webhooks/endpoints.ts';
import { ATTEMPT_TIMEOUT_MS } from '../../shared/webhooks/model.ts';
import { CreateWebhookBody } from '../../shared/webhooks/webhook.schema.ts';
import {
  type BenchClock,
  type BenchStack,
  drained,
  startBenchStack,
} from './campaign-stack.ts';
import { percentile } from './dynamo-meter.ts';
import { memoryGbOf, PRICE } from './prices.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BASELINE_EVENTS = Number(process.env.BENCH_BASELINE_EVENTS ?? 1_000);
/** Events committed a second, both organizations together. */
const RATE = Number(process.env.BENCH_RATE ?? 20);
/** Batches of the deliveries consumer at once: its `maxConcurrency` on AWS. */
const DELIVERY_CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
/** How long the slow endpoint takes to answer. */
const SLOW_MS = 4_000;
/** How long (bench clock) the dead endpoint is down. */
const DEAD_MS = 3_600_000;
/** Each organization imports its share once per tick. */
const TICK_MS = 1_000;
/** Real time without a new delivery after which a wait gives up. */
const STALL_MS = 60_000;
/** The local stack's longest SQS delay: longer waits follow the clock. */
const QUEUE_DELAY_MAX_SECONDS = 60;
/** The consumers of the events' path, as the meters label them. */
const PATH = ['contacts', 'webhookFanout', 'webhookDeliveries'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 2) =>
  Number.isFinite(n) ? n.toFixed(digits) : '—';

/** One request an endpoint took. */
interface Received {
  webhookId: string;
  email: string;
  /** The event's `timestamp` (the fact's instant), ms. */
  occurredAt: number;
  /** When the request came: the bench clock, and real time. */
  clockAt: number;
  at: number;
  signed: boolean;
  verified: boolean;
  /** What the endpoint answered. */
  status: number;
}

/** How an endpoint answers at an instant of the bench clock. */
type Behaviour = (clockAt: number) => { status: number; delayMs: number };

const healthy: Behaviour = () => ({ status: 200, delayMs: 0 });
const slow: Behaviour = () => ({ status: 200, delayMs: SLOW_MS });
const deadUntil =
  (until: number): Behaviour =>
  (clockAt) => ({ status: clockAt < until ? 503 : 200, delayMs: 0 });

/** The three Standard Webhooks headers, as `verify` takes them. */
const signatureHeaders = (headers: IncomingHttpHeaders) => {
  const one = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(' ') : (value ?? '');
  };
  return {
    'webhook-id': one('webhook-id'),
    'webhook-timestamp': one('webhook-timestamp'),
    'webhook-signature': one('webhook-signature'),
  };
};

/**
 * Whether the `standardwebhooks` package verifies a delivery. The receiver
 * lives on the bench clock (hours ahead after the recovery): the package's
 * 5-minute replay window is judged against it, `Date.now` being the clock's
 * during the (synchronous) call.
 */
const verifies = (
  secret: string,
  body: string,
  headers: IncomingHttpHeaders,
  clockAt: number,
): boolean => {
  const realNow = Date.now;
  Date.now = () => clockAt;
  try {
    new Webhook(secret).verify(body, signatureHeaders(headers));
    return true;
  } catch {
    return false;
  } finally {
    Date.now = realNow;
  }
};

/** A receiving endpoint: a local HTTP server recording what it took. */
const startReceiver = async (
  name: string,
  clock: BenchClock,
  behaviour: { current: Behaviour },
) => {
  const received: Received[] = [];
  let secret = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const clockAt = clock.now().getTime();
      const body = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(body) as {
        timestamp: string;
        data: { contact?: { email?: string } };
      };
      const { status, delayMs } = behaviour.current(clockAt);
      received.push({
        webhookId: signatureHeaders(request.headers)['webhook-id'],
        email: event.data.contact?.email ?? '',
        occurredAt: Date.parse(event.timestamp),
        clockAt,
        at: performance.now(),
        signed: Boolean(request.headers['webhook-signature']),
        verified: verifies(secret, body, request.headers, clockAt),
        status,
      });
      setTimeout(() => response.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  return {
    name,
    url: `http://127.0.0.1:${port}/hooks/${name}`,
    received,
    behaviour,
    webhookId: '',
    setSecret: (value: string) => {
      secret = value;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** An organization with a list and its endpoints, taking `contact.created`. */
const seedOrganization = async (
  deps: BenchStack['deps'],
  name: string,
  receivers: Receiver[],
) => {
  const org = await createOrganization(deps, { name });
  const list = await createList(deps, org.id, { name: 'Readers' });
  for (const receiver of receivers) {
    const created = await createWebhook(
      deps,
      org.id,
      v.parse(CreateWebhookBody, {
        url: receiver.url,
        events: ['contact.created'],
        description: receiver.name,
      }),
    );
    receiver.setSecret(created.secret);
    receiver.webhookId = created.id;
  }
  return { name, orgId: org.id, listId: list.id, receivers };
};
type Organization = Awaited<ReturnType<typeof seedOrganization>>;

/**
 * Imports `total` contacts, half in each organization, `RATE` a second
 * (one import per organization a tick); returns the addresses committed
 * by organization and the pace achieved.
 */
const commitEvents = async (
  deps: BenchStack['deps'],
  orgs: Organization[],
  total: number,
  tag: string,
) => {
  const perTick = Math.max(
    1,
    Math.round((RATE * TICK_MS) / 1000 / orgs.length),
  );
  const committed = new Map<string, string[]>(orgs.map((o) => [o.orgId, []]));
  const share = Math.ceil(total / orgs.length);
  const started = performance.now();
  let late = 0;
  for (let tick = 0, from = 0; from < share; tick++, from += perTick) {
    const wait = started + tick * TICK_MS - performance.now();
    if (wait > 0) await sleep(wait);
    else late++;
    await Promise.all(
      orgs.map(async (org) => {
        const emails = Array.from(
          { length: Math.min(perTick, share - from) },
          (_, i) => `${tag}${from + i}@${org.name.toLowerCase()}.bench.test`,
        );
        const report = await importContacts(
          deps,
          org.orgId,
          org.listId,
          emails.map((email) => ({ email })),
        );
        if (report.created !== emails.length) {
          throw new Error(
            `An import created ${report.created} of ${emails.length}`,
          );
        }
        committed.get(org.orgId)?.push(...emails);
      }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  return { committed, seconds, late };
};

/** The addresses an endpoint took (answered 2xx), each once. */
const takenBy = (receiver: Receiver) =>
  new Set(
    receiver.received
      .filter((r) => r.status >= 200 && r.status < 300)
      .map((r) => r.email),
  );

/**
 * Waits until every receiver has taken every address of its organization,
 * or nothing new came for {@link STALL_MS}.
 */
const deliveredAll = async (
  stack: BenchStack,
  expected: { receiver: Receiver; emails: string[] }[],
) => {
  let seen = -1;
  let since = performance.now();
  for (;;) {
    await drained(stack, 1_000);
    const missing = expected.reduce((sum, { receiver, emails }) => {
      const taken = takenBy(receiver);
      return sum + emails.filter((e) => !taken.has(e)).length;
    }, 0);
    if (missing === 0) return 0;
    const count = expected.reduce((n, e) => n + e.receiver.received.length, 0);
    if (count !== seen) {
      seen = count;
      since = performance.now();
    } else if (performance.now() - since > STALL_MS) {
      return missing;
    }
  }
};

/** Seconds from the fact to the first attempt, for each event an endpoint got. */
const firstAttempts = (receiver: Receiver, emails: Set<string>) => {
  const first = new Map<string, number>();
  for (const r of receiver.received) {
    if (!emails.has(r.email) || first.has(r.webhookId)) continue;
    first.set(r.webhookId, (r.clockAt - r.occurredAt) / 1000);
  }
  return [...first.values()];
};

const latency = (seconds: number[]) =>
  seconds.length === 0
    ? 'none'
    : `p50 ${fmt(percentile(seconds, 50))} s, p99 ${fmt(percentile(seconds, 99))} s, max ${fmt(Math.max(...seconds))} s (${seconds.length})`;

const main = async () => {
  const stack = await startBenchStack({
    rate: 100,
    max24h: 1_000_000,
    minLeadSeconds: 2,
    streams: true,
    concurrency: { webhookDeliveries: DELIVERY_CONCURRENCY },
    queueDelayMaxSeconds: QUEUE_DELAY_MAX_SECONDS,
  });
  const { deps, clock } = stack;
  const started = performance.now();
  const log = (text: string) =>
    console.log(
      `  [${fmt((performance.now() - started) / 1000, 1).padStart(6)} s] ${text}`,
    );
  const receivers: Receiver[] = [];
  const receiver = async (name: string, behaviour: Behaviour) => {
    const made = await startReceiver(name, clock, { current: behaviour });
    receivers.push(made);
    return made;
  };
  // BENCH_VERBOSE=1: what is under way, every 10 s.
  const ticker = process.env.BENCH_VERBOSE
    ? setInterval(() => {
        const busy = stack
          .inFlight()
          .map((r) => `${r.group} ${fmt(r.ms / 1000, 0)} s`);
        log(
          `invocations ${stack.invocations.length}; received ${receivers.map((r) => `${r.name} ${r.received.length}`).join(', ')}; under way (${busy.length}): ${busy.slice(0, 8).join(', ')}`,
        );
      }, 10_000)
    : undefined;
  try {
    console.log(
      `bench:webhooks — ${EVENTS} contact.created events (baseline ${BASELINE_EVENTS}) at ${RATE}/s to two organizations: A healthy + dead for the first hour (503), B healthy + slow (${SLOW_MS / 1000} s); deliveries consumer ${DELIVERY_CONCURRENCY} batches at once`,
    );

    // 1. The baseline: nothing dead.
    const base = {
      a: await seedOrganization(deps, 'BaseA', [
        await receiver('base-a-healthy', healthy),
        await receiver('base-a-second', healthy),
      ]),
      b: await seedOrganization(deps, 'BaseB', [
        await receiver('base-b-healthy', healthy),
        await receiver('base-b-slow', slow),
      ]),
    };
    const baseRun = await commitEvents(
      deps,
      [base.a, base.b],
      BASELINE_EVENTS,
      'base',
    );
    const baseExpected = [base.a, base.b].flatMap((org) =>
      org.receivers.map((r) => ({
        receiver: r,
        emails: baseRun.committed.get(org.orgId) ?? [],
      })),
    );
    const baseMissing = await deliveredAll(stack, baseExpected);
    log(
      `baseline: ${BASELINE_EVENTS} events committed in ${fmt(baseRun.seconds, 1)} s; ${baseMissing} deliveries missing`,
    );

    // 2. The main run: A's second endpoint dead for the first hour.
    const deadFrom = clock.now().getTime();
    const deadTo = deadFrom + DEAD_MS;
    const aHealthy = await receiver('a-healthy', healthy);
    const aDead = await receiver('a-dead', deadUntil(deadTo));
    const bHealthy = await receiver('b-healthy', healthy);
    const bSlow = await receiver('b-slow', slow);
    const a = await seedOrganization(deps, 'A', [aHealthy, aDead]);
    const b = await seedOrganization(deps, 'B', [bHealthy, bSlow]);
    await drained(stack, 1_000);
    stack.resetMeters();
    const metered = performance.now();
    const run = await commitEvents(deps, [a, b], EVENTS, 'main');
    const emailsOf = (org: Organization) => run.committed.get(org.orgId) ?? [];
    log(
      `main run: ${EVENTS} events committed in ${fmt(run.seconds, 1)} s (${fmt(EVENTS / run.seconds, 1)}/s; ${run.late} ticks late)`,
    );
    const healthyMissing = await deliveredAll(stack, [
      { receiver: aHealthy, emails: emailsOf(a) },
      { receiver: bHealthy, emails: emailsOf(b) },
      { receiver: bSlow, emails: emailsOf(b) },
    ]);
    const healthyDone = performance.now();
    log(
      `healthy endpoints done (${healthyMissing} missing); the dead one took ${takenBy(aDead).size} and was called ${aDead.received.length} times (clock +${fmt((clock.now().getTime() - deadFrom) / 60_000, 1)} min)`,
    );

    // 3. The recovery: the clock follows the dead endpoint's probe.
    let moves = 0;
    const recoveryEnds = performance.now() + 10 * 60_000;
    let lastCall = aDead.received.length;
    let quietSince = performance.now();
    while (performance.now() < recoveryEnds) {
      await drained(stack, 1_500);
      const missing = emailsOf(a).filter((e) => !takenBy(aDead).has(e));
      if (missing.length === 0) break;
      if (aDead.received.length !== lastCall) {
        lastCall = aDead.received.length;
        quietSince = performance.now();
      }
      const health = await stack.observe(() =>
        deps.webhookDeliveries.health(a.orgId, aDead.webhookId),
      );
      const now = clock.now().getTime();
      const due = health.probe ? Date.parse(health.probe.dueAt) : undefined;
      if (due !== undefined && due - now > QUEUE_DELAY_MAX_SECONDS * 1000) {
        clock.advance(due - now + 1_000);
        moves++;
        log(
          `${missing.length} deliveries of the dead endpoint waiting; the clock moves to its probe's attempt at +${fmt((due - deadFrom) / 60_000, 1)} min (${health.failures} failures so far)`,
        );
      } else if (due !== undefined && due > now) {
        await sleep(due - now + 1_000);
      } else if (performance.now() - quietSince > 10_000) {
        // Nothing comes and the health names no attempt ahead (its probe
        // overdue, or none): the retries' schedules follow the clock.
        clock.advance(5 * 60_000);
        moves++;
        quietSince = performance.now();
        log(
          `${missing.length} deliveries of the dead endpoint waiting, none called for 10 s; health: ${health.failures} failures, probe ${health.probe ? `due +${fmt((Date.parse(health.probe.dueAt) - deadFrom) / 60_000, 1)} min` : 'none'}; the clock moves 5 min (to +${fmt((clock.now().getTime() - deadFrom) / 60_000, 1)} min)`,
        );
      } else {
        await sleep(1_000);
      }
    }
    const recovered = performance.now();
    log(
      `the dead endpoint took ${takenBy(aDead).size} of ${emailsOf(a).length}`,
    );
    await drained(stack, 2_000);

    report(stack, {
      base,
      baseRun,
      a,
      b,
      run,
      deadFrom,
      deadTo,
      moves,
      seconds: {
        commit: run.seconds,
        healthy: (healthyDone - metered) / 1000,
        all: (recovered - metered) / 1000,
      },
    });
  } finally {
    clearInterval(ticker);
    await Promise.all(receivers.map((r) => r.stop()));
    await stack.stop();
  }
};

const report = (
  stack: BenchStack,
  run: {
    base: { a: Organization; b: Organization };
    baseRun: Awaited<ReturnType<typeof commitEvents>>;
    a: Organization;
    b: Organization;
    run: Awaited<ReturnType<typeof commitEvents>>;
    deadFrom: number;
    deadTo: number;
    moves: number;
    seconds: { commit: number; healthy: number; all: number };
  },
) => {
  const [aHealthy, aDead] = run.a.receivers;
  const [bHealthy, bSlow] = run.b.receivers;
  const [baseBHealthy, baseBSlow] = run.base.b.receivers;
  const [baseAHealthy, baseASecond] = run.base.a.receivers;
  if (!aHealthy || !aDead || !bHealthy || !bSlow)
    throw new Error('No receivers');
  if (!baseAHealthy || !baseASecond || !baseBHealthy || !baseBSlow) {
    throw new Error('No baseline receivers');
  }
  const emails = (committed: Map<string, string[]>, org: Organization) =>
    new Set(committed.get(org.orgId) ?? []);
  const main = [
    ...run.a.receivers.map((r) => ({
      r,
      emails: emails(run.run.committed, run.a),
    })),
    ...run.b.receivers.map((r) => ({
      r,
      emails: emails(run.run.committed, run.b),
    })),
  ];
  const baseline = [
    ...run.base.a.receivers.map((r) => ({
      r,
      emails: emails(run.baseRun.committed, run.base.a),
    })),
    ...run.base.b.receivers.map((r) => ({
      r,
      emails: emails(run.baseRun.committed, run.base.b),
    })),
  ];
  const everyone = [...baseline, ...main];

  // Lost: a committed event an endpoint taking it never took.
  const lost = (list: typeof main) =>
    list
      .map(({ r, emails }) => {
        const taken = takenBy(r);
        return {
          name: r.name,
          n: [...emails].filter((e) => !taken.has(e)).length,
        };
      })
      .filter(({ n }) => n > 0);
  const lostMain = lost(main);
  const lostBase = lost(baseline);
  const received = everyone.flatMap(({ r }) => r.received);
  const unsigned = received.filter((r) => !r.signed).length;
  const unverified = received.filter((r) => !r.verified).length;
  // Duplicates: a webhook-id an endpoint took (answered 2xx) twice.
  const duplicates = everyone
    .map(({ r }) => {
      const taken = new Map<string, number>();
      for (const x of r.received) {
        if (x.status < 200 || x.status >= 300) continue;
        taken.set(x.webhookId, (taken.get(x.webhookId) ?? 0) + 1);
      }
      return {
        name: r.name,
        n: [...taken.values()].reduce((sum, c) => sum + c - 1, 0),
      };
    })
    .filter(({ n }) => n > 0);
  const slowAnswers = [bSlow, baseBSlow].flatMap((r) => r.received);

  // The dead endpoint: what it got while down, and after.
  const whileDead = aDead.received.filter((r) => r.clockAt < run.deadTo);
  const afterRecovery = aDead.received.filter(
    (r) => r.clockAt >= run.deadTo && r.status === 200,
  );
  const firstOk = Math.min(...afterRecovery.map((r) => r.clockAt));
  const lastOk = Math.max(...afterRecovery.map((r) => r.clockAt));
  const realSpan =
    (Math.max(...afterRecovery.map((r) => r.at)) -
      Math.min(...afterRecovery.map((r) => r.at))) /
    1000;
  const perSecond = new Map<number, number>();
  for (const r of aDead.received) {
    if (r.clockAt < run.deadTo) continue;
    const second = Math.floor(r.at / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  }
  const busiest = Math.max(0, ...perSecond.values());
  const takenBeforeRecovery = aDead.received.filter(
    (r) => r.clockAt < run.deadTo && r.status === 200,
  ).length;

  // Cost of the main run and its recovery, per 1,000 events.
  const per = (n: number, digits = 1) => fmt((n * 1000) / EVENTS, digits);
  const byConsumer = PATH.map((group) => {
    const calls = stack.dynamoCalls.filter((c) => c.label === group);
    const runs = stack.invocations.filter((i) => i.group === group);
    const wcu = calls.reduce((sum, c) => sum + c.wcu, 0);
    const rcu = calls.reduce((sum, c) => sum + c.rcu, 0);
    const gbSeconds = runs.reduce(
      (sum, i) => sum + (i.ms / 1000) * memoryGbOf(group),
      0,
    );
    return {
      group,
      requests: calls.length,
      wcu,
      rcu,
      invocations: runs.length,
      messages: runs.reduce((sum, i) => sum + i.messages, 0),
      gbSeconds,
      p50: percentile(
        runs.map((i) => i.ms),
        50,
      ),
      dollars:
        wcu * PRICE.dynamoPerWriteUnit +
        rcu * PRICE.dynamoPerReadUnit +
        runs.length * PRICE.lambdaPerInvocation +
        gbSeconds * PRICE.lambdaPerGbSecond,
    };
  });
  const byCall = (group: string) => {
    const counts = new Map<string, number>();
    for (const c of stack.dynamoCalls) {
      if (c.label !== group) continue;
      const name = c.command.replace('Command', '');
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return [...counts.entries()]
      .sort((x, y) => y[1] - x[1])
      .map(([name, n]) => `${name} ${per(n)}`)
      .join(', ');
  };
  const billed = stack.sqsCalls.filter((c) => !c.empty);
  const sqsOf = (queue: string) => {
    const calls = billed.filter((c) => c.queue === queue);
    const counts = new Map<string, number>();
    for (const c of calls)
      counts.set(c.command, (counts.get(c.command) ?? 0) + 1);
    return {
      requests: calls.length,
      detail: [...counts.entries()]
        .map(([name, n]) => `${name} ${per(n)}`)
        .join(', '),
    };
  };
  const fanoutSqs = sqsOf('webhookFanout');
  const deliveriesSqs = sqsOf('webhookDeliveries');
  const schedules = stack.schedulerCalls.filter((c) => c.op === 'schedule');
  const sqsDollars =
    (fanoutSqs.requests + deliveriesSqs.requests) * PRICE.sqsPerRequest;
  const schedulerDollars = schedules.length * PRICE.schedulerPerInvocation;
  const totalDollars =
    byConsumer.reduce((sum, c) => sum + c.dollars, 0) +
    sqsDollars +
    schedulerDollars;
  const apiCalls = stack.dynamoCalls.filter((c) => c.label === 'api');

  const mainBHealthy = firstAttempts(
    bHealthy,
    emails(run.run.committed, run.b),
  );
  const baseBHealthyLatency = firstAttempts(
    baseBHealthy,
    emails(run.baseRun.committed, run.base.b),
  );
  const lines = [
    `  events                 main run ${EVENTS} committed in ${fmt(run.seconds.commit, 1)} s (${fmt(EVENTS / run.seconds.commit, 1)}/s), baseline ${BASELINE_EVENTS}; deliveries expected ${main.reduce((n, m) => n + m.emails.size, 0)} + ${baseline.reduce((n, m) => n + m.emails.size, 0)}`,
    `  events lost            ${lostMain.reduce((n, l) => n + l.n, 0)} in the main run${lostMain.length ? ` (${lostMain.map((l) => `${l.name} ${l.n}`).join(', ')})` : ''}, ${lostBase.reduce((n, l) => n + l.n, 0)} in the baseline (goal 0: an event committed that an endpoint taking it never took)`,
    `  unsigned / unverified  ${unsigned} / ${unverified} of ${received.length} requests (goal 0; verified by standardwebhooks)`,
    `  duplicates             ${duplicates.length === 0 ? '0' : duplicates.map((d) => `${d.name} ${d.n}`).join(', ')} (a webhook-id an endpoint answered 2xx twice; no crash injected: only a slow answer past the sender's ${ATTEMPT_TIMEOUT_MS / 1000} s makes one); slow endpoint answers ${slowAnswers.length} for ${[bSlow, baseBSlow].reduce((n, r) => n + new Set(r.received.map((x) => x.webhookId)).size, 0)} events`,
    '  fact → first attempt (bench clock; goal p99 ≤ 5 s)',
    `    A healthy            ${latency(firstAttempts(aHealthy, emails(run.run.committed, run.a)))}`,
    `    B healthy            ${latency(mainBHealthy)}`,
    `    B slow               ${latency(firstAttempts(bSlow, emails(run.run.committed, run.b)))} (the request's arrival; it answers 4 s later)`,
    `  B healthy, A dead vs none: p50 ${fmt(percentile(mainBHealthy, 50))} s vs ${fmt(percentile(baseBHealthyLatency, 50))} s, p99 ${fmt(percentile(mainBHealthy, 99))} s vs ${fmt(percentile(baseBHealthyLatency, 99))} s (baseline: A ${latency(firstAttempts(baseAHealthy, emails(run.baseRun.committed, run.base.a)))}; A second ${latency(firstAttempts(baseASecond, emails(run.baseRun.committed, run.base.a)))}; B ${latency(baseBHealthyLatency)}; B slow ${latency(firstAttempts(baseBSlow, emails(run.baseRun.committed, run.base.b)))})`,
    `  dead endpoint          down ${DEAD_MS / 60_000} min: called ${whileDead.length} times while down (the circuit: the rest parked); took ${takenBy(aDead).size} of ${run.a.receivers.length ? emails(run.run.committed, run.a).size : 0}, ${afterRecovery.length} after it recovered (${takenBeforeRecovery} before: goal 0); first +${fmt((firstOk - run.deadTo) / 60_000, 1)} min after the recovery (the probe's next attempt), last +${fmt((lastOk - run.deadTo) / 60_000, 1)} min; the backlog took ${fmt(realSpan, 1)} s real time, ${aDead.received.filter((r) => r.clockAt >= run.deadTo).length} calls, the busiest second ${busiest}; clock moves ${run.moves}`,
    `  cost per 1,000 events (main run and recovery: ${stack.invocations.length} invocations; prices as bench:campaign)`,
    ...byConsumer.map(
      (c) =>
        `    ${c.group.padEnd(20)} DynamoDB ${per(c.requests)} requests, ${per(c.wcu)} WRU, ${per(c.rcu)} RRU; Lambda ${per(c.invocations)} invocations of ${fmt(c.messages / c.invocations, 1)} records (p50 ${fmt(c.p50, 0)} ms), ${per(c.gbSeconds, 3)} GB-s at ${memoryGbOf(c.group) * 1024} MB; $${per(c.dollars, 5)}`,
    ),
    ...PATH.map((group) => `      ${group.padEnd(18)} ${byCall(group)}`),
    `    SQS                  fan-out queue ${per(fanoutSqs.requests)} requests (${fanoutSqs.detail}); deliveries queue ${per(deliveriesSqs.requests)} (${deliveriesSqs.detail}); empty receives of the local pollers not counted; $${per(sqsDollars, 5)}`,
    `    scheduler            ${per(schedules.length)} schedules (${schedules.length}), ${stack.schedulerCalls.length - schedules.length} cancels; $${per(schedulerDollars, 5)}`,
    `    total                $${per(totalDollars, 5)} per 1,000 events (the contacts consumer's share is all its work: activity, tag index, events); the imports themselves ${per(apiCalls.length)} requests, ${per(apiCalls.reduce((s, c) => s + c.wcu, 0))} WRU (not counted)`,
    `  wall time              ${fmt(run.seconds.all, 1)} s (commits ${fmt(run.seconds.commit, 1)} s, healthy endpoints done at ${fmt(run.seconds.healthy, 1)} s)`,
  ];
  console.log(lines.join('\n'));
  const failed =
    lostMain.length +
    lostBase.length +
    unsigned +
    unverified +
    takenBeforeRecovery;
  if (failed > 0) {
    console.log('  FAILED: a figure that must be 0 is not');
    process.exitCode = 1;
  }
};

await main();
