/**
 * Runs in every test file (vitest `setupFiles`): after the file's own
 * hooks, its test tables are deleted, so the shared DynamoDB engine holds
 * only the tables of the files running now.
 */
import { afterAll } from 'vitest';
import { dropTestTables } from './dynamo.ts';

afterAll(dropTestTables);
