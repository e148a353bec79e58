/**
 * `npm run bench:scale`: the send path's design at provider rates from 100
 * to 5,000 mails a second, measured in process so that what is measured is
 * the design, not this machine.
 *
 * Real: the dispatcher, the senders, the pacer (its lanes on DynamoDB
 * Local), the composer, the campaign's state and its batches, and the
 * consumers' service calls, each message parsed by its queue's schema.
 * Stand-ins: the provider (answers after a fixed latency, default 40 ms,
 * and refuses as throttled any send beyond the account's rate in the
 * trailing second, as SES would); the queues (in process, each delivery
 * 20 ms after it is visible, `delaySeconds` honoured, a failed message
 * back after 2 s); and, when `BENCH_CLAIM_MS` is set, the per-recipient
 * claims (answered by an exact in-memory stand-in after that latency,
 * so that DynamoDB Local on two cores does not cap the rate).
 *
 * Each rate runs: one campaign, two campaigns of two organizations, and
 * at 5,000/s six campaigns (a campaign goes at most 1,000/s); beside each,
 * a sequence step's pacing (a lone step on an idle account, then one in
 * the middle of the send). Printed per run: achieved / configured over the
 * middle of the send (the first and last tenth of its mails left out), the
 * busiest second, throttling refusals, pacer writes per mail, first-mail
 * latency, end against N / rate, and CPU per mail (this process: the
 * composer, the SDK, the pacer; not the DynamoDB engine).
 *
 * The pacer part: one Node process on this machine composes and sends
 * about 900 mails a second (CPU ~1 ms per mail), so the account-wide rates
 * beyond it are measured on the pacing alone, which is what all senders
 * share: campaigns' senders as the dispatcher runs them (batches of
 * `batchSizeFor`, `sendersPerSend` at once, each with its `Slots` on the
 * lanes `deliverBatch` would pick, `parallelSendsFor` sends in flight),
 * each send `sendPaced` to the stand-in provider, without the claim and
 * the composing (their cost per mail is the full runs' CPU per mail, paid
 * by each sender, not shared).
 *
 * Settings: BENCH_RATES (100,400,1000,5000: full runs), BENCH_PACER_RATES
 * (1000,5000,10000: pacer runs; empty for none), BENCH_SECONDS (10: each
 * run's length at its rate), BENCH_PROVIDER_MS (40), BENCH_CLAIM_MS
 * (unset).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import * as v from 'valibot';
import { ensureTable, startDynamoDb } from '../../infra/local/dynamodb.ts';
import type { DynamoTable } from '../../shared/adapters/aws/dynamo-table.ts';
import { setQuota } from '../../shared/adapters/local/local-email-provider.ts';
import { createList } from '../../shared/audience/lists.ts';
import { CreateCampaignBody } from '../../shared/campaigns/campaign.schema.ts';
import { createCampaign } from '../../shared/campaigns/campaigns.ts';
import { BatchMessage, deliverBatch } from '../../shared/campaigns/deliver.ts';
import {
  batchSizeFor,
  DispatchMessage,
  dispatchCampaign,
} from '../../shared/campaigns/dispatch.ts';
import type {
  ClaimResult,
  SendRepository,
} from '../../shared/campaigns/ports.ts';
import { requestSend } from '../../shared/campaigns/send.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { Deps } from '../../shared/deps.ts';
import { forgetAccount } from '../../shared/mail/account.ts';
import {
  blockSeed,
  CAMPAIGN_RATE,
  firstLaneOf,
  parallelSendsFor,
  RATE_HEADROOM,
  ratePlan,
  Slots,
  sendPaced,
} from '../../shared/mail/pacing.ts';
import { SendRefusedError } from '../../shared/mail/refusal.ts';
import { EMAIL_TAGS } from '../../shared/mail/tags.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendQuota,
} from '../../shared/organizations/organizations.ts';
import type {
  Mailer,
  OutgoingMessage,
  QueueSender,
  SendOptions,
} from '../../shared/ports.ts';
import { localDeps, localDynamo } from '../../shared/runtime/local.ts';
import { createTemplate } from '../../shared/templates/templates.ts';
import { seedList } from './seed-list.ts';

const env = process.env;
const ratesOf = (value: string) =>
  value
    .split(',')
    .filter((r) => r.trim() !== '')
    .map(Number);
const RATES = ratesOf(env.BENCH_RATES ?? '100,400,1000,5000');
const PACER_RATES = ratesOf(env.BENCH_PACER_RATES ?? '1000,5000,10000');
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const PROVIDER_MS = Number(env.BENCH_PROVIDER_MS ?? 40);
const CLAIM_MS =
  env.BENCH_CLAIM_MS === undefined ? undefined : Number(env.BENCH_CLAIM_MS);

/** How long after a message is visible its consumer gets it (Lambda's poll). */
const DELIVERY_MS = 20;
/** When a failed message comes back. */
const RETRY_MS = 2_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 2) =>
  Number.isFinite(n) ? n.toFixed(digits) : '—';

/** A ~15 KB newsletter: a header, six stories, a footer with the links. */
const NEWSLETTER = (() => {
  const story = (i: number) => `
  <tr><td style="padding:16px 24px;font-family:Arial,sans-serif">
    <h2 style="margin:0 0 8px;font-size:20px;color:#1a1a1a">Story ${i}: what changed this month</h2>
    <img src="https://cdn.example.com/img/story-${i}.png" width="552" alt="Story ${i}" style="display:block;border:0">
    <p style="margin:8px 0;font-size:15px;line-height:22px;color:#333">Hello {{ firstName }}, here is a longer paragraph about the
    news of the month: the new features, what our customers built with them, and a few words on what comes next. We keep
    these notes short enough to read on a phone and long enough to be worth opening.</p>
    <p style="margin:8px 0;font-size:15px;line-height:22px;color:#333">A second paragraph with <a href="https://example.com/s/${i}?utm_source=newsletter">a link to the full story</a>
    and <strong>a few words in bold</strong>, then a list:</p>
    <ul><li>First point of story ${i}</li><li>Second point, a little longer than the first</li><li>Third point</li></ul>
  </td></tr>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>News</title></head>
<body style="margin:0;background:#f4f4f4">
<table role="presentation" width="600" align="center" style="background:#fff">
  <tr><td style="padding:24px;font-family:Arial,sans-serif"><h1 style="margin:0">The monthly letter</h1>
  <p>Dear {{ firstName | default: "reader" }} {{ lastName }},</p></td></tr>
  ${Array.from({ length: 6 }, (_, i) => story(i + 1)).join('\n')}
  <tr><td style="padding:24px;font-size:12px;color:#777;font-family:Arial,sans-serif">
    You receive this as {{ email }}. <a href="{{ unsubscribeUrl }}">Unsubscribe</a>.<br>{{ postalAddress }} · © {{ currentYear }}
  </td></tr>
</table></body></html>`;
})();

/** The provider: a fixed latency, SES's rate enforced over any second. */
class StandInProvider implements Mailer {
  accepted: { at: number; campaign: string | undefined }[] = [];
  throttled = 0;
  private recent: number[] = [];
  constructor(private rate: number) {}

  setRate(rate: number): void {
    this.rate = rate;
    this.accepted = [];
    this.throttled = 0;
    this.recent = [];
  }

  async send(message: OutgoingMessage): Promise<{ messageId: string }> {
    const now = performance.now();
    while (this.recent.length > 0 && (this.recent[0] as number) <= now - 1000) {
      this.recent.shift();
    }
    await sleep(PROVIDER_MS / 2);
    if (this.recent.length >= this.rate) {
      this.throttled++;
      await sleep(PROVIDER_MS / 2);
      throw new SendRefusedError('throttled', 'Maximum sending rate exceeded.');
    }
    this.recent.push(now);
    const campaign = message.tags?.[EMAIL_TAGS.campaign];
    this.accepted.push({ at: performance.now(), campaign });
    await sleep(PROVIDER_MS / 2);
    return { messageId: `m-${this.accepted.length}` };
  }
}

/** A queue in process: delays honoured, a failure retried, bounded consumers. */
class InProcessQueue implements QueueSender {
  private readonly ready: unknown[] = [];
  private running = 0;
  failures = 0;
  constructor(
    private readonly handle: (message: unknown) => Promise<void>,
    private readonly concurrency: number,
  ) {}

  async send(message: unknown, options?: SendOptions): Promise<void> {
    const delay = (options?.delaySeconds ?? 0) * 1000 + DELIVERY_MS;
    setTimeout(() => this.push(JSON.parse(JSON.stringify(message))), delay);
  }

  private stopped = false;

  /** Drops every message from now on (the run is over). */
  stop(): void {
    this.stopped = true;
    this.ready.length = 0;
  }

  private push(message: unknown): void {
    if (this.stopped) return;
    this.ready.push(message);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.ready.length > 0) {
      const message = this.ready.shift();
      this.running++;
      this.handle(message)
        .catch(() => {
          this.failures++;
          setTimeout(() => this.push(message), RETRY_MS);
        })
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}

/** Claims answered in memory after `ms`: exact, as the table's would be. */
const standInClaims = (real: SendRepository, ms: number): SendRepository => {
  const claims = new Map<string, { owner: string; messageId?: string }>();
  return {
    ...real,
    start: real.start.bind(real),
    get: real.get.bind(real),
    save: real.save.bind(real),
    leaseBatch: real.leaseBatch.bind(real),
    completeBatch: real.completeBatch.bind(real),
    claim: async (_org, campaignId, recipient, owner): Promise<ClaimResult> => {
      await sleep(ms);
      const key = `${campaignId}/${recipient.contactId}`;
      const held = claims.get(key);
      if (!held) {
        claims.set(key, { owner });
        return { kind: 'claimed' };
      }
      if (held.messageId) return { kind: 'sent', messageId: held.messageId };
      return { kind: 'held' };
    },
    recordOutcomes: async (_org, campaignId, outcomes) => {
      await sleep(ms);
      for (const o of outcomes) {
        const held = claims.get(`${campaignId}/${o.contactId}`);
        if (held && o.messageId) held.messageId = o.messageId;
      }
    },
  };
};

interface World {
  deps: Deps & { queues: { dispatch: QueueSender; send: QueueSender } };
  provider: StandInProvider;
  pacerWrites: () => number;
  queues: { dispatch: InProcessQueue; send: InProcessQueue };
  table: DynamoTable;
  close: () => Promise<void>;
}

/** A fresh table and deps over it, at `rate`. */
const world = async (
  endpoint: string,
  dataDir: string,
  rate: number,
): Promise<World> => {
  const tableName = `scale-${rate}-${Date.now()}`;
  const dynamo = localDynamo(endpoint);
  await ensureTable(dynamo, tableName, tableDefinition);
  let pacerWrites = 0;
  dynamo.middlewareStack.add(
    (next) => async (args) => {
      const key = (args.input as { Key?: { PK?: unknown } }).Key;
      if (String(key?.PK ?? '').startsWith('APP#SENDPACER')) pacerWrites++;
      return next(args);
    },
    { step: 'initialize', name: 'benchPacerWrites' },
  );
  const providerStateFile = join(dataDir, `provider-${tableName}.json`);
  await setQuota(providerStateFile, {
    max24HourSend: 100_000_000,
    maxSendRate: rate,
  });
  forgetAccount();
  const provider = new StandInProvider(rate);
  const built = await localDeps({
    dynamodb: endpoint,
    dynamo,
    tableName,
    mailbox: 'http://127.0.0.1:9',
    dnsServer: '127.0.0.1:9',
    providerStateFile,
    publicApiUrl: 'https://mail.example.com/api/v1',
    linkSecret: 'bench-link-secret-bench-link-secret-0123',
    addressKeySecret: 'bench-address-key-bench-address-key-0123',
    mailer: () => provider,
    queues: { steps: { send: async () => {} } },
  });
  let deps = built as World['deps'];
  const queues = {
    // As declared: the dispatcher 5 at once, senders 50 (see the deploy
    // guide: the senders' concurrency grows with the rate).
    dispatch: new InProcessQueue(
      (m) => dispatchCampaign(deps, v.parse(DispatchMessage, m)),
      5,
    ),
    send: new InProcessQueue(
      (m) => deliverBatch(deps, v.parse(BatchMessage, m)),
      50,
    ),
  };
  deps = {
    ...built,
    ...(CLAIM_MS !== undefined
      ? { sends: standInClaims(built.sends, CLAIM_MS) }
      : {}),
    queues: { ...built.queues, ...queues },
  } as World['deps'];
  return {
    deps,
    provider,
    pacerWrites: () => pacerWrites,
    queues,
    table: { client: dynamo, tableName },
    // DynamoDB Local slows down with every table it holds (one run's
    // table made the next run's seeding 20 times slower): each run drops
    // its own.
    close: async () => {
      queues.dispatch.stop();
      queues.send.stop();
      await dynamo.send(new DeleteTableCommand({ TableName: tableName }));
    },
  };
};

/** An organization that may send, a list of `size`, and `campaigns` drafts. */
const seed = async (
  deps: Deps,
  table: DynamoTable,
  name: string,
  size: number,
  campaigns: number,
) => {
  const org = await createOrganization(deps, { name });
  await setSendingAllowed(deps, { orgId: org.id }, true);
  await setSendQuota(deps, { orgId: org.id, max24h: 10_000_000 });
  const list = await createList(deps, org.id, { name: 'Readers' });
  // Raw batch writes, as the repositories would write the contacts (the
  // API's import: a transaction per contact, ~100 a second on DynamoDB
  // Local past a few runs' tables).
  await seedList(table, {
    orgId: org.id,
    listId: list.id,
    contacts: size,
    emailOf: (i) => `reader${String(i).padStart(6, '0')}@${name}.example.com`,
    tagsOf: () => [],
    unsubscribed: () => false,
    declines: () => undefined,
  });
  const template = await createTemplate(deps, org.id, {
    name: 'Letter',
    defaultSubject: 'The monthly letter, {{ firstName }}',
    content: NEWSLETTER,
  });
  const ids: string[] = [];
  for (let i = 0; i < campaigns; i++) {
    const campaign = await createCampaign(
      deps,
      org.id,
      v.parse(CreateCampaignBody, {
        name: `Letter ${i}`,
        templateId: template.id,
        listId: list.id,
      }),
    );
    ids.push(campaign.id);
  }
  return { orgId: org.id, campaignIds: ids };
};

/** A step's pacing as `runStep` calls it: its latency and pacer writes. */
const stepPacing = async (w: World) => {
  const plan = ratePlan((await w.deps.provider.getAccount()).maxSendRate);
  const slots = new Slots(w.deps, plan, {
    wanted: 1,
    deadline: Date.now() + 40_000,
  });
  const started = performance.now();
  const result = await sendPaced(
    w.deps,
    slots,
    {
      from: 'news@example.com',
      to: 'step@example.com',
      subject: 'Step',
      html: '<p>Step</p>',
      text: 'Step',
      tags: { [EMAIL_TAGS.kind]: 'sequence' },
    },
    Date.now() + 40_000,
  );
  return {
    ms: performance.now() - started,
    kind: result.kind,
    writes: slots.writes,
  };
};

interface Row {
  rate: number;
  run: string;
  mails: number;
  achieved: number;
  expected: number;
  busiest: number;
  throttled: number;
  pacerPerMail: number;
  firstMs: number;
  endS: number;
  idealS: number;
  cpuMs: number;
  stepAlone: string;
  stepBeside: string;
  retries: number;
}

const run = async (
  endpoint: string,
  dataDir: string,
  rate: number,
  tenants: number,
  campaignsEach: number,
): Promise<Row> => {
  const w = await world(endpoint, dataDir, rate);
  const campaigns = tenants * campaignsEach;
  const perCampaignRate = Math.min(rate * RATE_HEADROOM, CAMPAIGN_RATE);
  const accountShare = Math.min(
    rate * RATE_HEADROOM,
    perCampaignRate * campaigns,
  );
  const size = Math.max(200, Math.round((accountShare * SECONDS) / campaigns));
  const orgs = [];
  for (let t = 0; t < tenants; t++) {
    orgs.push(await seed(w.deps, w.table, `tenant${t}`, size, campaignsEach));
  }
  const alone = await stepPacing(w);
  w.provider.setRate(rate);

  // Act: every campaign at once.
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    orgs.flatMap((o) =>
      o.campaignIds.map((id) => requestSend(w.deps, o.orgId, id, {})),
    ),
  );
  const total = size * campaigns;
  let beside: Awaited<ReturnType<typeof stepPacing>> | undefined;
  const deadline = started + (total / accountShare) * 3_000 + 60_000;
  for (;;) {
    const sent = w.provider.accepted.length;
    if (!beside && sent > total / 2) beside = await stepPacing(w);
    const states = await Promise.all(
      orgs.flatMap((o) =>
        o.campaignIds.map((id) => w.deps.campaigns.get(o.orgId, id)),
      ),
    );
    if (states.every((c) => c?.status === 'sent' || c?.status === 'failed')) {
      break;
    }
    if (performance.now() > deadline) {
      console.log(`  rate ${rate}: not finished in time (${sent} of ${total})`);
      break;
    }
    await sleep(50);
  }
  const used = process.cpuUsage(cpu);
  const times = w.provider.accepted
    .filter((a) => a.campaign !== undefined)
    .map((a) => a.at)
    .sort((a, b) => a - b);
  const first = times[0] ?? started;
  const last = times[times.length - 1] ?? started;
  const lo = times[Math.floor(times.length * 0.1)] ?? first;
  const hi = times[Math.floor(times.length * 0.9)] ?? last;
  const middle = times.filter((t) => t >= lo && t <= hi).length;
  let busiest = 0;
  for (let a = 0, b = 0; b < times.length; b++) {
    while ((times[b] as number) - (times[a] as number) >= 1000) a++;
    busiest = Math.max(busiest, b - a + 1);
  }
  const row: Row = {
    rate,
    run: `${campaigns} campaign${campaigns > 1 ? 's' : ''}${tenants > 1 ? `, ${tenants} tenants` : ''}`,
    mails: times.length,
    achieved: hi > lo ? (middle - 1) / ((hi - lo) / 1000) : 0,
    expected: accountShare,
    busiest,
    throttled: w.provider.throttled,
    pacerPerMail: w.pacerWrites() / Math.max(1, times.length),
    firstMs: first - started,
    endS: (last - first) / 1000,
    idealS: total / accountShare,
    cpuMs: (used.user + used.system) / 1000 / Math.max(1, times.length),
    stepAlone: `${fmt(alone.ms, 0)} ms, ${alone.writes} w`,
    stepBeside: beside ? `${fmt(beside.ms, 0)} ms, ${beside.writes} w` : '—',
    retries: w.queues.send.failures + w.queues.dispatch.failures,
  };
  await w.close();
  return row;
};

interface PacerRow {
  rate: number;
  campaigns: number;
  senders: number;
  mails: number;
  achieved: number;
  expected: number;
  busiest: number;
  throttled: number;
  pacerPerMail: number;
  dropped: number;
  cpuMs: number;
  stepBeside: string;
}

/**
 * The pacing alone at an account's rate: campaigns enough to use it (each
 * at most `CAMPAIGN_RATE`), one more so that lanes are contended, their
 * batches sent as `deliverBatch` paces them.
 */
const pacerRun = async (
  endpoint: string,
  dataDir: string,
  rate: number,
): Promise<PacerRow> => {
  const w = await world(endpoint, dataDir, rate);
  w.provider.setRate(rate);
  const plan = ratePlan(rate);
  const usable = rate * RATE_HEADROOM;
  const perCampaign = Math.min(usable, CAMPAIGN_RATE);
  const campaigns =
    Math.ceil(usable / perCampaign) + (usable > perCampaign ? 1 : 0);
  const batchSize = batchSizeFor(plan.senderRate);
  // Whole rounds of batches (one per sender of the send), about SECONDS
  // long: each sender does the same work, as the dispatcher's would.
  const round = plan.sendersPerSend * batchSize;
  const perCampaignMails =
    round * Math.max(1, Math.round((usable * SECONDS) / campaigns / round));
  const mail: OutgoingMessage = {
    from: 'news@example.com',
    to: 'reader@example.com',
    subject: 'Pacing',
    html: '<p>Pacing</p>',
    text: 'Pacing',
    tags: { [EMAIL_TAGS.kind]: 'campaign' },
  };
  let writes = 0;
  let dropped = 0;
  let senders = 0;
  const cpu = process.cpuUsage();
  const campaign = async (c: number) => {
    // The send's block of lanes, as the dispatcher takes it at its start.
    const seed = blockSeed(plan, await w.deps.pacer.nextBlock());
    const batches = Math.ceil(perCampaignMails / batchSize);
    // Sender k takes batches k, k + senders, … (the dispatcher hands a
    // batch out as the one before it on those lanes should end).
    const runBatch = async (batch: number, size: number) => {
      senders++;
      const slots = new Slots(w.deps, plan, {
        wanted: size,
        lanes: plan.lanesPerSender,
        firstLane: firstLaneOf(plan, seed, batch),
        deadline: Date.now() + 60_000,
      });
      let left = size;
      const tagged = {
        ...mail,
        tags: { ...mail.tags, [EMAIL_TAGS.campaign]: `c${c}` },
      };
      const worker = async () => {
        while (left > 0) {
          left--;
          const result = await sendPaced(
            w.deps,
            slots,
            tagged,
            Date.now() + 60_000,
          );
          // Throttled past the budget: sent again, as a retried batch would.
          if (result.kind !== 'sent') left++;
        }
      };
      await Promise.all(
        Array.from(
          { length: Math.min(parallelSendsFor(plan.senderRate), size) },
          worker,
        ),
      );

      await slots.release();
      writes += slots.writes;
      dropped += slots.dropped;
    };
    // Sender k takes batches k, k + senders, …: as the dispatcher's
    // `delayFor` does, each starts shortly before the one before it on
    // those lanes should end (a tenth of its time, at least a second).
    const sender = async (k: number) => {
      const running: Promise<void>[] = [];
      for (let batch = k; batch < batches; batch += plan.sendersPerSend) {
        const size = Math.min(batchSize, perCampaignMails - batch * batchSize);
        const run = runBatch(batch, size);
        running.push(run);
        const expectedMs = (size / plan.senderRate) * 1000;
        const handoverMs = Math.max(1_000, expectedMs / 10);
        await Promise.race([run, sleep(expectedMs - handoverMs)]);
        // The next batch's message reaches a sender.
        await sleep(DELIVERY_MS);
      }
      await Promise.all(running);
    };
    await Promise.all(
      Array.from({ length: plan.sendersPerSend }, (_, k) => sender(k)),
    );
  };
  // A sequence step's instant, once the account's rate is in full use.
  const step = (async () => {
    const total = perCampaignMails * campaigns;
    while (w.provider.accepted.length < total / 2) await sleep(20);
    return stepPacing(w);
  })();
  await Promise.all(Array.from({ length: campaigns }, (_, c) => campaign(c)));
  const beside = await step;
  const used = process.cpuUsage(cpu);
  const times = w.provider.accepted.map((a) => a.at).sort((a, b) => a - b);
  const lo = times[Math.floor(times.length * 0.1)] ?? 0;
  // The account's rate is measured while every send still sends (then
  // the sends want more than the rate): up to the first send's last mail.
  const lastOf = new Map<string, number>();
  for (const a of w.provider.accepted) {
    const key = a.campaign ?? '';
    lastOf.set(key, Math.max(lastOf.get(key) ?? 0, a.at));
  }
  const hi = Math.min(
    times[Math.floor(times.length * 0.9)] ?? 0,
    ...[...lastOf.entries()].filter(([k]) => k !== '').map(([, t]) => t),
  );
  const middle = times.filter((t) => t >= lo && t <= hi).length;
  let busiest = 0;
  for (let a = 0, b = 0; b < times.length; b++) {
    while ((times[b] as number) - (times[a] as number) >= 1000) a++;
    busiest = Math.max(busiest, b - a + 1);
  }
  await w.close();
  return {
    rate,
    campaigns,
    senders,
    mails: times.length,
    achieved: hi > lo ? (middle - 1) / ((hi - lo) / 1000) : 0,
    expected: usable,
    busiest,
    throttled: w.provider.throttled,
    pacerPerMail: writes / Math.max(1, times.length),
    dropped,
    cpuMs: (used.user + used.system) / 1000 / Math.max(1, times.length),
    stepBeside: `${fmt(beside.ms, 0)} ms, ${beside.writes} w`,
  };
};

const main = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-scale-'));
  // A fresh DynamoDB Local per run: one that held a run's table (even
  // deleted) served the next run's writes twenty times slower.
  const onFreshEngine = async <T>(act: (endpoint: string) => Promise<T>) => {
    const dynamodb = await startDynamoDb();
    try {
      return await act(dynamodb.endpoint);
    } finally {
      await dynamodb.stop();
    }
  };
  const rows: Row[] = [];
  const pacerRows: PacerRow[] = [];
  try {
    console.log(
      `bench:scale — provider ${PROVIDER_MS} ms, claims ${CLAIM_MS === undefined ? 'on DynamoDB Local' : `a stand-in at ${CLAIM_MS} ms`}, ${SECONDS} s of sending per run`,
    );
    for (const rate of RATES) {
      const runs: [number, number][] =
        rate > CAMPAIGN_RATE
          ? [
              [1, 1],
              [2, Math.ceil(rate / CAMPAIGN_RATE / 2)],
            ]
          : [
              [1, 1],
              [2, 1],
            ];
      for (const [tenants, each] of runs) {
        const row = await onFreshEngine((endpoint) =>
          run(endpoint, dataDir, rate, tenants, each),
        );
        rows.push(row);
        console.log(
          `  ${rate}/s, ${row.run}: ${row.mails} mails, ${fmt(row.achieved / row.expected)} of ${fmt(row.expected, 0)}/s; busiest second ${row.busiest}, throttled ${row.throttled}, pacer writes/mail ${fmt(row.pacerPerMail, 3)}, first mail ${fmt(row.firstMs, 0)} ms, ${fmt(row.endS, 1)} s vs ${fmt(row.idealS, 1)} s, CPU/mail ${fmt(row.cpuMs, 2)} ms, step alone ${row.stepAlone}, mid-send ${row.stepBeside}`,
        );
      }
    }
    for (const rate of PACER_RATES) {
      const row = await onFreshEngine((endpoint) =>
        pacerRun(endpoint, dataDir, rate),
      );
      pacerRows.push(row);
      console.log(
        `  pacer at ${rate}/s, ${row.campaigns} campaigns: ${row.mails} mails, ${fmt(row.achieved / row.expected)} of ${fmt(row.expected, 0)}/s; busiest second ${row.busiest}, throttled ${row.throttled}, pacer writes/mail ${fmt(row.pacerPerMail, 3)}, CPU/mail ${fmt(row.cpuMs, 3)} ms, a step mid-send ${row.stepBeside}`,
      );
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(
    '\n| rate | run | mails | achieved / expected (middle) | busiest second | throttled | pacer writes / mail | first mail | last − first vs N / rate | CPU / mail | a step alone | a step mid-send | retried messages |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.rate}/s | ${r.run} | ${r.mails} | ${fmt(r.achieved, 0)} / ${fmt(r.expected, 0)} = **${fmt(r.achieved / r.expected)}** | ${r.busiest} | ${r.throttled} | ${fmt(r.pacerPerMail, 3)} | ${fmt(r.firstMs, 0)} ms | ${fmt(r.endS, 1)} s vs ${fmt(r.idealS, 1)} s | ${fmt(r.cpuMs, 2)} ms | ${r.stepAlone} | ${r.stepBeside} | ${r.retries} |`,
    );
  }
  if (pacerRows.length > 0) {
    console.log(
      '\nThe pacing alone (no claim, no composing):\n\n| account rate | campaigns | batches (senders) | mails | achieved / expected (middle) | busiest second | throttled | pacer writes / mail | instants dropped | CPU / mail | a step mid-send |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of pacerRows) {
      console.log(
        `| ${r.rate}/s | ${r.campaigns} | ${r.senders} | ${r.mails} | ${fmt(r.achieved, 0)} / ${fmt(r.expected, 0)} = **${fmt(r.achieved / r.expected)}** | ${r.busiest} | ${r.throttled} | ${fmt(r.pacerPerMail, 3)} | ${r.dropped} | ${fmt(r.cpuMs, 3)} ms | ${r.stepBeside} |`,
      );
    }
  }
  console.log(
    `\nCPU per mail: this process's user + system time over the run, divided by the mails. Machine: ${(await import('node:os')).cpus().length} cores.`,
  );
};

await main();
