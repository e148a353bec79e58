/**
 * Composition root of the local stack and of tests: the same DynamoDB
 * adapters, pointed at the embedded DynamoDB engine.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type {
  AdminDeps,
  Clock,
  Deps,
  GatewayKeyRegistry,
  Ids,
} from '../ports.ts';
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

/** The local dependencies of the API handlers. */
export const localDeps = (endpoints: LocalEndpoints): Deps =>
  buildDeps({
    dynamo: localDynamo(endpoints.dynamodb),
    tableName: endpoints.tableName,
    apiKeyCacheTtlSeconds: endpoints.apiKeyCacheTtlSeconds ?? 10,
    ...(endpoints.clock ? { clock: endpoints.clock } : {}),
    ...(endpoints.ids ? { ids: endpoints.ids } : {}),
  });

/**
 * The local stack has no API Gateway usage plan: its gateway passes every
 * request on and our own key check decides. There is nothing to register.
 */
export const noEdgeKeyRegistry: GatewayKeyRegistry = {
  register: async () => {},
  disable: async () => {},
};

/** The operator's dependencies on the local stack. */
export const localAdminDeps = (endpoints: LocalEndpoints): AdminDeps => ({
  ...localDeps(endpoints),
  gatewayKeys: noEdgeKeyRegistry,
});
