/**
 * `npm run bench:import`: imports 500 contacts (half new, half existing,
 * with tags) into a list on the embedded DynamoDB, several times, and prints
 * wall time, DynamoDB requests, consumed capacity per line, and where the
 * time went (waiting on DynamoDB versus our own CPU).
 *
 * Every DynamoDB call goes through a middleware on the real document client
 * that asks for ReturnConsumedCapacity and records the call, so the figures
 * are those of the production code path.
 */
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { contactBindings } from '../../functions/contacts/routes.ts';
import { ensureTable, startDynamoDb } from '../../infra/local/dynamodb.ts';
import { SesMailer } from '../../shared/adapters/aws/ses-mailer.ts';
import { importContacts } from '../../shared/audience/bulk-import.ts';
import { createList } from '../../shared/audience/lists.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import { createOrganization } from '../../shared/organizations/organizations.ts';
import { buildDeps, documentClientOptions } from '../../shared/runtime/deps.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';
import { unreachableProvider } from '../support/unreachable.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const LINES = 500;
/** The low-level names the middleware sees for write calls. */
const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

interface Call {
  command: string;
  start: number;
  end: number;
  /** Capacity units DynamoDB (Local) reported. */
  capacity: number;
  /** Write units AWS would charge, from the item sizes (transactions). */
  estimatedWcu: number;
}

/** DynamoDB's item size: attribute names plus values, in bytes. */
const sizeOf = (value: unknown): number => {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Set) {
    return [...value].reduce((sum: number, v) => sum + sizeOf(v), 0);
  }
  if (Array.isArray(value)) {
    return 3 + value.reduce((sum: number, v) => sum + 1 + sizeOf(v), 0);
  }
  if (typeof value === 'object') {
    return Object.entries(value).reduce(
      (sum, [name, v]) => sum + Buffer.byteLength(name) + sizeOf(v),
      3,
    );
  }
  return 0;
};

/**
 * What AWS charges for a TransactWriteItems: 2 WCU per item per started KB
 * (a Put by its new item; an Update or a check by at least one KB).
 */
const transactionWcu = (input: Record<string, unknown>): number => {
  const items = (input.TransactItems ?? []) as Record<
    string,
    { Item?: unknown }
  >[];
  return items.reduce((sum, entry) => {
    const put = entry.Put?.Item;
    const kb = put ? Math.max(1, Math.ceil((sizeOf(put) - 3) / 1024)) : 1;
    return sum + 2 * kb;
  }, 0);
};

const calls: Call[] = [];

/** Sums the capacity units of a response (one object, or one per table). */
const capacityOf = (consumed: unknown): number => {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce(
    (sum: number, c: { CapacityUnits?: number }) =>
      sum + (c.CapacityUnits ?? 0),
    0,
  );
};

const instrumentedClient = (endpoint: string) => {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    }),
    documentClientOptions,
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const estimatedWcu =
        context.commandName === 'TransactWriteItemsCommand'
          ? transactionWcu(input)
          : 0;
      const start = performance.now();
      const result = await next(args);
      calls.push({
        command: String(context.commandName),
        start,
        end: performance.now(),
        capacity: capacityOf(
          (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity,
        ),
        estimatedWcu,
      });
      return result;
    },
    { step: 'initialize', name: 'benchRecorder' },
  );
  return client;
};

/** Milliseconds covered by at least one in-flight call. */
const busyTime = (spans: Call[]) => {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let total = 0;
  let [from, to] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const { start, end } of sorted) {
    if (start > to) {
      if (to > from) total += to - from;
      [from, to] = [start, end];
    } else {
      to = Math.max(to, end);
    }
  }
  if (to > from) total += to - from;
  return total;
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[
      Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))
    ] ?? 0
  );
};

const main = async () => {
  const engine = await startDynamoDb();
  try {
    const dynamo = instrumentedClient(engine.endpoint);
    const tableName = 'bench-import';
    await ensureTable(dynamo, tableName, tableDefinition);
    // The contacts function's own deps, from its bindings.
    const deps = buildDeps(contactBindings, {
      table: () => ({ dynamo, tableName, apiKeyCacheTtlSeconds: 0 }),
      mailer: () => new SesMailer(new SESv2Client({ region: LOCAL_REGION })),
      linkSecret: () => async () => 'unused-in-an-import-unused-in-an-import',
      endpoints: () => ({
        publicApiUrl: 'http://127.0.0.1/api/v1',
        appFromAddress: 'bench@example.test',
      }),
      // An import never reaches the provider or DNS.
      provider: () => unreachableProvider,
    });
    const org = await createOrganization(deps, { name: 'Bench' });
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
      requests: number;
      writes: number;
      wcu: number;
      estimatedWcu: number;
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
      const file = Array.from({ length: LINES }, (_, i) => line(i));

      // Act (measured): 250 existing + 250 new lines.
      calls.length = 0;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const report = await importContacts(deps, org.id, list.id, file);
      const wall = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      if (report.created !== LINES / 2 || report.updated !== LINES / 2) {
        throw new Error(`unexpected report ${JSON.stringify(report)}`);
      }
      if (run === 0) continue; // warm-up: JIT and connections
      const byCommand: Record<string, number> = {};
      for (const call of calls) {
        byCommand[call.command] = (byCommand[call.command] ?? 0) + 1;
      }
      const writes = calls.filter((c) => WRITE_COMMANDS.has(c.command));
      rows.push({
        wall,
        requests: calls.length,
        writes: writes.length,
        wcu: writes.reduce((sum, c) => sum + c.capacity, 0),
        estimatedWcu: writes.reduce((sum, c) => sum + c.estimatedWcu, 0),
        rcu: calls
          .filter((c) => !WRITE_COMMANDS.has(c.command))
          .reduce((sum, c) => sum + c.capacity, 0),
        dynamoBusy: busyTime(calls),
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
