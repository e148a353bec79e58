/**
 * Runs in every test file (vitest `setupFiles`): after the file's own
 * hooks, its test tables are deleted, so the worker's DynamoDB engine holds
 * only the tables of the file running now; and the engine is renewed when
 * the stream records it keeps have worn it (test/support/engine-keeper.ts).
 */
import { afterAll } from 'vitest';
import { dropTestTables, renewEngineIfWorn } from './dynamo.ts';

afterAll(async () => {
  await dropTestTables();
  await renewEngineIfWorn();
});
