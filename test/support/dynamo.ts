import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  DeleteTableCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import type { LocalAsync } from '../../infra/local/async.ts';
import {
  type LocalDnsRecord,
  setDnsRecord,
} from '../../infra/local/dns-records.ts';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import {
  type CheckpointStore,
  memoryCheckpoints,
} from '../../infra/local/stream-poller.ts';
import { catchUpLocalStreams } from '../../infra/local/streams.ts';
import type { AdminDeps } from '../../shared/access/ports.ts';
import type { AudienceEvent } from '../../shared/audience/events.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { Deps } from '../../shared/deps.ts';
import type { Clock, Mailer, QueueSenders } from '../../shared/ports.ts';
import type { ReputationThresholds } from '../../shared/reputation/model.ts';
import {
  localAdminDeps,
  localDeps,
  localDynamo,
  noEdgeKeyRegistry,
} from '../../shared/runtime/local.ts';
import type { Scheduler } from '../../shared/scheduling/ports.ts';
import type { SignupFormSettings } from '../../shared/signup/ports.ts';
import { WORN_AT_RECORDS } from './engine-keeper.ts';
import { type WriteWatch, watchWrites } from './write-watch.ts';

/** The link secret of tests. */
export const TEST_LINK_SECRET = 'test-link-signing-secret-of-at-least-32-chars';

/** The address key secret of tests (the suppression list's keys). */
export const TEST_ADDRESS_KEY_SECRET =
  'test-address-key-secret-of-at-least-32-chars';

/** The public base URL links point to in tests. */
export const TEST_PUBLIC_API_URL = 'https://mail.example.test/api/v1';

/** A clock the test moves by hand. */
export const fixedClock = (iso = '2026-11-22T10:00:10.000Z') => {
  let now = new Date(iso);
  return {
    now: () => new Date(now),
    set: (next: string | Date) => {
      now = new Date(next);
    },
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  } satisfies Clock & Record<string, unknown>;
};

/**
 * Audience events published during a test, in order. They come from the
 * table's change stream: `settle()` hands the stream consumers what the
 * test's calls wrote since the last time, and answers every event so far.
 */
export const recordingEvents = () => {
  const published: AudienceEvent[] = [];
  let settle: () => Promise<void> = async () => {};
  return {
    published,
    publish: async (events: AudienceEvent[]) => {
      published.push(...events);
    },
    /** Catches the stream consumers up; every event published so far. */
    settle: async (): Promise<AudienceEvent[]> => {
      await settle();
      return published;
    },
    /** Wires `settle` (createTestDeps does). */
    settleWith: (catchUp: () => Promise<void>) => {
      settle = catchUp;
    },
  };
};

/**
 * Publishes a record on the shared local DNS server, replacing the records
 * of the same name and type. The server is shared by every test file: use
 * domain names of your own (e.g. with a random label).
 */
export const publishDns = async (
  record: Pick<LocalDnsRecord, 'name' | 'type' | 'value' | 'priority'>,
): Promise<void> => {
  await setDnsRecord(inject('dnsRecordsFile'), {
    name: record.name,
    type: record.type,
    value: record.value,
    ...(record.priority !== undefined ? { priority: record.priority } : {}),
  });
};

/**
 * The endpoint of this worker's DynamoDB engine (global-setup.ts starts one
 * per worker, as one engine answers one request at a time; the engine
 * keeper gives a worker a fresh one between files). Every test file reaches
 * its tables through it: call it when the file runs, never keep it.
 */
export const testDynamoEndpoint = (): string => {
  if (renewedEndpoint) return renewedEndpoint;
  const endpoints = inject('dynamodbEndpoints');
  return endpoints[workerIndex(endpoints.length)] ?? '';
};

/** This worker's index among the engines (vitest's pool id counts from 1). */
const workerIndex = (engines: number): number =>
  (Number(process.env.VITEST_POOL_ID ?? 1) - 1) % engines;

/** The worker's engine since its last renewal, if any. */
let renewedEndpoint: string | undefined;

/** The tables `createTestDeps` made for the test file running in this worker. */
const tablesOfFile = new Set<string>();

/**
 * A fresh table on the shared embedded engine, and the local dependencies
 * over it: the real DynamoDB and SES adapters, no imitation; the local email
 * provider on a state file of its own and the shared DNS server. Audience
 * events are recorded in `events.published`.
 */
export const createTestDeps = async (
  options: {
    clock?: Clock;
    /**
     * Default that of the local stack and of AWS (10 s): a test of a
     * revocation's immediate effect sets 0.
     */
    apiKeyCacheTtlSeconds?: number;
    /** Default that of buildDeps (60 s). */
    providerStatusTtlSeconds?: number;
    /** The reputation guardrail's thresholds (default ours). */
    reputationThresholds?: ReputationThresholds;
    /**
     * The asynchronous half (`prepareLocalAsync`): its queues and the mailer
     * that publishes SES's events; start its pollers with the deps.
     */
    asyncHalf?: Pick<LocalAsync, 'mailerWith' | 'senders'>;
    /**
     * Stand-ins for the edges the stream consumers use too (journeys
     * schedule steps and send to the steps queue): without queues, a
     * sink for the steps queue and the webhook queues.
     */
    scheduler?: Scheduler;
    queues?: QueueSenders<string>;
    mailer?: Mailer;
    /** The sign-up form's defences (default: the shipped defaults). */
    signupForms?: Partial<SignupFormSettings>;
    /**
     * The API's base URL in links (default `TEST_PUBLIC_API_URL`): a test
     * serving the gateway over HTTP gives its own, so links work.
     */
    publicApiUrl?: string;
    /** Base URL of the hosted sign-up pages (default: the API's origin). */
    pagesUrl?: string;
    /** The longest wait sent as a queue delay (default 900 s, as on AWS). */
    queueDelayMaxSeconds?: number;
  } = {},
): Promise<{
  deps: Deps;
  admin: AdminDeps;
  tableName: string;
  /** The local provider's state file (for setOutage, setTenantStatus…). */
  providerStateFile: string;
  events: ReturnType<typeof recordingEvents>;
  /** The engine's client the deps and admin deps use. */
  dynamo: DynamoDBDocumentClient;
  /** The writes they sent through it, rate-limit logs aside. */
  writes: WriteWatch;
}> => {
  const endpoint = testDynamoEndpoint();
  const tableName = `test-${randomUUID()}`;
  tablesOfFile.add(tableName);
  await ensureTable(localDynamo(endpoint), tableName, tableDefinition);
  const providerStateFile = join(
    inject('scratchDir'),
    `provider-${randomUUID()}.json`,
  );
  const events = recordingEvents();
  const { client: dynamo, writes } = watchWrites(
    localDynamo(endpoint),
    noteRecords,
  );
  const deps = await localDeps({
    dynamodb: endpoint,
    dynamo,
    tableName,
    mailbox: inject('mailboxUrl'),
    dnsServer: inject('dnsServer'),
    providerStateFile,
    publicApiUrl: options.publicApiUrl ?? TEST_PUBLIC_API_URL,
    ...(options.pagesUrl ? { pagesUrl: options.pagesUrl } : {}),
    linkSecret: TEST_LINK_SECRET,
    addressKeySecret: TEST_ADDRESS_KEY_SECRET,
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds ?? 10,
    ...(options.providerStatusTtlSeconds !== undefined
      ? { providerStatusTtlSeconds: options.providerStatusTtlSeconds }
      : {}),
    ...(options.reputationThresholds
      ? { reputationThresholds: options.reputationThresholds }
      : {}),
    audienceEvents: events,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.asyncHalf
      ? {
          mailer: options.asyncHalf.mailerWith,
          queues: options.asyncHalf.senders,
        }
      : {
          queues: {
            steps: { send: async () => {} },
            webhookFanout: { send: async () => {} },
            webhookDeliveries: { send: async () => {} },
            webhookSlowDeliveries: { send: async () => {} },
          },
        }),
    ...(options.queues ? { queues: options.queues } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.mailer ? { mailer: () => options.mailer as Mailer } : {}),
    ...(options.signupForms ? { signupForms: options.signupForms } : {}),
    ...(options.queueDelayMaxSeconds !== undefined
      ? { queueDelayMaxSeconds: options.queueDelayMaxSeconds }
      : {}),
  });
  const checkpoints = new Map<string, CheckpointStore>();
  events.settleWith(() =>
    catchUpLocalStreams({
      endpoint,
      tableName,
      deps,
      checkpoints: (consumer) => {
        const store = checkpoints.get(consumer) ?? memoryCheckpoints();
        checkpoints.set(consumer, store);
        return store;
      },
      retryPauseMs: () => 0,
    }),
  );
  const admin: AdminDeps = {
    ...localAdminDeps({
      dynamodb: endpoint,
      tableName,
      dynamo,
      addressKeySecret: TEST_ADDRESS_KEY_SECRET,
    }),
    ...(options.clock ? { clock: options.clock } : {}),
    gatewayKeys: noEdgeKeyRegistry,
  };
  return { deps, admin, tableName, providerStateFile, events, dynamo, writes };
};

/**
 * Items written to this worker's engine since it started: each is a record
 * of a change stream, which the engine keeps after its table is deleted.
 */
let recordsOnEngine = 0;
const noteRecords = (items: number) => {
  recordsOnEngine += items;
};

/**
 * A client of this worker's engine, for a test's own reads and writes
 * (createTestDeps gives the deps' one): its writes count toward the
 * engine's wear. Make it when the file runs, never keep it across files.
 */
export const testEngineClient = (): DynamoDBDocumentClient =>
  watchWrites(localDynamo(testDynamoEndpoint()), noteRecords).client;

let engine: DynamoDBDocumentClient | undefined;

/** One client of the shared engine for the scans of a test file. */
const engineClient = () => {
  engine ??= testEngineClient();
  return engine;
};

/**
 * Deletes the tables made for the test file that just ran (the setup file
 * test/support/per-file.ts calls it after each file), so the worker's engine
 * holds only the tables, and the items, of the file running now. (What
 * slows the engine is the stream records it keeps after a delete: see
 * `renewEngineIfWorn`.)
 */
export const dropTestTables = async (): Promise<void> => {
  if (tablesOfFile.size === 0) return;
  const names = [...tablesOfFile];
  tablesOfFile.clear();
  const client = engineClient();
  await Promise.all(
    names.map((TableName) =>
      client
        .send(new DeleteTableCommand({ TableName }))
        .catch((error: unknown) => {
          if (!(error instanceof ResourceNotFoundException)) throw error;
        }),
    ),
  );
};

/**
 * Asks the engine keeper for a fresh engine for this worker when its
 * engine holds {@link WORN_AT_RECORDS} stream records or more (see
 * test/support/engine-keeper.ts); per-file.ts calls it after each file,
 * once the file's tables are dropped.
 */
export const renewEngineIfWorn = async (): Promise<void> => {
  if (recordsOnEngine < WORN_AT_RECORDS) return;
  const index = workerIndex(inject('dynamodbEndpoints').length);
  const answer = await fetch(
    `${inject('engineKeeperUrl')}/engines/${index}/renew`,
    { method: 'POST' },
  );
  if (!answer.ok) {
    throw new Error(
      `The engine keeper could not renew engine ${index}: ${answer.status} ${await answer.text()}`,
    );
  }
  const { endpoint } = (await answer.json()) as { endpoint: string };
  renewedEndpoint = endpoint;
  recordsOnEngine = 0;
  engine?.destroy();
  engine = undefined;
};

/**
 * Every item of a test table but the rate-limit logs, in key order: compare
 * two scans to prove a call wrote nothing.
 */
export const scanTable = async (
  tableName: string,
): Promise<Record<string, unknown>[]> => {
  const client = engineClient();
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items
    .filter((item) => !String(item.PK).startsWith('RATE#'))
    .sort((a, b) =>
      `${a.PK}\u0000${a.SK}`.localeCompare(`${b.PK}\u0000${b.SK}`),
    );
};

const keyOf = (item: Record<string, unknown>) => `${item.PK}\u0000${item.SK}`;

/**
 * Puts a test table back to `snapshot` (a `scanTable` result), given what
 * it holds now (another): deletes the items added, writes back the items
 * changed or deleted. Rate-limit logs are left as they are. Lets a long
 * run of cases each start from the same seeded table, small to scan.
 * Answers how many items it wrote.
 */
export const restoreTable = async (
  tableName: string,
  snapshot: Record<string, unknown>[],
  current: Record<string, unknown>[],
): Promise<number> => {
  const wanted = new Map(snapshot.map((item) => [keyOf(item), item]));
  const present = new Map(current.map((item) => [keyOf(item), item]));
  const requests = [
    ...current
      .filter((item) => !wanted.has(keyOf(item)))
      .map((item) => ({
        DeleteRequest: { Key: { PK: item.PK, SK: item.SK } },
      })),
    ...snapshot
      .filter(
        (item) =>
          JSON.stringify(present.get(keyOf(item)), setsAsArrays) !==
          JSON.stringify(item, setsAsArrays),
      )
      .map((item) => ({ PutRequest: { Item: item } })),
  ];
  const client = engineClient();
  for (let i = 0; i < requests.length; i += 25) {
    let pending: Record<string, (typeof requests)[number][]> | undefined = {
      [tableName]: requests.slice(i, i + 25),
    };
    while (pending && Object.keys(pending).length > 0) {
      const { UnprocessedItems } = await client.send(
        new BatchWriteCommand({ RequestItems: pending }),
      );
      pending = UnprocessedItems as typeof pending;
    }
  }
  return requests.length;
};

const setsAsArrays = (_: string, value: unknown) =>
  value instanceof Set ? [...value].sort() : value;
