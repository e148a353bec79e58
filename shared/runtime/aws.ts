/**
 * Composition root on AWS Lambda: SDK clients created once per container at
 * module scope, adapters built once, `awsDeps()` memoised.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadConfig } from '../config.ts';
import type { Deps } from '../ports.ts';
import { buildDeps, documentClientOptions } from './deps.ts';

const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({}),
  documentClientOptions,
);

let deps: Deps | undefined;

/** The dependencies of a Lambda function, built on first use. */
export const awsDeps = (): Deps => {
  if (!deps) {
    const config = loadConfig();
    deps = buildDeps({
      dynamo,
      tableName: config.TABLE_NAME,
      apiKeyCacheTtlSeconds: config.API_KEY_CACHE_TTL_SECONDS,
    });
  }
  return deps;
};
