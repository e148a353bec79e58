import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import {
  type DynamoDbEngine,
  startDynamoDb,
} from '../../infra/local/dynamodb.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The DynamoDB engines, one per worker: a test reaches its worker's
     * with `testDynamoEndpoint()` (test/support/dynamo.ts).
     */
    dynamodbEndpoints: string[];
    mailboxUrl: string;
    /** The shared local DNS server, `127.0.0.1:PORT`. */
    dnsServer: string;
    /** The records file it answers from. */
    dnsRecordsFile: string;
    /** The embedded SQS engine's endpoint, for an SQSClient. */
    sqsEndpoint: string;
    /** A scratch directory removed after the run (provider state files). */
    scratchDir: string;
  }
}

/**
 * Starts the local stack's engines once for the whole run (the same list as
 * `npm start`): an in-memory DynamoDB engine, the SES v2 emulator (mailbox),
 * a DNS server and SQS. Test files keep apart by table, by recipient, by
 * domain name and by queue. Each worker past the first gets a DynamoDB
 * engine of its own: one engine answers one request at a time (two clients
 * of one engine made 186 calls/s where one made 205; two engines, 338).
 */
export default async function setup(project: TestProject) {
  const scratchDir = await mkdtemp(join(tmpdir(), 'email-marketing-tests-'));
  const removeScratchDir = () =>
    rm(scratchDir, { recursive: true, force: true });
  const dnsRecordsFile = join(scratchDir, 'dns.json');
  const running = await ensureDnsRecordsFile(dnsRecordsFile)
    .then(() => startEngines(localEngines({ dnsRecordsFile })))
    .catch(async (error: unknown) => {
      await removeScratchDir();
      throw error;
    });
  const extraEngines: DynamoDbEngine[] = [];
  const stopExtraEngines = () =>
    Promise.all(extraEngines.map((engine) => engine.stop()));
  await Promise.all(
    Array.from({ length: project.config.maxWorkers - 1 }, async () => {
      extraEngines.push(await startDynamoDb());
    }),
  ).catch(async (error: unknown) => {
    await stopExtraEngines();
    await running.stop();
    await removeScratchDir();
    throw error;
  });
  const { dynamodb, mailbox, dns, sqs } = running.engines;
  project.provide('dynamodbEndpoints', [
    dynamodb.endpoint,
    ...extraEngines.map((engine) => engine.endpoint),
  ]);
  project.provide('mailboxUrl', mailbox.url);
  project.provide('dnsServer', dns.address);
  project.provide('dnsRecordsFile', dnsRecordsFile);
  project.provide('sqsEndpoint', sqs.endpoint);
  project.provide('scratchDir', scratchDir);
  return async () => {
    try {
      await stopExtraEngines();
      await running.stop();
    } finally {
      await removeScratchDir();
    }
  };
}
