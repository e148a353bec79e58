/**
 * The embedded SQS engine: the fauxqs emulator (SQS, in memory), in process,
 * on a free loopback port. The real SQSClient talks to it through its
 * endpoint; queues are created the way the AWS side creates them.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from 'fauxqs';

/** A running SQS engine. */
export interface SqsEngine {
  /** `http://127.0.0.1:PORT`, the SQSClient's endpoint. */
  endpoint: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/**
 * Starts fauxqs. Through `buildApp` rather than `startFauxqs`, which listens
 * on every interface: a queue without authentication stays on loopback, like
 * the mailbox and the DNS server. Port 0 lets the OS pick a free port, with
 * no window for another process to take it between the pick and the listen.
 * Queue URLs read `http://sqs.<region>.localhost:PORT/000000000000/<name>`
 * (fauxqs's form), a host that may not resolve: give the SQSClient the
 * endpoint, and it sends there whatever the URL says.
 */
export const startSqs = async (
  options: { port?: number } = {},
): Promise<SqsEngine> => {
  const app = buildApp({ logger: false });
  await app.listen({ host: HOST, port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${HOST}:${port}`,
    // fauxqs closes open connections itself (forceCloseConnections).
    stop: () => {
      stopped ??= app.close().then(() => undefined);
      return stopped;
    },
  };
};
