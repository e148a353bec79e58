import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';
import { startEngineKeeper } from './engine-keeper.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The DynamoDB engines, one per worker: a test reaches its worker's
     * with `testDynamoEndpoint()` (test/support/dynamo.ts).
     */
    dynamodbEndpoints: string[];
    /** Where a worker asks for a fresh engine (test/support/engine-keeper.ts). */
    engineKeeperUrl: string;
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
 * Starts the local stack's engines once for the whole run (the list of
 * `npm start` but DynamoDB): the SES v2 emulator (mailbox), a DNS server and
 * SQS, which test files share, keeping apart by recipient, by domain name
 * and by queue; and a DynamoDB engine per worker (one engine answers one
 * request at a time: two clients of one engine made 186 calls/s where one
 * made 205; two engines, 338), kept and renewed by the engine keeper.
 */
export default async function setup(project: TestProject) {
  const scratchDir = await mkdtemp(join(tmpdir(), 'email-marketing-tests-'));
  const removeScratchDir = () =>
    rm(scratchDir, { recursive: true, force: true });
  const dnsRecordsFile = join(scratchDir, 'dns.json');
  const [, mailbox, dns, sqs] = localEngines({ dnsRecordsFile });
  // The Java engines start while the others do: both take a second or two.
  const [others, engines] = await Promise.allSettled([
    ensureDnsRecordsFile(dnsRecordsFile).then(() =>
      startEngines([mailbox, dns, sqs] as const),
    ),
    startEngineKeeper(Math.max(1, project.config.maxWorkers)),
  ]);
  if (others.status === 'rejected' || engines.status === 'rejected') {
    await Promise.allSettled([
      others.status === 'fulfilled' ? others.value.stop() : undefined,
      engines.status === 'fulfilled' ? engines.value.stop() : undefined,
    ]);
    await removeScratchDir();
    throw others.status === 'rejected'
      ? others.reason
      : (engines as PromiseRejectedResult).reason;
  }
  const running = others.value;
  const keeper = engines.value;
  project.provide('dynamodbEndpoints', keeper.endpoints);
  project.provide('engineKeeperUrl', keeper.url);
  project.provide('mailboxUrl', running.engines.mailbox.url);
  project.provide('dnsServer', running.engines.dns.address);
  project.provide('dnsRecordsFile', dnsRecordsFile);
  project.provide('sqsEndpoint', running.engines.sqs.endpoint);
  project.provide('scratchDir', scratchDir);
  return async () => {
    try {
      await keeper.stop();
      await running.stop();
    } finally {
      await removeScratchDir();
    }
  };
}
