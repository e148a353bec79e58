/**
 * `npm run bench:campaign`: campaign sends on the local stack, measured.
 *
 * 1. The rate run: a 10,000-recipient campaign scheduled for the next
 *    minute, the SES emulator refusing sends above the configured rate
 *    (`BENCH_RATE`, as `admin local quota set --rate` sets it), and halfway
 *    through a second organization's 10-recipient campaign sent now. It
 *    prints the achieved rate, throttling errors, DynamoDB requests and
 *    units per recipient (the send path and SES's events apart), SQS
 *    requests and consumer invocations per 1,000 mails, what that costs as
 *    a share of the SES price, the time from `scheduledAt` to the first
 *    send, and the small campaign's time to its last mail.
 * 2. The fault run: 1,000 recipients, `BENCH_FAULT_RUNS` times (20), the
 *    consumers killed at random calls, and the campaign paused and resumed
 *    `BENCH_PAUSES` times (2) at random points of each run (after a random
 *    share of it went out, for 1 to 3 s); it prints duplicates and missing
 *    recipients, which duplicates fall in the documented window, and the
 *    latest send after a pause's answer (the promise: under 5 s).
 *
 * Figures, not assertions: see the README's benchmark table.
 * `BENCH_PART=rate|faults` runs one part only.
 */
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { consumerFunctions } from '../../functions/consumers.ts';
import { DEFAULT_MEMORY_MB } from '../../infra/constructs/app-function.ts';
import { importContacts } from '../../shared/audience/bulk-import.ts';
import { createList } from '../../shared/audience/lists.ts';
import {
  CreateCampaignBody,
  SendCampaignBody,
} from '../../shared/campaigns/campaign.schema.ts';
import { createCampaign } from '../../shared/campaigns/campaigns.ts';
import {
  pauseCampaign,
  resumeCampaign,
} from '../../shared/campaigns/control.ts';
import { requestSend } from '../../shared/campaigns/send.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendQuota,
} from '../../shared/organizations/organizations.ts';
import { createTemplate } from '../../shared/templates/templates.ts';
import {
  BENCH,
  type BenchStack,
  drained,
  seededRandom,
  startBenchStack,
} from './campaign-stack.ts';
import { percentile } from './dynamo-meter.ts';
import { memoryGbOf, PRICE } from './prices.ts';

const RATE = Number(process.env.BENCH_RATE ?? 25);
const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 10_000);
const SMALL = 10;
const FAULT_RATE = Number(process.env.BENCH_FAULT_RATE ?? 200);
const FAULT_RUNS = Number(process.env.BENCH_FAULT_RUNS ?? 20);
const FAULT_RECIPIENTS = Number(process.env.BENCH_FAULT_RECIPIENTS ?? 1_000);
const CRASHES_PER_RUN = Number(process.env.BENCH_CRASHES_PER_RUN ?? 3);
const SEED = Number(process.env.BENCH_SEED ?? 20261123);
const PAUSES = Number(process.env.BENCH_PAUSES ?? 2);
/** Issue 33's promise: no send starts later than this after a pause's answer. */
const PAUSE_BOUND_MS = 5_000;
const PART = process.env.BENCH_PART ?? 'all';

const CONTENT = `<h1>Hello {{firstName}}</h1>
<p>Our November news, with <a href="https://example.com/offer">an offer</a>.</p>
<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>`;

/** Items by key (Object.groupBy is Node 21+). */
const groupBy = <T>(
  items: readonly T[],
  keyOf: (item: T) => string,
): Record<string, T[]> => {
  const groups: Record<string, T[]> = {};
  for (const item of items) {
    const key = keyOf(item);
    groups[key] = [...(groups[key] ?? []), item];
  }
  return groups;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const fmt = (n: number, digits = 2) =>
  Number.isFinite(n) ? n.toFixed(digits) : '—';

/** An organization allowed to send, with a list of `size` contacts. */
const seedOrganization = async (
  deps: BenchStack['deps'],
  name: string,
  size: number,
  domain: string,
) => {
  const org = await createOrganization(deps, { name });
  await setSendingAllowed(deps, { orgId: org.id }, true);
  await setSendQuota(deps, { orgId: org.id, max24h: 1_000_000 });
  const list = await createList(deps, org.id, { name: 'Readers' });
  const chunk = 500;
  for (let from = 0; from < size; from += chunk) {
    const lines = Array.from(
      { length: Math.min(chunk, size - from) },
      (_, i) => ({
        email: `reader${from + i}@${domain}`,
        firstName: `Reader ${from + i}`,
      }),
    );
    await importContacts(deps, org.id, list.id, lines);
  }
  const template = await createTemplate(deps, org.id, {
    name: 'News',
    defaultSubject: 'News for {{firstName}}',
    content: CONTENT,
  });
  const campaign = await createCampaign(
    deps,
    org.id,
    v.parse(CreateCampaignBody, {
      name: 'November',
      templateId: template.id,
      listId: list.id,
    }),
  );
  return { orgId: org.id, campaignId: campaign.id };
};

/** Waits until the campaign leaves `sending` (or the time runs out). */
const settled = async (
  stack: BenchStack,
  orgId: string,
  campaignId: string,
  timeoutMs: number,
) => {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const campaign = await stack.observe(() =>
      stack.deps.campaigns.get(orgId, campaignId),
    );
    if (
      campaign &&
      campaign.status !== 'sending' &&
      campaign.status !== 'scheduled'
    ) {
      return campaign;
    }
    if (performance.now() > until) {
      // What held it, for the reader: its pause, and the send's state.
      const state = await stack.observe(() =>
        stack.deps.sends.get(orgId, campaignId),
      );
      throw new Error(
        `Campaign ${campaignId} still ${campaign?.status} after ${timeoutMs / 1000} s; paused ${JSON.stringify(campaign?.paused ?? null)}; send ${JSON.stringify(state && { walked: state.walked, nextBatch: state.nextBatch, batchesDone: state.batchesDone, inFlight: state.inFlight, progress: state.progress })}`,
      );
    }
    await sleep(100);
  }
};

const rateRun = async () => {
  const stack = await startBenchStack({
    rate: RATE,
    max24h: 10_000_000,
    minLeadSeconds: 2,
  });
  try {
    const { deps, clock } = stack;
    const big = await seedOrganization(
      deps,
      'Big Sender',
      RECIPIENTS,
      'big.bench.test',
    );
    const small = await seedOrganization(
      deps,
      'Small Sender',
      SMALL,
      'small.bench.test',
    );
    await drained(stack, 1_500);
    stack.resetMeters();

    // The next minute of the clock, three seconds away.
    const now = clock.now().getTime();
    const minute = Math.ceil((now + 3_000) / 60_000) * 60_000;
    clock.advance(minute - 3_000 - now);
    const scheduledAt = new Date(minute).toISOString().replace('Z', '+00:00');
    const accepted = await requestSend(
      deps,
      big.orgId,
      big.campaignId,
      v.parse(SendCampaignBody, { scheduledAt }),
    );
    if (accepted.status !== 'scheduled') {
      throw new Error(`The big campaign was not scheduled: ${accepted.status}`);
    }

    // Halfway: the small organization sends now.
    let smallAskedAt = 0;
    for (;;) {
      const sent = stack.accepted.filter(
        (a) => a.campaignId === big.campaignId,
      ).length;
      if (sent >= RECIPIENTS / 2) break;
      await sleep(20);
    }
    smallAskedAt = performance.now();
    await requestSend(
      deps,
      small.orgId,
      small.campaignId,
      v.parse(SendCampaignBody, {}),
    );
    const bigDone = await settled(
      stack,
      big.orgId,
      big.campaignId,
      (RECIPIENTS / RATE) * 3_000 + 120_000,
    );
    const smallDone = await settled(
      stack,
      small.orgId,
      small.campaignId,
      60_000,
    );
    // SES's events of the last mails.
    await drained(stack, 3_000);
    report(stack, {
      big,
      small,
      minute,
      smallAskedAt,
      bigStatus: `${bigDone.status} ${JSON.stringify(bigDone.progress)}`,
      smallStatus: `${smallDone.status} ${JSON.stringify(smallDone.progress)}`,
    });
  } finally {
    await stack.stop();
  }
};

const report = (
  stack: BenchStack,
  run: {
    big: { campaignId: string };
    small: { campaignId: string };
    minute: number;
    smallAskedAt: number;
    bigStatus: string;
    smallStatus: string;
  },
) => {
  const bigSends = stack.accepted.filter(
    (a) => a.campaignId === run.big.campaignId,
  );
  const smallSends = stack.accepted.filter(
    (a) => a.campaignId === run.small.campaignId,
  );
  const mails = stack.accepted.length;
  const first = bigSends[0];
  const last = bigSends.at(-1);
  if (!first || !last) throw new Error('Nothing was sent');
  const span = (last.at - first.at) / 1000;
  const inSpan = stack.accepted.filter(
    (a) => a.at >= first.at && a.at <= last.at,
  ).length;
  const perThousand = (n: number) => (n * 1000) / mails;

  // Busiest second of the account, by real time.
  const perSecond = new Map<number, number>();
  for (const a of stack.accepted) {
    const second = Math.floor(a.at / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  }

  const paths = {
    send: (label: string) => label !== 'events' && label !== BENCH,
    events: (label: string) => label === 'events',
  };
  const dynamoOf = (path: (label: string) => boolean) => {
    const calls = stack.dynamoCalls.filter((c) => path(c.label));
    return {
      requests: calls.length,
      writes: calls.filter((c) => c.wcu > 0).length,
      wcu: calls.reduce((sum, c) => sum + c.wcu, 0),
      rcu: calls.reduce((sum, c) => sum + c.rcu, 0),
      refused: calls.filter((c) => c.refused).length,
      byLabel: Object.entries(groupBy(calls, (c) => `${c.label} ${c.command}`))
        .map(([name, list]) => [name, list?.length ?? 0] as const)
        .sort((a, b) => b[1] - a[1]),
      rcuByLabel: Object.entries(
        groupBy(
          calls.filter((c) => c.rcu > 0),
          (c) => `${c.label} ${c.command}`,
        ),
      )
        .map(
          ([name, list]) =>
            [name, (list ?? []).reduce((sum, c) => sum + c.rcu, 0)] as const,
        )
        .sort((a, b) => b[1] - a[1]),
    };
  };
  const sqsOf = (path: (label: string) => boolean) => {
    const calls = stack.sqsCalls.filter((c) => path(c.queue));
    return {
      billed: calls.filter((c) => !c.empty).length,
      empty: calls.filter((c) => c.empty).length,
      byCommand: Object.entries(
        groupBy(
          calls.filter((c) => !c.empty),
          (c) => `${c.queue || 'other'} ${c.command}`,
        ),
      ).map(([name, list]) => [name, list?.length ?? 0] as const),
    };
  };
  const lambdaOf = (path: (label: string) => boolean) => {
    const runs = stack.invocations.filter((i) => path(i.group));
    return {
      invocations: runs.length,
      seconds: runs.reduce((sum, i) => sum + i.ms, 0) / 1000,
      gbSeconds: runs.reduce(
        (sum, i) => sum + (i.ms / 1000) * memoryGbOf(i.group),
        0,
      ),
      byGroup: Object.entries(groupBy(runs, (i) => i.group)).map(
        ([group, list]) => ({
          group,
          invocations: list?.length ?? 0,
          p50: percentile(
            (list ?? []).map((i) => i.ms),
            50,
          ),
          max: Math.max(...(list ?? []).map((i) => i.ms)),
        }),
      ),
    };
  };
  const costOf = (path: (label: string) => boolean) => {
    const d = dynamoOf(path);
    const q = sqsOf(path);
    const l = lambdaOf(path);
    const dynamo =
      d.wcu * PRICE.dynamoPerWriteUnit + d.rcu * PRICE.dynamoPerReadUnit;
    const sqs = q.billed * PRICE.sqsPerRequest;
    const lambda =
      l.invocations * PRICE.lambdaPerInvocation +
      l.gbSeconds * PRICE.lambdaPerGbSecond;
    const ses = (mails / 1000) * PRICE.sesPer1000;
    return {
      dynamo: (100 * dynamo) / ses,
      sqs: (100 * sqs) / ses,
      lambda: (100 * lambda) / ses,
      total: (100 * (dynamo + sqs + lambda)) / ses,
    };
  };

  const send = dynamoOf(paths.send);
  const events = dynamoOf(paths.events);
  const sendSqs = sqsOf(paths.send);
  const eventsSqs = sqsOf(paths.events);
  const sendLambda = lambdaOf(paths.send);
  const eventsLambda = lambdaOf(paths.events);
  const sendCost = costOf(paths.send);
  const eventsCost = costOf(paths.events);
  const smallLast = smallSends.at(-1);
  const smallFirst = smallSends[0];

  const lines = [
    `bench:campaign — rate run: ${RECIPIENTS} recipients, SES rate ${RATE}/s (the emulator refuses above it), a ${SMALL}-recipient campaign of another organization sent halfway`,
    `  campaigns             big: ${run.bigStatus}; small: ${run.smallStatus}`,
    `  achieved rate         ${fmt(inSpan / span, 1)}/s over the big campaign's ${fmt(span, 1)} s = ${fmt(inSpan / span / RATE)} of the configured rate (goal ≥ 0.95); busiest second ${Math.max(...perSecond.values())}`,
    `  throttling errors     ${stack.throttled()} (goal 0)`,
    `  scheduledAt → 1st send ${fmt((first.clockAt - run.minute) / 1000, 2)} s (local scheduler: polls every 250 ms)`,
    `  small campaign        last of its ${smallSends.length} mails ${fmt(((smallLast?.at ?? Number.NaN) - run.smallAskedAt) / 1000, 2)} s after its send request (first ${fmt(((smallFirst?.at ?? Number.NaN) - run.smallAskedAt) / 1000, 2)} s); at half the rate it needs ${fmt((SMALL * 2) / RATE, 2)} s; the big one still had ${fmt((last.at - (smallLast?.at ?? Number.NaN)) / 1000, 1)} s to go`,
    '  DynamoDB per recipient (what AWS would charge; refused conditional writes count 1 WCU)',
    `    send path           ${fmt(send.requests / mails, 3)} requests, ${fmt(send.writes / mails, 3)} writes, ${fmt(send.wcu / mails, 3)} WRU (goal ≤ 1.1), ${fmt(send.rcu / mails, 3)} RRU; ${send.refused} refused conditions`,
    `    SES events          ${fmt(events.requests / mails, 3)} requests, ${fmt(events.writes / mails, 3)} writes, ${fmt(events.wcu / mails, 3)} WRU, ${fmt(events.rcu / mails, 3)} RRU (Send + Delivery per mail)`,
    `    read units by call  ${send.rcuByLabel
      .slice(0, 6)
      .map(([name, n]) => `${name.replace('Command', '')} ${fmt(n / mails, 3)}`)
      .join(', ')}`,
    `    busiest calls       ${[...send.byLabel.slice(0, 6), ...events.byLabel.slice(0, 4)].map(([name, n]) => `${name.replace('Command', '')} ${fmt(n / mails, 3)}`).join(', ')}`,
    '  per 1,000 mails',
    `    SQS requests        send path ${fmt(perThousand(sendSqs.billed), 1)} (${sendSqs.byCommand.map(([name, n]) => `${name} ${fmt(perThousand(n), 1)}`).join(', ')}); SES events ${fmt(perThousand(eventsSqs.billed), 1)}; empty receives of the local pollers not counted (${sendSqs.empty + eventsSqs.empty} in all)`,
    `    invocations         ${[...sendLambda.byGroup, ...eventsLambda.byGroup].map((g) => `${g.group} ${fmt(perThousand(g.invocations), 1)} (p50 ${fmt(g.p50, 0)} ms, max ${fmt(g.max, 0)} ms)`).join(', ')}`,
    `    Lambda time         send path ${fmt(perThousand(sendLambda.seconds), 1)} s, SES events ${fmt(perThousand(eventsLambda.seconds), 1)} s (memory: ${consumerFunctions.map((c) => `${c.group.name} ${c.memoryMB ?? DEFAULT_MEMORY_MB} MB`).join(', ')})`,
    `  cost as a share of SES ($${PRICE.sesPer1000} per 1,000 mails)`,
    `    send path           ${fmt(sendCost.total, 3)} % (goal ≤ 1 %): DynamoDB ${fmt(sendCost.dynamo, 3)} %, SQS ${fmt(sendCost.sqs, 3)} %, Lambda ${fmt(sendCost.lambda, 3)} %`,
    `    SES events          ${fmt(eventsCost.total, 3)} %: DynamoDB ${fmt(eventsCost.dynamo, 3)} %, SQS ${fmt(eventsCost.sqs, 3)} %, Lambda ${fmt(eventsCost.lambda, 3)} % (EventBridge: SES's events on the default bus are not billed)`,
  ];
  console.log(lines.join('\n'));
};

/** What the pauses of one run came to. */
interface PauseOutcome {
  pauses: number;
  /** Sends that started after a pause's answer, before its resume. */
  afterPause: number;
  /** The latest of those, in ms after the answer. */
  latestMs: number;
}

/**
 * Pauses a running campaign `count` times, each once a random share of
 * its recipients went out (the i-th within the i-th of `count + 1` equal
 * parts), for 1 to 3 s, then resumes it; crashes go on meanwhile. A pause
 * that finds the campaign finished is skipped.
 */
const pauseAndResume = async (
  stack: BenchStack,
  org: { orgId: string; campaignId: string },
  count: number,
  random: () => number,
): Promise<PauseOutcome> => {
  const outcome: PauseOutcome = { pauses: 0, afterPause: 0, latestMs: 0 };
  const sent = () =>
    stack.accepted.filter((a) => a.campaignId === org.campaignId);
  for (let i = 0; i < count; i++) {
    const target = Math.floor(
      (FAULT_RECIPIENTS * (i + random())) / (count + 1),
    );
    while (sent().length < target) {
      const campaign = await stack.observe(() =>
        stack.deps.campaigns.get(org.orgId, org.campaignId),
      );
      if (campaign?.status !== 'sending') return outcome;
      await sleep(20);
    }
    try {
      await stack.observe(() =>
        pauseCampaign(stack.deps, org.orgId, org.campaignId),
      );
    } catch {
      return outcome; // finished meanwhile
    }
    const answeredAt = performance.now();
    outcome.pauses++;
    await sleep(1_000 + random() * 2_000);
    const late = sent().filter((a) => a.at > answeredAt);
    outcome.afterPause += late.length;
    for (const a of late) {
      outcome.latestMs = Math.max(outcome.latestMs, a.at - answeredAt);
    }
    await stack.observe(() =>
      resumeCampaign(stack.deps, org.orgId, org.campaignId),
    );
  }
  return outcome;
};

const faultRun = async () => {
  const stack = await startBenchStack({
    rate: FAULT_RATE,
    max24h: 100_000_000,
    minLeadSeconds: 2,
    // Crashed invocations' messages come back quickly; SES's events before
    // the senders' batches, as on AWS (seconds against a 15-minute lease).
    visibility: { dispatch: 3, send: 5, events: 1 },
    // The clock jump makes the claims' 15 minutes nothing: SES's events
    // are not gathered for 2 s either, or they would come late against
    // the lease as they never do on AWS (seconds against 15 minutes).
    batchWindow: { events: 0 },
    faults: { seed: SEED, leaseJumpMs: 16 * 60_000 },
  });
  const faults = stack.faults;
  if (!faults) throw new Error('No faults');
  const totals = {
    crashes: 0,
    duplicates: 0,
    inWindow: 0,
    missing: 0,
    progressOff: 0,
    notSent: 0,
    pauses: 0,
    afterPause: 0,
    latePauses: 0,
    latestMs: 0,
  };
  try {
    const { deps } = stack;
    for (let run = 0; run <= FAULT_RUNS; run++) {
      const org = await seedOrganization(
        deps,
        `Faulty ${run}`,
        FAULT_RECIPIENTS,
        `run${run}.bench.test`,
      );
      await drained(stack, 1_000);
      stack.resetMeters();
      // Run 0 counts the calls a run makes, without crashes, by consumer.
      const callsBy = () => {
        const counts: Record<string, number> = {};
        const add = (group: string) => {
          counts[group] = (counts[group] ?? 0) + 1;
        };
        for (const c of stack.dynamoCalls) add(c.label);
        for (const c of stack.sqsCalls) if (c.consumer) add(c.consumer);
        for (const a of stack.accepted) if (a.by) add(a.by.group);
        delete counts.api;
        delete counts[BENCH];
        return counts;
      };
      faults.injected.length = 0;
      const started = performance.now();
      await requestSend(
        deps,
        org.orgId,
        org.campaignId,
        v.parse(SendCampaignBody, {}),
      );
      const [campaign, paused] = await Promise.all([
        settled(stack, org.orgId, org.campaignId, 600_000),
        run === 0
          ? { pauses: 0, afterPause: 0, latestMs: 0 }
          : pauseAndResume(stack, org, PAUSES, seededRandom(SEED + run)),
      ]);
      await drained(stack, 2_000);
      if (run === 0) {
        // The crashes spread evenly over the consumers, wherever their calls.
        const counts = callsBy();
        const groups = Object.keys(counts);
        faults.perCall = Object.fromEntries(
          groups.map((g) => [
            g,
            CRASHES_PER_RUN / groups.length / (counts[g] ?? 1),
          ]),
        );
        console.log(
          `bench:campaign — fault run: ${FAULT_RECIPIENTS} recipients × ${FAULT_RUNS} runs at ${FAULT_RATE}/s, seed ${SEED}; ~${CRASHES_PER_RUN} crashes a run, spread evenly over the consumers (calls a run: ${groups.map((g) => `${g} ${counts[g]}`).join(', ')})`,
        );
        continue;
      }
      const mine = stack.accepted.filter(
        (a) => a.campaignId === org.campaignId,
      );
      const byRecipient = groupBy(mine, (a) => a.to);
      const received = Object.keys(byRecipient).length;
      let duplicates = 0;
      let inWindow = 0;
      for (const sends of Object.values(byRecipient)) {
        if (!sends || sends.length < 2) continue;
        duplicates += sends.length - 1;
        // The window: SES took the first, its sender died before its batch
        // ended, and no event of it reached us before the claim ran out.
        if (sends[0]?.by?.died) inWindow += sends.length - 1;
      }
      const missing = FAULT_RECIPIENTS - received;
      const progressOff =
        campaign.progress.sent !== FAULT_RECIPIENTS ||
        campaign.progress.total !== FAULT_RECIPIENTS;
      totals.crashes += faults.injected.length;
      totals.duplicates += duplicates;
      totals.inWindow += inWindow;
      totals.missing += missing;
      totals.progressOff += progressOff ? 1 : 0;
      totals.notSent += campaign.status === 'sent' ? 0 : 1;
      totals.pauses += paused.pauses;
      totals.afterPause += paused.afterPause;
      totals.latePauses += paused.latestMs >= PAUSE_BOUND_MS ? 1 : 0;
      totals.latestMs = Math.max(totals.latestMs, paused.latestMs);
      console.log(
        `  run ${String(run).padStart(2)}: ${campaign.status}, ${faults.injected.length} crashes (${faults.injected.map((c) => `${c.at.replace('Command', '')} ${c.when}`).join(', ') || 'none'}), ${paused.pauses} pauses (${paused.afterPause} sends after a pause's answer, the latest +${fmt(paused.latestMs / 1000, 2)} s), ${fmt((performance.now() - started) / 1000, 1)} s; received ${received}, duplicates ${duplicates} (${inWindow} in the window), missing ${missing}, progress ${JSON.stringify(campaign.progress)}`,
      );
    }
    console.log(
      `  total: ${totals.crashes} crashes, ${totals.pauses} pauses; duplicates ${totals.duplicates} (${totals.inWindow} in the documented window, ${totals.duplicates - totals.inWindow} outside it; goal 0), missing ${totals.missing} (goal 0), runs with inexact progress ${totals.progressOff}, runs not ending sent ${totals.notSent}; sends after a pause's answer ${totals.afterPause}, the latest +${fmt(totals.latestMs / 1000, 2)} s (pauses past ${PAUSE_BOUND_MS / 1000} s: ${totals.latePauses}, goal 0)`,
    );
  } finally {
    await stack.stop();
  }
};

if (PART === 'all' || PART === 'rate') await rateRun();
if (PART === 'all' || PART === 'faults') await faultRun();
