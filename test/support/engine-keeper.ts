/**
 * The DynamoDB engines of the test workers, one each, kept by the main
 * process (the global setup) so that none outlives the run, and renewed
 * between two test files when worn.
 *
 * DynamoDB Local keeps every record of every change stream it ever wrote,
 * of deleted tables too (DynamoDB keeps them 24 hours), and each record
 * kept slows every later call: measured on one engine, a transaction of
 * five puts cost 8 ms of the engine's CPU beside 1,000 records, 39 ms
 * beside 8,000 and 136 ms beside 29,000; a consistent read 1.2, 4.0 and
 * 9.8 ms. The number of streams does not matter (a hundred empty ones
 * changed nothing), the records do, and a run writes ~35,000. So a worker
 * whose engine holds {@link WORN_AT_RECORDS} records asks for a fresh
 * engine after its file: its tables were dropped anyway. A spare engine is
 * kept started, so the worker moves to it at once; the worn one stops, and
 * the next spare starts, while the worker goes on.
 *
 * Workers ask over a loopback HTTP endpoint (`POST /engines/<index>/renew`,
 * answered with the new endpoint): vitest gives workers no other way to
 * call the main process.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type DynamoDbEngine,
  startDynamoDb,
} from '../../infra/local/dynamodb.ts';

/**
 * Stream records (items written, by the worker's count) at which an engine
 * is renewed: a renewal costs a start (~1.2 s of CPU) and a fresh JIT's
 * slower first calls, records kept cost every call.
 */
export const WORN_AT_RECORDS = 2_500;

/** When the first spare engine starts, after the workers' engines. */
const FIRST_SPARE_AFTER_MS = 15_000;

/** The engines of the workers and the endpoint that renews them. */
export interface EngineKeeper {
  /** Each worker's first engine endpoint, by worker index (pool id − 1). */
  endpoints: string[];
  /** Where workers ask for a renewal. */
  url: string;
  /** Stops the endpoint and every engine, spare and stopping ones too. */
  stop(): Promise<void>;
}

/** Starts `count` engines and the loopback endpoint that renews them. */
export const startEngineKeeper = async (
  count: number,
): Promise<EngineKeeper> => {
  const engines: DynamoDbEngine[] = [];
  const stopAll = () => Promise.all(engines.map((engine) => engine.stop()));
  try {
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        engines[index] = await startDynamoDb();
      }),
    );
  } catch (error) {
    await Promise.all(engines.filter(Boolean).map((engine) => engine.stop()));
    throw error;
  }
  /** The engines stopping, and the spare starting: awaited by `stop`. */
  const background = new Set<Promise<unknown>>();
  const inBackground = <T>(work: Promise<T>): Promise<T> => {
    const tracked = work.finally(() => background.delete(tracked));
    background.add(tracked);
    return tracked;
  };
  let spare: Promise<DynamoDbEngine> | undefined;
  const startSpare = () => {
    spare = inBackground(startDynamoDb());
    // A failed spare is reported by the renewal that takes it.
    spare.catch(() => {});
  };
  // The first spare starts once the workers are under way, not while they
  // start: no engine is worn before its worker's first few files.
  const firstSpare = setTimeout(() => {
    if (!spare) startSpare();
  }, FIRST_SPARE_AFTER_MS);

  /** Moves a worker to the spare engine; the worn one stops meanwhile. */
  const renew = async (index: number): Promise<string> => {
    // Taken before any await: a second worker renewing meanwhile gets the
    // next spare, not this one.
    const taken = spare ?? startDynamoDb();
    startSpare();
    const fresh = await taken;
    const worn = engines[index];
    engines[index] = fresh;
    if (worn) void inBackground(worn.stop());
    return fresh.endpoint;
  };

  const server = createServer((request, response) => {
    const match = /^\/engines\/(\d+)\/renew$/.exec(request.url ?? '');
    const index = Number(match?.[1] ?? -1);
    if (request.method !== 'POST' || !(index >= 0 && index < count)) {
      response.writeHead(404).end();
      return;
    }
    renew(index).then(
      (endpoint) =>
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ endpoint })),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(error instanceof Error ? error.message : String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  }).catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoints: engines.map((engine) => engine.endpoint),
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      clearTimeout(firstSpare);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...background]);
      const left = await spare?.catch(() => undefined);
      await Promise.all([stopAll(), left?.stop()]);
    },
  };
};
