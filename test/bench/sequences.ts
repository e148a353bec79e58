/**
 * `npm run bench:sequences`: sequence journeys on the local stack, run
 * through by moving the stack's clock.
 *
 * 1. An organization in New York's time zone, with a list, a tag and two
 *    active 3-step sequences (step 1 at once, a 24-hour wait, step 2, a
 *    24-hour wait, step 3 at 09:00 local time): "Welcome" enrols on joining
 *    the list, "Trial" on receiving the tag.
 * 2. `BENCH_CONTACTS` (2,000) contacts added one at a time through the
 *    domain (`BENCH_CONCURRENCY` at once), a tenth of them with the tag:
 *    the table's stream enrols them (the contacts consumer) and the steps
 *    consumer sends their step 1.
 * 3. After step 1, a twentieth of the contacts unsubscribe and the Trial
 *    sequence is deleted: neither may receive anything more.
 * 4. The clock moves to a few seconds before the next step falls due (a
 *    day at most per move), the step falls due in real time, and the queues
 *    drain; again until every journey has ended.
 *
 * It prints the sends against those expected, duplicates per (contact,
 * step), sends after an unsubscribe or a delete, each send's lateness after
 * its journey's computed instant (its `dueAt`, read when SES took it), and
 * DynamoDB, scheduler and SQS calls per step sent. Figures, not assertions,
 * but it exits 1 when a figure that must be 0 is not.
 */
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { AddContactBody } from '../../shared/audience/contact.schema.ts';
import {
  addContact,
  unsubscribeContact,
} from '../../shared/audience/contacts.ts';
import { createList } from '../../shared/audience/lists.ts';
import { createTag } from '../../shared/audience/tags.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendQuota,
} from '../../shared/organizations/organizations.ts';
import {
  createSequence,
  deleteSequence,
  updateSequence,
} from '../../shared/sequences/heads.ts';
import type { Enrolment, Trigger } from '../../shared/sequences/model.ts';
import { addNode, updateNode } from '../../shared/sequences/nodes.ts';
import { publishVersion } from '../../shared/sequences/publish.ts';
import {
  BENCH,
  type BenchStack,
  drained,
  startBenchStack,
} from './campaign-stack.ts';
import { type DynamoCall, percentile } from './dynamo-meter.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 2_000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
/** The organization's time zone: step 3 goes out at 09:00 there. */
const ZONE = 'America/New_York';
const STEP3_MINUTES = 9 * 60;
/** Contact i is tagged (enrolled in Trial too) when i % 10 === 5. */
const isTagged = (i: number) => i % 10 === 5;
/** Contact i unsubscribes after step 1 when i % 20 === 0 (never tagged). */
const unsubscribes = (i: number) => i % 20 === 0;

const indices = Array.from({ length: CONTACTS }, (_, i) => i);

const DAY = 24 * 3_600_000;
/** The clock stops this far before the next step falls due. */
const LEAD_MS = 3_000;
/**
 * How long (real time) a step may stay overdue once the queues drained:
 * then a claim held with nothing running is a sender whose outcome was
 * unknown, and the clock moves past its lease; anything else is a stall.
 */
const STALL_MS = Number(process.env.BENCH_STALL_SECONDS ?? 120) * 1000;
/** A retried step comes back after the steps queue's visibility timeout. */
const REDELIVERY_MS = 360_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 2) =>
  Number.isFinite(n) ? n.toFixed(digits) : '—';

type Deps = BenchStack['deps'];

/** An active 3-step sequence with this trigger; subjects "<name> step n". */
const activeSequence = async (
  deps: Deps,
  orgId: string,
  name: string,
  trigger: Trigger,
) => {
  const created = await createSequence(deps, orgId, {
    name,
    triggerType: trigger.type,
    triggerTargetId: trigger.targetId,
  });
  const versionId = created.draftVersionId;
  if (!versionId) throw new Error('No draft');
  for (let step = 1; step <= 3; step++) {
    if (step > 1) {
      await addNode(deps, orgId, created.id, versionId, {
        type: 'wait',
        waitHours: 24,
      });
    }
    const node = await addNode(deps, orgId, created.id, versionId, {
      type: 'send_email',
    });
    await updateNode(deps, orgId, created.id, versionId, node.id, {
      subject: `${name} step ${step}`,
    });
    if (step === 3) {
      await updateNode(deps, orgId, created.id, versionId, node.id, {
        sendTimeMinutes: STEP3_MINUTES,
      });
    }
  }
  await publishVersion(deps, orgId, created.id, versionId);
  await updateSequence(deps, orgId, created.id, { status: 'active' });
  return created.id;
};

/** A step SES took: to whom, which, when it was due and when it went. */
interface StepSend {
  sequenceId: string;
  to: string;
  subject: string;
  step: number;
  /** The journey's `dueAt` (the clock's ms), read as SES took the step. */
  dueAt: number;
  clockAt: number;
}

const stepOf = (subject: string) => Number(subject.split(' ').at(-1));

const main = async () => {
  const sends: StepSend[] = [];
  let heldClaims = 0;
  // Bound once the stack is up; the mailer calls it before it returns.
  let journeyOf:
    | ((o: string, s: string, c: string) => Promise<Enrolment | undefined>)
    | undefined;
  const stack = await startBenchStack({
    rate: RATE,
    max24h: 10_000_000,
    minLeadSeconds: 2,
    streams: true,
    onAccepted: async (message, accepted) => {
      const { org, sequence, contact } = message.tags ?? {};
      if (!org || !sequence || !contact || !journeyOf) return;
      // Claimed for this step: its dueAt is still the step's. A failed
      // read must not look like the provider's failure to the sender.
      const journey = await journeyOf(org, sequence, contact).catch(
        () => undefined,
      );
      sends.push({
        sequenceId: sequence,
        to: message.to,
        subject: message.subject,
        step: stepOf(message.subject),
        dueAt: journey?.dueAt ? Date.parse(journey.dueAt) : Number.NaN,
        clockAt: accepted.clockAt,
      });
    },
  });
  const { deps, clock } = stack;
  journeyOf = (o, s, c) => deps.enrolments.get(o, s, c);
  const started = performance.now();
  const wall = () => `${fmt((performance.now() - started) / 1000, 1)} s`;
  const log = (text: string) =>
    console.log(`  [${wall().padStart(7)}] ${text}`);
  try {
    // 1. The organization, its list and tag, the two sequences.
    const org = await createOrganization(deps, { name: 'Journeys' });
    const orgId = org.id;
    await setSendingAllowed(deps, { orgId }, true);
    await setSendQuota(deps, { orgId, max24h: 1_000_000 });
    await deps.organizations.setTimezone(orgId, ZONE);
    const list = await createList(deps, orgId, { name: 'Readers' });
    const tag = await createTag(deps, orgId, { name: 'trial' });
    const welcome = await activeSequence(deps, orgId, 'Welcome', {
      type: 'list_joined',
      targetId: list.id,
    });
    const trial = await activeSequence(deps, orgId, 'Trial', {
      type: 'tag_added',
      targetId: tag.id,
    });
    const journeysOf = (sequenceId: string) =>
      stack.observe(
        async () =>
          (await deps.enrolments.page(orgId, sequenceId, { limit: 100_000 }))
            .items,
      );
    await drained(stack, 1_500);
    stack.resetMeters();
    const metered = performance.now();
    console.log(
      `bench:sequences — ${CONTACTS} contacts into "Welcome" (list_joined), ${indices.filter(isTagged).length} of them also into "Trial" (tag_added); 3 steps a day apart, step 3 at 09:00 ${ZONE}; SES rate ${RATE}/s`,
    );

    /**
     * Waits until the queues drained and no active journey is overdue;
     * returns every journey of Welcome.
     */
    const settle = async () => {
      let deadline = performance.now() + STALL_MS;
      for (;;) {
        await drained(stack, 1_500);
        const journeys = await journeysOf(welcome);
        const now = clock.now().getTime();
        const overdue = [...journeys, ...(await journeysOf(trial))].filter(
          (j) => j.status === 'active' && Date.parse(j.dueAt ?? '') <= now,
        );
        if (overdue.length === 0) return journeys;
        if (performance.now() < deadline) continue;
        const held = overdue.filter(
          (j) => j.claim && Date.parse(j.claim.until) > now,
        );
        if (held.length === 0) {
          throw new Error(
            `${overdue.length} journeys still overdue, e.g. ${JSON.stringify(overdue[0])}`,
          );
        }
        // The system records such a step uncertain once its lease ran out.
        const until = Math.max(
          ...held.map((j) => Date.parse(j.claim?.until ?? '')),
        );
        clock.advance(until - now + 60_000);
        heldClaims += held.length;
        const running = stack
          .inFlight()
          .map((r) => `${r.group} for ${fmt(r.ms / 1000, 0)} s`);
        log(
          `${held.length} claims held, no step finishing (outcome unknown; under way: ${running.join(', ') || 'nothing'}): the clock moves past their lease`,
        );
        deadline = performance.now() + REDELIVERY_MS;
      }
    };

    // 2. The contacts, one add each, a few at a time.
    const contacts: { id: string; email: string }[] = [];
    let next = 0;
    const adder = async () => {
      for (let i = next++; i < CONTACTS; i = next++) {
        const { contact } = await addContact(
          deps,
          orgId,
          list.id,
          v.parse(AddContactBody, {
            email: `reader${i}@journeys.bench.test`,
            firstName: `Reader ${i}`,
            doubleOptIn: false,
            ...(isTagged(i) ? { tags: ['trial'] } : {}),
          }),
        );
        contacts[i] = { id: contact.id, email: contact.email };
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, adder));
    const addsDone = performance.now();
    log(`${CONTACTS} contacts added (${CONCURRENCY} at a time)`);
    await settle();
    log(
      `step 1 done: ${sends.length} sent; journeys Welcome ${(await journeysOf(welcome)).length}, Trial ${(await journeysOf(trial)).length}`,
    );

    // 3. After step 1: unsubscribes, and Trial deleted.
    const unsubscribedAt = new Map<string, number>();
    for (const [i, contact] of contacts.entries()) {
      if (!unsubscribes(i)) continue;
      unsubscribedAt.set(contact.email, clock.now().getTime());
      await unsubscribeContact(deps, orgId, contact.id);
    }
    const deletedAt = clock.now().getTime();
    await deleteSequence(deps, orgId, trial);
    for (;;) {
      await drained(stack, 1_500);
      if ((await journeysOf(trial)).length === 0) break;
    }
    log(
      `${unsubscribedAt.size} contacts unsubscribed; "Trial" deleted, its journeys cleaned up`,
    );

    // 4. The clock moves until every journey has ended.
    let journeys: Enrolment[];
    for (;;) {
      journeys = await settle();
      const active = journeys.filter((j) => j.status === 'active');
      if (active.length === 0) break;
      const now = clock.now().getTime();
      const due = Math.min(...active.map((j) => Date.parse(j.dueAt ?? '')));
      const gap = due - now;
      const jump = gap > DAY ? DAY : Math.max(0, gap - LEAD_MS);
      clock.advance(jump);
      log(
        `sent ${sends.length}; ${active.length} journeys active; clock +${fmt(jump / 3_600_000, 2)} h → ${clock.now().toISOString()}${jump < DAY ? `, next step due in ${fmt((gap - jump) / 1000, 1)} s` : ''}`,
      );
      if (jump < DAY) await sleep(gap - jump);
    }
    const runDone = performance.now();
    log(`every journey ended: ${sends.length} sent`);
    // SES's events of the last mails.
    await drained(stack, 3_000);

    report(stack, {
      sends,
      contacts,
      welcome,
      trial,
      journeys,
      trialLeft: (await journeysOf(trial)).length,
      heldClaims,
      unsubscribedAt,
      deletedAt,
      seconds: {
        adds: (addsDone - metered) / 1000,
        run: (runDone - metered) / 1000,
      },
    });
  } finally {
    await stack.stop();
  }
};

const report = (
  stack: BenchStack,
  run: {
    sends: StepSend[];
    contacts: { id: string; email: string }[];
    welcome: string;
    trial: string;
    journeys: Enrolment[];
    trialLeft: number;
    heldClaims: number;
    unsubscribedAt: Map<string, number>;
    deletedAt: number;
    seconds: { adds: number; run: number };
  },
) => {
  const { sends, contacts } = run;
  const nameOf = (sequenceId: string) =>
    sequenceId === run.welcome ? 'Welcome' : 'Trial';

  // What each contact should have received.
  const expected = new Set<string>();
  for (const [i, { email }] of contacts.entries()) {
    expected.add(`${email}|Welcome step 1`);
    if (!unsubscribes(i)) {
      expected.add(`${email}|Welcome step 2`);
      expected.add(`${email}|Welcome step 3`);
    }
    if (isTagged(i)) expected.add(`${email}|Trial step 1`);
  }
  const received = new Map<string, number>();
  for (const s of sends) {
    const key = `${s.to}|${s.subject}`;
    received.set(key, (received.get(key) ?? 0) + 1);
  }
  const duplicates = [...received.values()].reduce((n, c) => n + c - 1, 0);
  const missing = [...expected].filter((key) => !received.has(key)).length;
  const unexpected = [...received.keys()].filter(
    (key) => !expected.has(key),
  ).length;
  const afterUnsubscribe = sends.filter(
    (s) => s.clockAt >= (run.unsubscribedAt.get(s.to) ?? Infinity),
  ).length;
  const afterDelete = sends.filter(
    (s) => s.sequenceId === run.trial && s.clockAt >= run.deletedAt,
  ).length;
  const bySubject = new Map<string, number>();
  for (const s of sends) {
    const name = `${nameOf(s.sequenceId)} ${s.step}`;
    bySubject.set(name, (bySubject.get(name) ?? 0) + 1);
  }
  const ends = new Map<string, number>();
  for (const j of run.journeys) {
    const end = j.exitReason ? `${j.status} (${j.exitReason})` : j.status;
    ends.set(end, (ends.get(end) ?? 0) + 1);
  }

  // Lateness: SES's accept time (the clock) after the journey's dueAt.
  const lateness = (list: StepSend[]) => {
    const late = list.map((s) => (s.clockAt - s.dueAt) / 1000);
    return `p50 ${fmt(percentile(late, 50))} s, p99 ${fmt(percentile(late, 99))} s, max ${fmt(Math.max(...late))} s`;
  };
  const unknownDue = sends.filter((s) => !Number.isFinite(s.dueAt)).length;
  const early = sends.filter((s) => s.clockAt < s.dueAt).length;

  // The journeys' path: the stream consumers and the steps consumer.
  const steps = sends.length;
  const per = (n: number, digits = 3) => fmt(n / steps, digits);
  const journeysPath = (label: string) =>
    label === 'contacts' || label === 'journeys' || label === 'steps';
  const dynamoOf = (path: (label: string) => boolean) => {
    const calls = stack.dynamoCalls.filter((c) => path(c.label));
    /** The heaviest calls by `amount`, per step sent. */
    const top = (amount: (c: DynamoCall) => number, count = 8) => {
      const byCall = new Map<string, number>();
      for (const c of calls) {
        const name = `${c.label} ${c.command.replace('Command', '')}`;
        byCall.set(name, (byCall.get(name) ?? 0) + amount(c));
      }
      return [...byCall.entries()]
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([name, n]) => `${name} ${per(n, 2)}`)
        .join(', ');
    };
    return {
      seconds: calls.reduce((sum, c) => sum + c.end - c.start, 0) / 1000,
      requests: calls.length,
      wcu: calls.reduce((sum, c) => sum + c.wcu, 0),
      rcu: calls.reduce((sum, c) => sum + c.rcu, 0),
      refused: calls.filter((c) => c.refused).length,
      busiest: top(() => 1),
      byRcu: top((c) => c.rcu, 5),
      byWcu: top((c) => c.wcu, 5),
      byRefused: top((c) => (c.refused ? 1 : 0), 3),
    };
  };
  const journeysDynamo = dynamoOf(journeysPath);
  const eventsDynamo = dynamoOf((label) => label === 'events');
  const apiDynamo = dynamoOf((label) => label === 'api');
  const scheduler = (op: 'schedule' | 'cancel') =>
    stack.schedulerCalls.filter((c) => c.op === op);
  const schedulerBy = (op: 'schedule' | 'cancel') => {
    const by = new Map<string, number>();
    for (const c of scheduler(op))
      by.set(c.consumer, (by.get(c.consumer) ?? 0) + 1);
    return [...by.entries()].map(([name, n]) => `${name} ${n}`).join(', ');
  };
  const schedulerMs = stack.schedulerCalls.map((c) => c.ms);
  const billed = stack.sqsCalls.filter((c) => !c.empty);
  const stepsSqs = billed.filter((c) => c.queue === 'steps');
  const stepsMessages = stepsSqs.filter(
    (c) => c.command === 'SendMessage',
  ).length;
  const eventsSqs = billed.filter((c) => c.queue === 'events');
  const invocations = new Map<string, number[]>();
  for (const i of stack.invocations) {
    if (i.group === BENCH) continue;
    invocations.set(i.group, [...(invocations.get(i.group) ?? []), i.ms]);
  }
  const expectedSends = expected.size;
  const lines = [
    `  steps sent            ${steps} of ${expectedSends} expected (${[...bySubject.entries()].map(([name, n]) => `${name}: ${n}`).join(', ')}); throttled by SES ${stack.throttled()}`,
    `  duplicates            ${duplicates} (same recipient and subject twice; must be 0)`,
    `  missing / unexpected  ${missing} / ${unexpected} (should be 0: a step whose send had an unknown outcome is never sent again); claims held with no sender ${run.heldClaims}; send errors of unknown outcome ${stack.sendErrors.length}${stack.sendErrors.length > 0 ? ` (${[...new Set(stack.sendErrors)].slice(0, 3).join('; ')})` : ''}`,
    `  after unsubscribe     ${afterUnsubscribe} sends to ${run.unsubscribedAt.size} contacts unsubscribed after step 1 (must be 0)`,
    `  after delete          ${afterDelete} sends of the deleted "Trial" (must be 0)`,
    `  journeys              Welcome: ${[...ends.entries()].map(([end, n]) => `${end} ${n}`).join(', ')}; Trial: deleted, ${run.trialLeft} journeys left`,
    `  lateness after dueAt  all ${lateness(sends)}; ${[1, 2, 3].map((step) => `step ${step} ${lateness(sends.filter((s) => s.step === step))}`).join('; ')}; early ${early}, dueAt unknown ${unknownDue}`,
    `  DynamoDB per step sent (what AWS would charge; refused conditional writes count 1 WCU)`,
    `    journeys            ${per(journeysDynamo.requests)} requests, ${per(journeysDynamo.wcu)} WRU, ${per(journeysDynamo.rcu)} RRU, ${journeysDynamo.refused} refused conditions (enrolment, steps, cleanup: contacts, journeys, steps consumers)`,
    `    requests by call    ${journeysDynamo.busiest}`,
    `    read units by call  ${journeysDynamo.byRcu}`,
    `    write units by call ${journeysDynamo.byWcu}; refused ${journeysDynamo.byRefused}`,
    `    SES events          ${per(eventsDynamo.requests)} requests, ${per(eventsDynamo.wcu)} WRU, ${per(eventsDynamo.rcu)} RRU`,
    `    the API's adds etc. ${fmt(apiDynamo.requests / contacts.length, 2)} requests, ${fmt(apiDynamo.wcu / contacts.length, 2)} WRU, ${fmt(apiDynamo.rcu / contacts.length, 2)} RRU per contact added (not counted above)`,
    `  scheduler per step    ${per(scheduler('schedule').length + scheduler('cancel').length)} calls: schedule ${scheduler('schedule').length} (${schedulerBy('schedule')}), cancel ${scheduler('cancel').length} (${schedulerBy('cancel')})`,
    `  SQS per step          steps queue: ${per(stepsMessages)} messages sent, ${per(stepsSqs.length)} billed requests; events queue ${per(eventsSqs.length)} requests (empty receives of the local pollers not counted)`,
    `  call latency          DynamoDB Local ${fmt((1000 * journeysDynamo.seconds) / journeysDynamo.requests, 1)} ms a call on the journeys path (${per(journeysDynamo.requests, 1)} calls a step); the local scheduler p50 ${fmt(percentile(schedulerMs, 50), 0)} ms, max ${fmt(Math.max(...schedulerMs), 0)} ms (it rewrites one JSON file under a lock)`,
    `  invocations           ${[...invocations.entries()].map(([group, ms]) => `${group} ${ms.length} (p50 ${fmt(percentile(ms, 50), 0)} ms)`).join(', ')}`,
    `  wall time             ${fmt(run.seconds.run, 1)} s (adds ${fmt(run.seconds.adds, 1)} s: ${fmt(contacts.length / run.seconds.adds, 0)} adds/s)`,
  ];
  console.log(lines.join('\n'));
  const failed = duplicates + unexpected + afterUnsubscribe + afterDelete;
  if (failed > 0) {
    console.log('  FAILED: a figure that must be 0 is not');
    process.exitCode = 1;
  }
};

await main();
