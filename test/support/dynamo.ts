import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { Clock, Deps } from '../../shared/ports.ts';
import { localDeps, localDynamo } from '../../shared/runtime/local.ts';

/** A clock the test moves by hand. */
export const fixedClock = (iso = '2026-11-22T10:00:10.000Z') => {
  let now = new Date(iso);
  return {
    now: () => new Date(now),
    set: (next: string | Date) => {
      now = new Date(next);
    },
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  } satisfies Clock & Record<string, unknown>;
};

/**
 * A fresh table on the shared embedded engine, and the local dependencies
 * over it: the real DynamoDB adapters, no imitation.
 */
export const createTestDeps = async (
  options: { clock?: Clock; apiKeyCacheTtlSeconds?: number } = {},
): Promise<{ deps: Deps; tableName: string }> => {
  const endpoint = inject('dynamodbEndpoint');
  const tableName = `test-${randomUUID()}`;
  await ensureTable(localDynamo(endpoint), tableName, tableDefinition);
  const deps = localDeps({
    dynamodb: endpoint,
    tableName,
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds ?? 0,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return { deps, tableName };
};
