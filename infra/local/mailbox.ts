/**
 * The local mailbox: the aws-ses-v2-local SES v2 emulator, in process. Every
 * email the service sends locally lands here (web page at `/`, JSON at
 * `/store`). Its GetAccount answers the quota of the local provider's state
 * file, so the real SESv2Client sees what `admin local quota set` set.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sesEmulator from 'aws-ses-v2-local';
import getPort from 'get-port';
import { parseProviderState } from '../../shared/adapters/local/local-email-provider.ts';
import type { ProviderAccount } from '../../shared/sending/provider.ts';

/** A running mailbox. */
export interface Mailbox {
  url: string;
  stop(): Promise<void>;
}

// A CommonJS module whose function is `exports.default`: Node's ESM import
// yields the exports object, while Vite and esbuild unwrap it. Accept both.
type StartEmulator = typeof sesEmulator.default;
const startEmulator: StartEmulator =
  typeof sesEmulator === 'function'
    ? (sesEmulator as unknown as StartEmulator)
    : sesEmulator.default;

/** The emulator's GetAccount answer (its schema: all fields required). */
export const emulatorAccount = (quota: ProviderAccount) => ({
  DedicatedIpAutoWarmupEnabled: false,
  Details: {
    AdditionalContactEmailAddresses: [],
    ContactLanguage: 'EN',
    MailType: 'MARKETING',
    ReviewDetails: { CaseId: 'local', Status: 'GRANTED' },
    UseCaseDescription: 'The local stack of the email marketing service',
    WebsiteURL: 'http://127.0.0.1',
  },
  EnforcementStatus: 'HEALTHY',
  ProductionAccessEnabled: true,
  SendingEnabled: true,
  SendQuota: {
    Max24HourSend: quota.max24HourSend,
    MaxSendRate: quota.maxSendRate,
    SentLast24Hours: quota.sentLast24Hours,
  },
  SuppressionAttributes: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
});

/**
 * Sets `AWS_SES_ACCOUNT`, which the emulator reads on each GetAccount, from
 * the provider's state file. Synchronous, so it can run just before the
 * emulator handles the request; an unreadable file keeps the last value.
 */
const syncAccount = (providerStateFile: string) => {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(providerStateFile, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
    json = undefined;
  }
  try {
    const { quota } = parseProviderState(json, providerStateFile);
    process.env.AWS_SES_ACCOUNT = JSON.stringify(emulatorAccount(quota));
  } catch {
    // A hand-edited, invalid file: keep the last good quota.
  }
};

/**
 * Starts the SES v2 emulator on a free loopback port. With a provider state
 * file, its GetAccount follows that file's quota (re-read on each call).
 */
export const startMailbox = async (
  options: { providerStateFile?: string } = {},
): Promise<Mailbox> => {
  const port = await getPort({ host: '127.0.0.1' });
  const { providerStateFile } = options;
  if (providerStateFile) syncAccount(providerStateFile);
  const server: Server = await startEmulator({ host: '127.0.0.1', port });
  if (providerStateFile) {
    // Runs before the emulator's own listener, for the same request.
    server.prependListener('request', (request: IncomingMessage) => {
      if (request.url?.startsWith('/v2/email/account')) {
        syncAccount(providerStateFile);
      }
    });
  }
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
