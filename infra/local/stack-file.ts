/**
 * `$LOCAL_DATA_DIR/stack.json`: where a running local stack can be reached.
 * Written by `npm start` when ready, removed when it stops; read by the
 * admin CLI and the end-to-end tests.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';

const StackFile = v.object({
  api: v.pipe(v.string(), v.url()),
  dynamodb: v.pipe(v.string(), v.url()),
  mailbox: v.pipe(v.string(), v.url()),
  /** The local DNS server, `127.0.0.1:PORT` (UDP and TCP). */
  dns: v.pipe(v.string(), v.regex(/^127\.0\.0\.1:\d{1,5}$/)),
  /** The embedded SQS engine's endpoint (give it to the SQSClient). */
  sqs: v.pipe(v.string(), v.url()),
  tableName: v.string(),
  /** The webhook inbox (`/inbox/<name>` takes deliveries). */
  webhookInbox: v.optional(v.pipe(v.string(), v.url())),
  pid: v.number(),
});

/** The contents of stack.json. */
export type StackInfo = v.InferOutput<typeof StackFile>;

/** The data directory: `$LOCAL_DATA_DIR`, default `.local`. */
export const localDataDir = (env = process.env): string =>
  resolve(env.LOCAL_DATA_DIR || '.local');

/** The records the local DNS server answers. */
export const dnsRecordsFileOf = (dataDir: string): string =>
  join(dataDir, 'dns.json');

/** The state of the local email provider (identities, tenants, quota). */
export const providerStateFileOf = (dataDir: string): string =>
  join(dataDir, 'provider.json');

/**
 * The local stack's sent log (JSON lines): every message the simulated SES
 * accepted, so that `admin local provider event` can make opens and clicks
 * of it.
 */
export const sentLogFileOf = (dataDir: string): string =>
  join(dataDir, 'sent.jsonl');
/** The local stack's clock: its offset from real time. */
export const clockFileOf = (dataDir: string): string =>
  join(dataDir, 'clock.json');

/** The local scheduler's pending schedules. */
export const schedulesFileOf = (dataDir: string): string =>
  join(dataDir, 'schedules.json');

/**
 * The stream consumers' checkpoints: per consumer, the table's stream and
 * the last settled record of each shard (a restart resumes after it).
 */
export const streamCheckpointsFileOf = (dataDir: string): string =>
  join(dataDir, 'stream-checkpoints.json');

/**
 * Stream batches given up after their retries (JSON lines): the local
 * stand-in of a stream consumer's on-failure queue.
 */
export const streamFailuresFileOf = (dataDir: string): string =>
  join(dataDir, 'stream-failures.jsonl');

const stackFilePath = (dataDir: string) => join(dataDir, 'stack.json');

/** Writes stack.json. */
export const writeStackFile = async (dataDir: string, info: StackInfo) =>
  writeFile(stackFilePath(dataDir), `${JSON.stringify(info, null, 2)}\n`);

/** Removes stack.json (the stack is stopping). */
export const removeStackFile = async (dataDir: string) =>
  rm(stackFilePath(dataDir), { force: true });

/** Reads stack.json, with a clear error when no local stack runs there. */
export const readStackFile = async (dataDir: string): Promise<StackInfo> => {
  let text: string;
  try {
    text = await readFile(stackFilePath(dataDir), 'utf8');
  } catch {
    throw new Error(
      `No local stack is running for ${dataDir} (no stack.json). Start it with "npm start", or pass --stack <name> for a deployed stack.`,
    );
  }
  return v.parse(StackFile, JSON.parse(text));
};
