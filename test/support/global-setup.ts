import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { startDnsServer } from '../../infra/local/dns-server.ts';
import { startDynamoDb } from '../../infra/local/dynamodb.ts';
import { startMailbox } from '../../infra/local/mailbox.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    mailboxUrl: string;
    /** The shared local DNS server, `127.0.0.1:PORT`. */
    dnsServer: string;
    /** The records file it answers from. */
    dnsRecordsFile: string;
    /** A scratch directory removed after the run (provider state files). */
    scratchDir: string;
  }
}

/**
 * Starts one in-memory DynamoDB engine, one SES v2 emulator (mailbox) and
 * one DNS server for the whole run; test files keep apart by table, by
 * recipient and by domain name.
 */
export default async function setup(project: TestProject) {
  const scratchDir = await mkdtemp(join(tmpdir(), 'email-marketing-tests-'));
  const dnsRecordsFile = join(scratchDir, 'dns.json');
  await ensureDnsRecordsFile(dnsRecordsFile);
  const engine = await startDynamoDb();
  const stops: (() => Promise<void>)[] = [
    () => engine.stop(),
    () => rm(scratchDir, { recursive: true, force: true }),
  ];
  const stopAll = async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
  try {
    const mailbox = await startMailbox();
    stops.push(() => mailbox.stop());
    const dns = await startDnsServer({ recordsFile: dnsRecordsFile });
    stops.push(() => dns.stop());
    project.provide('dynamodbEndpoint', engine.endpoint);
    project.provide('mailboxUrl', mailbox.url);
    project.provide('dnsServer', dns.address);
    project.provide('dnsRecordsFile', dnsRecordsFile);
    project.provide('scratchDir', scratchDir);
  } catch (error) {
    await stopAll();
    throw error;
  }
  return stopAll;
}
