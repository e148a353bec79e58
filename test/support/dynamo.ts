import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import type { AudienceEvent } from '../../shared/audience/events.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import type { AdminDeps, Clock, Deps } from '../../shared/ports.ts';
import {
  localAdminDeps,
  localDeps,
  localDynamo,
  noEdgeKeyRegistry,
} from '../../shared/runtime/local.ts';

/** The link secret of tests. */
export const TEST_LINK_SECRET = 'test-link-signing-secret-of-at-least-32-chars';

/** The public base URL links point to in tests. */
export const TEST_PUBLIC_API_URL = 'https://mail.example.test/api/v1';

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

/** Audience events published during a test, in order. */
export const recordingEvents = () => {
  const published: AudienceEvent[] = [];
  return {
    published,
    publish: async (events: AudienceEvent[]) => {
      published.push(...events);
    },
  };
};

/**
 * A fresh table on the shared embedded engine, and the local dependencies
 * over it: the real DynamoDB and SES adapters, no imitation. Audience events
 * are recorded in `events.published`.
 */
export const createTestDeps = async (
  options: { clock?: Clock; apiKeyCacheTtlSeconds?: number } = {},
): Promise<{
  deps: Deps;
  admin: AdminDeps;
  tableName: string;
  events: ReturnType<typeof recordingEvents>;
}> => {
  const endpoint = inject('dynamodbEndpoint');
  const tableName = `test-${randomUUID()}`;
  await ensureTable(localDynamo(endpoint), tableName, tableDefinition);
  const events = recordingEvents();
  const deps = localDeps({
    dynamodb: endpoint,
    tableName,
    mailbox: inject('mailboxUrl'),
    publicApiUrl: TEST_PUBLIC_API_URL,
    linkSecret: TEST_LINK_SECRET,
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds ?? 0,
    audienceEvents: events,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const admin: AdminDeps = {
    ...localAdminDeps({ dynamodb: endpoint, tableName }),
    ...(options.clock ? { clock: options.clock } : {}),
    gatewayKeys: noEdgeKeyRegistry,
  };
  return { deps, admin, tableName, events };
};
