/**
 * Composition root of the local stack and of tests: the same DynamoDB
 * adapters, pointed at the embedded DynamoDB engine.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock, Deps, Ids } from '../ports.ts';
import { buildDeps, documentClientOptions } from './deps.ts';

/** Where the local engines listen. */
export interface LocalEndpoints {
  dynamodb: string;
  tableName: string;
  apiKeyCacheTtlSeconds?: number;
  clock?: Clock;
  ids?: Ids;
}

/** Credentials the embedded engines accept (they check none). */
export const LOCAL_CREDENTIALS = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
};
export const LOCAL_REGION = 'us-east-1';

/** A document client for the embedded DynamoDB engine. */
export const localDynamo = (endpoint: string): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    }),
    documentClientOptions,
  );

/**
 * The local dependencies. Locally, the gateway lets our own authentication
 * decide, so there is no edge key registry to keep in step.
 */
export const localDeps = (endpoints: LocalEndpoints): Deps =>
  buildDeps({
    dynamo: localDynamo(endpoints.dynamodb),
    tableName: endpoints.tableName,
    apiKeyCacheTtlSeconds: endpoints.apiKeyCacheTtlSeconds ?? 10,
    gatewayKeys: { register: async () => {}, disable: async () => {} },
    ...(endpoints.clock ? { clock: endpoints.clock } : {}),
    ...(endpoints.ids ? { ids: endpoints.ids } : {}),
  });
