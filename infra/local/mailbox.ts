/**
 * The local mailbox: the aws-ses-v2-local SES v2 emulator, in process. Every
 * email the service sends locally lands here (web page at `/`, JSON at
 * `/store`).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sesEmulator from 'aws-ses-v2-local';
import getPort from 'get-port';

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

/** Starts the SES v2 emulator on a free loopback port. */
export const startMailbox = async (): Promise<Mailbox> => {
  const port = await getPort({ host: '127.0.0.1' });
  const server: Server = await startEmulator({ host: '127.0.0.1', port });
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
