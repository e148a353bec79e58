import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
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
 * domain name and by queue.
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
  const { dynamodb, mailbox, dns, sqs } = running.engines;
  project.provide('dynamodbEndpoint', dynamodb.endpoint);
  project.provide('mailboxUrl', mailbox.url);
  project.provide('dnsServer', dns.address);
  project.provide('dnsRecordsFile', dnsRecordsFile);
  project.provide('sqsEndpoint', sqs.endpoint);
  project.provide('scratchDir', scratchDir);
  return async () => {
    try {
      await running.stop();
    } finally {
      await removeScratchDir();
    }
  };
}
