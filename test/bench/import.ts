/**
 * `npm run bench:import`: imports 500 contacts (half new, half existing,
 * with tags) into a list on the embedded DynamoDB, several times, and prints
 * wall time, DynamoDB requests, consumed capacity per line, and where the
 * time went (waiting on DynamoDB versus our own CPU).
 *
 * Every DynamoDB call goes through the benchmarks' meter
 * (`dynamo-meter.ts`) on the real document client, so the figures are those
 * of the production code path.
 */
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { contactBindings } from '../../functions/contacts/routes.ts';
import { streamConsumerFunctions } from '../../functions/stream-consumers.ts';
import { ensureTable, startDynamoDb } from '../../infra/local/dynamodb.ts';
import { memoryCheckpoints } from '../../infra/local/stream-poller.ts';
import { catchUpLocalStreams } from '../../infra/local/streams.ts';
import { batchWrite } from '../../shared/adapters/aws/dynamo-table.ts';
import { SesMailer } from '../../shared/adapters/aws/ses-mailer.ts';
import { importContacts } from '../../shared/audience/bulk-import.ts';
import { createList } from '../../shared/audience/lists.ts';
import { table } from '../../shared/bindings.ts';
import { keys } from '../../shared/db/keys.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { Deps } from '../../shared/deps.ts';
import { createOrganization } from '../../shared/organizations/organizations.ts';
import { buildDeps, documentClientOptions } from '../../shared/runtime/deps.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';
import { unreachableProvider } from '../support/unreachable.ts';
import {
  busyTime,
  type DynamoCall,
  meterDynamo,
  percentile,
  WRITE_COMMANDS,
} from './dynamo-meter.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const LINES = 500;

const calls: DynamoCall[] = [];

const instrumentedClient = (endpoint: string) => {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    }),
    documentClientOptions,
  );
  meterDynamo(client, calls);
  return client;
};

/** Every contact item of a list (the import's result). */
const scanContacts = async (
  dynamo: DynamoDBDocumentClient,
  tableName: string,
  orgId: string,
  listId: string,
): Promise<Record<string, unknown>[]> => {
  const query = keys.contactsOfList(orgId, listId);
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery(
    { client: dynamo },
    {
      TableName: tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': query.PK, ':prefix': query.skPrefix },
    },
  )) {
    items.push(...(page.Items ?? []));
  }
  return items;
};

const main = async () => {
  const engine = await startDynamoDb();
  try {
    const dynamo = instrumentedClient(engine.endpoint);
    const tableName = 'bench-import';
    await ensureTable(dynamo, tableName, tableDefinition);
    // The contacts function's own deps, from its bindings.
    const deps = await buildDeps(contactBindings, {
      table: () => ({ dynamo, tableName, apiKeyCacheTtlSeconds: 0 }),
      mailer: () => new SesMailer(new SESv2Client({ region: LOCAL_REGION })),
      linkSecret: () => async () => 'unused-in-an-import-unused-in-an-import',
      addressKeySecret: () => async () =>
        'bench-address-key-bench-address-key-0123',
      endpoints: () => ({
        publicApiUrl: 'http://127.0.0.1/api/v1',
        appFromAddress: 'bench@example.test',
        pagesUrl: 'http://127.0.0.1',
      }),
      // An import never reaches the provider or DNS.
      provider: () => unreachableProvider,
    });
    const org = await createOrganization(deps, { name: 'Bench' });
    // The tag index's and the activity's writes follow each import through
    // the change stream: the contacts consumer is caught up after each, its
    // writes counted (an import publishes no facts: the index and the
    // contacts' activity are all it writes).
    const checkpoints = memoryCheckpoints();
    const indexDeps = await buildDeps(
      [
        table({
          stores: ['contacts', 'activity'],
          actions: ['dynamodb:BatchWriteItem', 'dynamodb:PutItem'],
        }),
      ],
      {
        table: () => ({ dynamo, tableName, apiKeyCacheTtlSeconds: 0 }),
      },
    );
    const catchUpIndex = () =>
      catchUpLocalStreams({
        endpoint: engine.endpoint,
        tableName,
        deps: indexDeps as unknown as Deps,
        consumers: streamConsumerFunctions.filter(
          ({ group }) => group.name === 'contacts',
        ),
        checkpoints: () => checkpoints,
      });
    const tags = ['customers', 'newsletter', 'vip', 'beta', 'events'];
    const line = (i: number) => ({
      email: `reader${i}@bench.test`,
      firstName: `Reader ${i}`,
      tags: [
        tags[i % tags.length] ?? 'customers',
        tags[(i * 7) % tags.length] ?? 'vip',
      ],
      optinAt: '2025-06-01T10:00:00Z',
    });

    const rows: {
      wall: number;
      raw: number;
      requests: number;
      writes: number;
      wcu: number;
      estimatedWcu: number;
      indexWcu: number;
      activityWcu: number;
      rcu: number;
      dynamoBusy: number;
      cpu: number;
      byCommand: Record<string, number>;
    }[] = [];
    for (let run = 0; run < RUNS + 1; run++) {
      // Arrange (not measured): a fresh list holding the 250 existing contacts.
      const list = await createList(deps, org.id, { name: `Run ${run}` });
      await importContacts(
        deps,
        org.id,
        list.id,
        Array.from({ length: LINES / 2 }, (_, i) => line(i)),
      );
      await catchUpIndex();
      const file = Array.from({ length: LINES }, (_, i) => line(i));

      // Act (measured): 250 existing + 250 new lines.
      calls.length = 0;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const report = await importContacts(deps, org.id, list.id, file);
      const wall = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      const importCalls = calls.splice(0);
      await catchUpIndex();
      const consumerWrites = calls
        .splice(0)
        .filter((c) => WRITE_COMMANDS.has(c.command));
      const isActivity = (c: (typeof consumerWrites)[number]) =>
        c.written.some((w) => w.key.includes('#ACTIVITY'));
      const indexWrites = consumerWrites.filter((c) => !isActivity(c));
      const activityWrites = consumerWrites.filter(isActivity);
      if (report.created !== LINES / 2 || report.updated !== LINES / 2) {
        throw new Error(`unexpected report ${JSON.stringify(report)}`);
      }
      // The floor: the same contacts (and new contacts' id pointers) put
      // with plain BatchWriteItem, 25 a request — no reads, no conditions,
      // no counters.
      const stored = await scanContacts(dynamo, tableName, org.id, list.id);
      const rawStarted = performance.now();
      await batchWrite({ client: dynamo, tableName }, [
        ...stored.map((item) => ({
          PutRequest: { Item: { ...item, PK: `RAW#${run}#${item.PK}` } },
        })),
        ...stored.slice(0, LINES / 2).map((item) => ({
          PutRequest: {
            Item: {
              PK: `RAW#${run}#POINTER#${String(item.id)}`,
              SK: 'CONTACT',
              listId: list.id,
              email: item.email,
            },
          },
        })),
      ]);
      const raw = performance.now() - rawStarted;
      if (run === 0) continue; // warm-up: JIT and connections
      const byCommand: Record<string, number> = {};
      for (const call of importCalls) {
        byCommand[call.command] = (byCommand[call.command] ?? 0) + 1;
      }
      const writes = importCalls.filter((c) => WRITE_COMMANDS.has(c.command));
      rows.push({
        wall,
        raw,
        requests: importCalls.length,
        writes: writes.length,
        wcu: writes.reduce((sum, c) => sum + c.capacity, 0),
        estimatedWcu: writes.reduce((sum, c) => sum + c.wcu, 0),
        indexWcu: indexWrites.reduce((sum, c) => sum + c.wcu, 0),
        activityWcu: activityWrites.reduce((sum, c) => sum + c.wcu, 0),
        rcu: importCalls
          .filter((c) => !WRITE_COMMANDS.has(c.command))
          .reduce((sum, c) => sum + c.capacity, 0),
        dynamoBusy: busyTime(importCalls),
        cpu: (cpu.user + cpu.system) / 1000,
        byCommand,
      });
    }

    const walls = rows.map((r) => r.wall);
    const last = rows.at(-1);
    if (!last) throw new Error('no measured run');
    const p50 = (pick: (r: (typeof rows)[number]) => number) =>
      percentile(rows.map(pick), 50);
    const fmt = (n: number, digits = 1) => n.toFixed(digits);
    console.log(
      `bench:import — ${LINES} lines (250 new, 250 existing, 2 tags each), ${RUNS} runs after a warm-up`,
    );
    console.log(
      `  wall time           p50 ${fmt(p50((r) => r.wall))} ms   min ${fmt(Math.min(...walls))} ms   max ${fmt(Math.max(...walls))} ms`,
    );
    console.log(
      `  raw BatchWrite      p50 ${fmt(p50((r) => r.raw))} ms for the same contacts and pointers (no reads, conditions or counters): the import takes ${fmt(p50((r) => r.wall) / p50((r) => r.raw), 2)}× that`,
    );
    console.log(
      `  DynamoDB requests   ${last.requests} per import: ${Object.entries(
        last.byCommand,
      )
        .map(([c, n]) => `${c.replace('Command', '')} ${n}`)
        .join(', ')}`,
    );
    console.log(
      `  write requests      ${fmt(last.writes / LINES, 3)} per line (${last.writes} for ${LINES} lines; target ≤ 1.2)`,
    );
    console.log(
      `  write capacity      ${fmt(last.wcu / LINES, 2)} WCU per line as DynamoDB Local reports it (${fmt(last.wcu, 0)} WCU: Local charges a flat 2 per transaction)`,
    );
    console.log(
      `                      ${fmt(last.estimatedWcu / LINES, 2)} WCU per line as AWS would charge it (${fmt(last.estimatedWcu, 0)} WCU: 2 per transactional item-KB, counters included)`,
    );
    console.log(
      `                      ${fmt(last.indexWcu / LINES, 2)} WCU per line more for the tag index (${fmt(last.indexWcu, 0)} WCU: an entry per tag a contact gains, written by the contacts stream consumer)`,
    );
    console.log(
      `                      ${fmt(last.activityWcu / LINES, 2)} WCU per line more for the contacts' activity (${fmt(last.activityWcu, 0)} WCU: an event per subscription and per tag gained, written by the contacts stream consumer)`,
    );
    console.log(
      `                      ${fmt((last.estimatedWcu + last.indexWcu + last.activityWcu) / LINES, 2)} WCU per line in all`,
    );
    console.log(
      `  read capacity       ${fmt(last.rcu / LINES, 2)} RCU per line (${fmt(last.rcu, 0)} RCU)`,
    );
    console.log(
      `  inside DynamoDB calls p50 ${fmt(p50((r) => r.dynamoBusy))} ms of ${fmt(p50((r) => r.wall))} ms (${fmt((100 * p50((r) => r.dynamoBusy)) / p50((r) => r.wall), 0)}%: SDK serialisation, HTTP and the engine; our code between calls: the rest)`,
    );
    console.log(
      `  our process CPU       p50 ${fmt(p50((r) => r.cpu))} ms (${fmt((100 * p50((r) => r.cpu)) / p50((r) => r.wall), 0)}% of the wall time; includes the SDK's marshalling and HTTP)`,
    );
  } finally {
    await engine.stop();
  }
};

await main();
