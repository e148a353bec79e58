/**
 * `npm start`: the local stack. Starts the engines of `localEngines`
 * (DynamoDB, the mailbox, the DNS server, SQS), creates the table from the
 * CDK stack's definition, runs the queue and stream consumers, and serves
 * the API through the local gateway with the very same handlers as on AWS.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { LocalClock } from '../../shared/adapters/local/local-clock.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import { thresholdsFrom } from '../../shared/reputation/model.ts';
import {
  localAdminDeps,
  localDeps,
  localDynamo,
} from '../../shared/runtime/local.ts';
import { prepareLocalAsync } from './async.ts';
import { seedDemo } from './demo.ts';
import { ensureDnsRecordsFile } from './dns-records.ts';
import { ensureTable } from './dynamodb.ts';
import { localEngines, startEngines } from './engines.ts';
import { createGateway } from './gateway.ts';
import { localSecret } from './secrets.ts';
import {
  clockFileOf,
  dnsRecordsFileOf,
  localDataDir,
  providerStateFileOf,
  removeStackFile,
  schedulesFileOf,
  sentLogFileOf,
  streamCheckpointsFileOf,
  streamFailuresFileOf,
  writeStackFile,
} from './stack-file.ts';
import { fileCheckpoints } from './stream-poller.ts';
import { startLocalStreams } from './streams.ts';
import { startWebhookInbox, tableSecrets } from './webhook-inbox.ts';

/** The table name of every local stack (each has its own engine). */
export const LOCAL_TABLE_NAME = 'email-marketing';

/** A whole number of seconds from the environment; a bad value stops. */
const secondsOf = (name: string, fallback: number): number => {
  const value = process.env[name] ?? String(fallback);
  if (!/^\d+$/.test(value)) {
    throw new Error(`${name} must be a whole number of seconds; got ${value}`);
  }
  return Number(value);
};

/** `SCHEDULE_MIN_LEAD_SECONDS` (default 120), as on AWS; a bad value stops. */
const minLeadSeconds = (): number =>
  secondsOf('SCHEDULE_MIN_LEAD_SECONDS', 120);

const main = async () => {
  // 1. Settings from the environment.
  const port = Number(process.env.PORT || 3000);
  const dataDir = localDataDir();
  const dbDir = join(dataDir, 'dynamodb');
  const firstStart = !existsSync(dbDir);
  await mkdir(dbDir, { recursive: true });
  const dnsRecordsFile = dnsRecordsFileOf(dataDir);
  const providerStateFile = providerStateFileOf(dataDir);
  await ensureDnsRecordsFile(dnsRecordsFile);

  // 2. The engines: DynamoDB on disk, the mailbox in memory, DNS from a
  // file, SQS in memory. A signal during start-up stops those started.
  const aborted = new AbortController();
  const starting = startEngines(
    localEngines({ dynamodbDataDir: dbDir, providerStateFile, dnsRecordsFile }),
    { signal: aborted.signal },
  );
  let gatewayClose: (() => Promise<void>) | undefined;
  let stopAsync: (() => Promise<void>) | undefined;
  let stopStreams: (() => Promise<void>) | undefined;
  let stopInbox: (() => Promise<void>) | undefined;
  let stopping = false;
  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    aborted.abort();
    await removeStackFile(dataDir);
    await gatewayClose?.();
    await stopInbox?.();
    // The stream pollers settle their batch and write their checkpoint.
    await stopStreams?.();
    // The pollers before the SQS engine they poll.
    await stopAsync?.();
    // Engines still starting unwind themselves on the abort.
    const stopFailure = await starting.then(
      (running) =>
        running.stop().then(
          () => undefined,
          (error: unknown) => error,
        ),
      () => undefined,
    );
    if (stopFailure) {
      console.error('The local stack did not stop cleanly:', stopFailure);
    }
    process.exit(stopFailure ? 1 : exitCode);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    const { dynamodb, mailbox, dns, sqs } = (await starting).engines;

    // 3. The table, from the same definition as the CDK stack.
    const dynamo = localDynamo(dynamodb.endpoint);
    await ensureTable(dynamo, LOCAL_TABLE_NAME, tableDefinition);
    const api = `http://127.0.0.1:${port}/api/v1`;

    // 4. The asynchronous half: the consumer queues on SQS, and the mailer
    // that publishes SES's events of what it sends.
    // Every component reads the same movable clock (`admin local clock`).
    const clock = new LocalClock(clockFileOf(dataDir));
    const asyncHalf = await prepareLocalAsync({
      sqsEndpoint: sqs.endpoint,
      sentLogFile: sentLogFileOf(dataDir),
      schedulesFile: schedulesFileOf(dataDir),
      // Bounces, complaints, machine opens and scanner clicks at its rates.
      providerStateFile,
      clock,
    });
    stopAsync = () => asyncHalf.stop();
    const deps = await localDeps({
      dynamodb: dynamodb.endpoint,
      tableName: LOCAL_TABLE_NAME,
      mailbox: mailbox.url,
      dnsServer: dns.address,
      providerStateFile,
      publicApiUrl: process.env.PUBLIC_API_URL || api,
      linkSecret: await localSecret(dataDir, 'linkSigning'),
      addressKeySecret: await localSecret(dataDir, 'addressKey'),
      mailer: asyncHalf.mailerWith,
      queues: asyncHalf.senders,
      clock,
      ...(asyncHalf.scheduler ? { scheduler: asyncHalf.scheduler } : {}),
      scheduleMinLeadSeconds: minLeadSeconds(),
      // A wait above a minute is a schedule, which the movable clock moves
      // (an SQS delay runs in real time): webhook retries follow
      // `admin local clock advance` (AWS: 900 s, SQS's limit).
      queueDelayMaxSeconds: secondsOf('QUEUE_DELAY_MAX_SECONDS', 60),
      apiKeyCacheTtlSeconds: Number(
        process.env.API_KEY_CACHE_TTL_SECONDS ?? 10,
      ),
      // The operator's override, as on AWS (REPUTATION_GUARDRAIL).
      reputationThresholds: thresholdsFrom(process.env.REPUTATION_GUARDRAIL),
      // The stand-in is a file read: look at the tenant's status every time,
      // so `admin local provider suspend` shows at once (AWS default: 60 s).
      providerStatusTtlSeconds: Number(
        process.env.PROVIDER_STATUS_TTL_SECONDS ?? 0,
      ),
    });
    const adminDeps = localAdminDeps({
      dynamodb: dynamodb.endpoint,
      tableName: LOCAL_TABLE_NAME,
      addressKeySecret: await localSecret(dataDir, 'addressKey'),
    });

    // 5. The consumers poll their queues and the table's stream (resuming
    // after their checkpoints); the gateway serves the API.
    asyncHalf.start(deps);
    const streams = await startLocalStreams({
      endpoint: dynamodb.endpoint,
      tableName: LOCAL_TABLE_NAME,
      deps,
      checkpoints: (consumer) =>
        fileCheckpoints(streamCheckpointsFileOf(dataDir), consumer),
      failuresFile: streamFailuresFileOf(dataDir),
    });
    stopStreams = () => streams.stop();
    // The webhook inbox, at a port that stays the same from start to start
    // (endpoints keep its URL).
    const inbox = await startWebhookInbox({
      port: Number(process.env.WEBHOOK_INBOX_PORT || port + 1),
      secretsFor: tableSecrets(dynamo, LOCAL_TABLE_NAME),
    });
    stopInbox = () => inbox.stop();
    const server = createGateway([...endpointGroups, ...pageGroups], deps);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    gatewayClose = () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });

    // 6. The demo organization on the first start; its key on every start.
    const demo = firstStart
      ? await seedDemo(adminDeps, dataDir)
      : await readFile(join(dataDir, 'demo.json'), 'utf8')
          .then((text) => JSON.parse(text) as { apiKey: string })
          .catch(() => undefined);

    // 7. Tell the world.
    await writeStackFile(dataDir, {
      api,
      dynamodb: dynamodb.endpoint,
      mailbox: mailbox.url,
      dns: dns.address,
      sqs: sqs.endpoint,
      tableName: LOCAL_TABLE_NAME,
      webhookInbox: inbox.url,
      pid: process.pid,
    });
    if (firstStart && demo) {
      console.log(
        `Created the demo organization with an owner key (kept in ${join(dataDir, 'demo.json')}).`,
      );
    }
    if (demo) console.log(`Demo API key: ${demo.apiKey}`);
    console.log(`Mailbox:      ${mailbox.url}`);
    console.log(
      `Webhooks:     ${inbox.url} (register ${inbox.url}/inbox/<any-name> as an endpoint)`,
    );
    console.log(`DynamoDB:     ${dynamodb.endpoint}`);
    console.log(`SQS:          ${sqs.endpoint}`);
    console.log(`DNS:          ${dns.address} (records in ${dnsRecordsFile})`);
    console.log(`Data dir:     ${dataDir}`);
    console.log(`Reference:    ${api}/docs (document: ${api}/openapi.json)`);
    console.log(`API ready at ${api}`);
    console.log(
      `Try: curl -s -H "x-api-key: ${demo?.apiKey ?? '<API_KEY>'}" ${api}/me`,
    );
  } catch (error) {
    // Stopped by a signal while starting: that stop exits.
    if (stopping) return;
    console.error('The local stack could not start:', error);
    await stop(1);
  }
};

await main();
