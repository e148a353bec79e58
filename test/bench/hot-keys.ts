/**
 * `npm run bench:hotkeys`: one campaign's load on DynamoDB's partitions and
 * items, and a stress run of its statistics path, in process on the
 * embedded DynamoDB engine (every call metered as AWS would charge it, see
 * `dynamo-meter.ts`).
 *
 * 1. **Write units per mail**: a campaign of `BENCH_RECIPIENTS` (2,000)
 *    recipients goes the send path's writes (its send item, a lease and a
 *    completion per batch of 250, a claim per recipient), then SES's events
 *    of each mail (Send, Delivery) through the events consumer's handler in
 *    SQS batches of 100. Printed: write units per SES event, and what a
 *    campaign at `BENCH_RATE` (1,000) mails a second writes to each of its
 *    partitions and to its hottest item (DynamoDB: 1,000 units a second per
 *    partition).
 * 2. **Stress of the statistics**: `BENCH_STRESS_RATE` (1,000) delivery
 *    events a second of one campaign for `BENCH_STRESS_SECONDS` (10 s) fed
 *    to the events consumer's handler in batches of 100, at most 5 at once
 *    (its `maxConcurrency`), as SQS would: 1 % of the events come twice in
 *    their batch and 2 % again two seconds later (`BENCH_COPIES=0`: none),
 *    and one batch commit in `BENCH_KILL_EVERY` (25; 0: none) dies (its
 *    messages come back, as after a Lambda timeout). A failed
 *    message comes back after the queue's visibility timeout (60 s), and
 *    is dead-lettered after 5 receipts (`maxReceiveCount`). Printed: the rate
 *    achieved, the failures, the dead letters, and whether the delivered
 *    count is exact.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import {
  eventsBindings,
  eventsConsumer,
} from '../../functions/events/consumer.ts';
import { ensureTable, startDynamoDb } from '../../infra/local/dynamodb.ts';
import { DynamoSendRepository } from '../../shared/adapters/aws/dynamo-send-repository.ts';
import type { SendState } from '../../shared/campaigns/model.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import { createOrganization } from '../../shared/organizations/organizations.ts';
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { buildDeps, documentClientOptions } from '../../shared/runtime/deps.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';
import { lambdaContext } from '../support/events.ts';
import { type DynamoCall, meterDynamo } from './dynamo-meter.ts';

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 2_000);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const STRESS_RATE = Number(process.env.BENCH_STRESS_RATE ?? 1_000);
const STRESS_SECONDS = Number(process.env.BENCH_STRESS_SECONDS ?? 10);
/** One batch commit in this many is killed (0: none). */
const KILL_EVERY = Number(process.env.BENCH_KILL_EVERY ?? 25);
/** Whether some events come twice (`0`: never). */
const COPIES = process.env.BENCH_COPIES !== '0';
const SQS_BATCH = 100;
const MAX_CONCURRENCY = eventsConsumer.queue.maxConcurrency;
const MAX_RECEIVES = eventsConsumer.queue.maxReceiveCount;
const PARTITION_WCU = 1_000;
const VISIBILITY_MS = eventsConsumer.queue.visibilityTimeoutSeconds * 1000;

const calls: DynamoCall[] = [];
let phase = '';

const fmt = (n: number, digits = 2) =>
  n.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });

const AT = '2026-11-27T10:00:00.000Z';

/** SES's event of a campaign's message to its `i`th recipient. */
const sesEvent = (
  type: 'Send' | 'Delivery',
  orgId: string,
  campaignId: string,
  i: number,
): SesEvent => {
  const mail = {
    messageId: `${campaignId}-${i}`,
    timestamp: AT,
    destination: [`reader${i}@bench.test`],
    tags: {
      org: [orgId],
      kind: ['campaign'],
      campaign: [campaignId],
      contact: [`contact-${i}`],
    },
  };
  return type === 'Send'
    ? { eventType: 'Send', mail }
    : {
        eventType: 'Delivery',
        mail,
        delivery: { timestamp: AT, recipients: [`reader${i}@bench.test`] },
      };
};

/** One SQS message of the events queue. */
const sqsRecord = (id: string, body: string, receiveCount = 1): SQSRecord => ({
  messageId: id,
  receiptHandle: `handle-${id}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
    SentTimestamp: String(Date.now()),
    SenderId: 'ses',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:events',
  awsRegion: 'us-east-1',
});

const chunks = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) =>
    items.slice(i * size, (i + 1) * size),
  );

/** Write units by partition and by item, of the calls of some phases. */
const loadOf = (of: DynamoCall[]) => {
  const partitions = new Map<string, number>();
  const items = new Map<string, number>();
  for (const call of of) {
    for (const { key, wcu } of call.written) {
      const pk = key.split(' ')[0] ?? key;
      partitions.set(pk, (partitions.get(pk) ?? 0) + wcu);
      items.set(key, (items.get(key) ?? 0) + wcu);
    }
  }
  return { partitions, items };
};

const main = async () => {
  const engine = await startDynamoDb();
  try {
    const raw = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: engine.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      }),
      documentClientOptions,
    );
    meterDynamo(raw, calls, () => phase);
    // One batch commit in `failEvery` dies, when set (the stress run).
    let failEvery = 0;
    let commits = 0;
    let commitsFailed = 0;
    const dynamo = new Proxy(raw, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: Parameters<typeof target.send>[0]) => {
          if (command instanceof TransactWriteCommand && failEvery > 0) {
            commits++;
            if (commits % failEvery === 0) {
              commitsFailed++;
              return Promise.reject(new Error('the function timed out'));
            }
          }
          return target.send(command);
        };
      },
    });
    const tableName = 'bench-hotkeys';
    await ensureTable(raw, tableName, tableDefinition);
    const deps = await buildDeps(eventsBindings, {
      table: () => ({ dynamo, tableName, apiKeyCacheTtlSeconds: 0 }),
      addressKeySecret: () => async () =>
        'bench-address-key-bench-address-key-0123',
      // No endpoint takes mail events: nothing reaches the fan-out queue.
      queue: () => ({ send: async () => {} }),
      // No MX anywhere: the recipients' domains are not looked up.
      dns: () => ({
        resolveTxt: async () => [],
        resolveCname: async () => [],
        resolveMx: async () => [],
      }),
    });
    const org = await createOrganization(deps, { name: 'Bench' });
    const deadLettered: string[] = [];
    const handler = createConsumerHandler(
      {
        ...deps,
        deadLetters: { send: async (_g, body) => void deadLettered.push(body) },
      },
      eventsConsumer,
    );
    const invoke = (records: SQSRecord[]) =>
      handler({ Records: records }, lambdaContext());

    // 1. Write units per mail: the send path, then SES's two events.
    const campaignId = randomUUID();
    const sends = new DynamoSendRepository({ client: dynamo, tableName });
    const now = new Date();
    const state: SendState = {
      sendId: randomUUID(),
      cursor: null,
      walked: true,
      nextBatch: 0,
      inFlight: {},
      batchesDone: 0,
      progress: { total: RECIPIENTS, sent: 0, failed: 0, skipped: 0 },
      version: 0,
    };
    phase = 'send path';
    await sends.start(org.id, campaignId, state);
    const indexes = Array.from({ length: RECIPIENTS }, (_, i) => i);
    for (const [batch, members] of chunks(indexes, 250).entries()) {
      await sends.leaseBatch(
        org.id,
        campaignId,
        batch,
        'sender',
        new Date(now.getTime() + 60_000),
        now,
      );
      for (const part of chunks(members, 10)) {
        await Promise.all(
          part.map((i) =>
            sends.claim(
              org.id,
              campaignId,
              {
                contactId: `contact-${i}`,
                email: `reader${i}@bench.test`,
                batch,
              },
              'sender',
              new Date(now.getTime() + 15 * 60_000),
              now,
            ),
          ),
        );
      }
      await sends.completeBatch(org.id, campaignId, batch, 'sender', {
        sent: members.length,
        failed: 0,
        skipped: 0,
      });
    }
    for (const type of ['Send', 'Delivery'] as const) {
      phase = type;
      for (const part of chunks(indexes, SQS_BATCH)) {
        const response = await invoke(
          part.map((i) =>
            sqsRecord(
              `${type}-${i}`,
              JSON.stringify(sesEvent(type, org.id, campaignId, i)),
            ),
          ),
        );
        if (response.batchItemFailures.length > 0) {
          throw new Error(`${type} events failed`);
        }
      }
    }
    const delivered = (await deps.campaignStats.read(org.id, campaignId))
      .counters.delivered;
    const of = (label: string) => calls.filter((c) => c.label === label);
    const sum = (list: DynamoCall[], f: (c: DynamoCall) => number) =>
      list.reduce((total, c) => total + f(c), 0);
    const perMail = (label: string, f: (c: DynamoCall) => number) =>
      sum(of(label), f) / RECIPIENTS;
    const mailCalls = calls.filter((c) =>
      ['send path', 'Send', 'Delivery'].includes(c.label),
    );
    const { partitions, items } = loadOf(mailCalls);
    const campaignPk = `ORG#${org.id}#CAMPAIGN#${campaignId}`;
    const recipientLoads = [...partitions]
      .filter(([pk]) => pk.startsWith(`${campaignPk}#RECIPIENTS#`))
      .map(([, wcu]) => wcu);
    const perSecond = (wcu: number) => (wcu / RECIPIENTS) * RATE;
    const hottestItem = [...items].sort((a, b) => b[1] - a[1])[0];
    const hottestPartition = [...partitions].sort((a, b) => b[1] - a[1])[0];
    const total = sum(mailCalls, (c) => c.wcu);
    const short = (key: string) =>
      key.replace(org.id, '<org>').replace(campaignId, '<campaign>');
    console.log(
      [
        `One campaign, ${RECIPIENTS.toLocaleString('en-US')} recipients (send path, then SES's Send and Delivery through the events consumer in batches of ${SQS_BATCH}); delivered counted: ${delivered}`,
        '',
        '| figure | before (main) | now |',
        '|---|---|---|',
        `| WRU per Send event | 1 | ${fmt(perMail('Send', (c) => c.wcu))} |`,
        `| WRU per Delivery event | 4 | ${fmt(perMail('Delivery', (c) => c.wcu))} |`,
        `| RRU per Send / Delivery event | — | ${fmt(perMail('Send', (c) => c.rcu))} / ${fmt(perMail('Delivery', (c) => c.rcu))} |`,
        `| WRU per mail, send path + events | 1.075 + 5 | ${fmt(perMail('send path', (c) => c.wcu))} + ${fmt(perMail('Send', (c) => c.wcu) + perMail('Delivery', (c) => c.wcu))} = ${fmt(total / RECIPIENTS)} |`,
        `| partitions written per campaign | 1 | ${partitions.size} (the campaign's, ${recipientLoads.length} of recipients) |`,
        `| at ${RATE.toLocaleString('en-US')} mails/s: WCU/s into the hottest partition | ~6,075 (all in \`ORG#o#CAMPAIGN#c\`) | ${fmt(perSecond(hottestPartition?.[1] ?? 0), 0)} (\`${short(hottestPartition?.[0] ?? '')}\`) |`,
        `| at ${RATE.toLocaleString('en-US')} mails/s: WCU/s into the campaign's partition | ~6,075 | ${fmt(perSecond(partitions.get(campaignPk) ?? 0), 0)} |`,
        `| at ${RATE.toLocaleString('en-US')} mails/s: WCU/s into each recipient partition | — | ${fmt(perSecond(Math.min(...recipientLoads)), 0)}–${fmt(perSecond(Math.max(...recipientLoads)), 0)} |`,
        `| at ${RATE.toLocaleString('en-US')} mails/s: WCU/s into the hottest item | ~250, and 125 transactions/s, on each of 8 counter shards | ${fmt(perSecond(hottestItem?.[1] ?? 0), 0)} (\`${short(hottestItem?.[0] ?? '')}\`) |`,
        `| headroom of the hottest partition (${PARTITION_WCU} WCU/s) | −6× | ${fmt(PARTITION_WCU / perSecond(hottestPartition?.[1] ?? 1), 1)}× |`,
      ].join('\n'),
    );

    // 2. Stress: delivery events of one campaign at STRESS_RATE a second.
    phase = 'stress';
    failEvery = KILL_EVERY;
    const stressCampaign = randomUUID();
    const events = STRESS_RATE * STRESS_SECONDS;
    const bodyOf = (i: number) =>
      JSON.stringify(sesEvent('Delivery', org.id, stressCampaign, i));
    // The queue: messages due at an instant (ms from the start).
    const queue: { at: number; record: SQSRecord }[] = [];
    let copies = 0;
    for (let i = 0; i < events; i++) {
      const at = (i / STRESS_RATE) * 1000;
      queue.push({ at, record: sqsRecord(`d-${i}`, bodyOf(i)) });
      // 1 % twice in their batch, 2 % again two seconds later.
      if (COPIES && i % 100 === 7) {
        copies++;
        queue.push({ at, record: sqsRecord(`d-${i}-copy`, bodyOf(i)) });
      }
      if (COPIES && i % 50 === 3) {
        copies++;
        queue.push({
          at: at + 2_000,
          record: sqsRecord(`d-${i}-again`, bodyOf(i)),
        });
      }
    }
    queue.sort((a, b) => a.at - b.at);
    const receives = new Map<string, number>();
    let failures = 0;
    // When the last batch with a first receipt ended: the offered load
    // handled, retries aside (they wait out the visibility timeout).
    let firstPassEnd = 0;
    let invocations = 0;
    let inFlight = 0;
    const running = new Set<Promise<void>>();
    const start = performance.now();
    const elapsed = () => performance.now() - start;
    const due = () => queue.filter((m) => m.at <= elapsed()).length;
    while (queue.length > 0 || running.size > 0) {
      const ready = due();
      if (
        inFlight < MAX_CONCURRENCY &&
        (ready >= SQS_BATCH ||
          (ready > 0 && running.size === 0) ||
          (ready > 0 && queue.length === ready))
      ) {
        const batch = queue.splice(0, Math.min(SQS_BATCH, ready));
        inFlight++;
        invocations++;
        const run = (async () => {
          const records = batch.map(({ record }) => {
            const count = (receives.get(record.messageId) ?? 0) + 1;
            receives.set(record.messageId, count);
            return sqsRecord(record.messageId, record.body, count);
          });
          const response = await invoke(records);
          if (
            records.some((r) => r.attributes.ApproximateReceiveCount === '1')
          ) {
            firstPassEnd = elapsed();
          }
          for (const { itemIdentifier } of response.batchItemFailures) {
            failures++;
            const failed = records.find((r) => r.messageId === itemIdentifier);
            if (!failed) continue;
            if ((receives.get(itemIdentifier) ?? 0) >= MAX_RECEIVES) {
              deadLettered.push(failed.body);
            } else {
              // Visible again after the visibility timeout.
              queue.push({
                at: elapsed() + VISIBILITY_MS,
                record: failed,
              });
              queue.sort((a, b) => a.at - b.at);
            }
          }
        })().finally(() => {
          inFlight--;
          running.delete(run);
        });
        running.add(run);
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const seconds = elapsed() / 1000;
    failEvery = 0;
    const counted = (await deps.campaignStats.read(org.id, stressCampaign))
      .counters.delivered;
    const stressCalls = of('stress');
    console.log(
      [
        '',
        `Stress: ${events.toLocaleString('en-US')} delivery events of one campaign offered at ${STRESS_RATE.toLocaleString('en-US')}/s, ${copies} copies${COPIES ? ' (1 % in their batch, 2 % two seconds later)' : ''}, batches of ${SQS_BATCH}, at most ${MAX_CONCURRENCY} at once, ${KILL_EVERY > 0 ? `one commit in ${KILL_EVERY} killed` : 'no commit killed'}`,
        '',
        '| figure | measured |',
        '|---|---|',
        `| messages handled per second, first receipts | ${fmt((events + copies) / (firstPassEnd / 1000), 0)} (${fmt(firstPassEnd / 1000, 1)} s; the embedded engine on this machine is the limit) |`,
        `| all done, retries included | ${fmt(seconds, 1)} s, ${invocations} invocations |`,
        `| batch commits killed; messages retried (killed batches' and copies waiting for a running batch) | ${commitsFailed}; ${failures} |`,
        `| dead-lettered | ${deadLettered.length} |`,
        `| delivered counted / distinct events | ${counted.toLocaleString('en-US')} / ${events.toLocaleString('en-US')} (${counted === events ? 'exact' : 'NOT EXACT'}) |`,
        `| WRU per event (copies and retries included) | ${fmt(sum(stressCalls, (c) => c.wcu) / events)} |`,
        `| transactions (batch commits) per event | ${fmt(stressCalls.filter((c) => c.command === 'TransactWriteItemsCommand').length / events, 3)} |`,
      ].join('\n'),
    );
    if (counted !== events || deadLettered.length > 0) process.exitCode = 1;
  } finally {
    await engine.stop();
  }
};

await main();
