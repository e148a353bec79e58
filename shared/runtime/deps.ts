/**
 * Builds the dependencies from a DynamoDB document client: the part shared by
 * the AWS and the local composition roots.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoAccessRepository } from '../adapters/aws/dynamo-access-repository.ts';
import { DynamoAppSettingsRepository } from '../adapters/aws/dynamo-app-settings-repository.ts';
import { DynamoListRepository } from '../adapters/aws/dynamo-list-repository.ts';
import { DynamoOrganizationRepository } from '../adapters/aws/dynamo-organization-repository.ts';
import { DynamoRateLimitCounter } from '../adapters/aws/dynamo-rate-limit-counter.ts';
import { randomIds, systemClock } from '../adapters/system.ts';
import type { Clock, Deps, Ids } from '../ports.ts';

/** What differs between runtimes. */
export interface DepsOptions {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  apiKeyCacheTtlSeconds: number;
  clock?: Clock;
  ids?: Ids;
}

/** Wires the DynamoDB repositories and the system clock and ids. */
export const buildDeps = (options: DepsOptions): Deps => {
  const table = { client: options.dynamo, tableName: options.tableName };
  return {
    clock: options.clock ?? systemClock,
    ids: options.ids ?? randomIds,
    organizations: new DynamoOrganizationRepository(table),
    access: new DynamoAccessRepository(table),
    rateLimits: new DynamoRateLimitCounter(table),
    appSettings: new DynamoAppSettingsRepository(table),
    lists: new DynamoListRepository(table),
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds,
  };
};

/** Marshalling options of every document client we create. */
export const documentClientOptions = {
  marshallOptions: { removeUndefinedValues: true },
} as const;
