/**
 * Composition root on AWS Lambda: SDK clients created once per container at
 * module scope, adapters built once, `awsDeps()` memoised.
 */

import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SesEmailProvider } from '../adapters/aws/ses-email-provider.ts';
import { NodeDnsResolver } from '../adapters/node-dns-resolver.ts';
import { loadConfig } from '../config.ts';
import type { Deps } from '../deps.ts';
import { buildDeps, documentClientOptions } from './deps.ts';

const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({}),
  documentClientOptions,
);
const ses = new SESv2Client({});

let deps: Deps | undefined;

/** The dependencies of a Lambda function, built on first use. */
export const awsDeps = (): Deps => {
  if (!deps) {
    const config = loadConfig();
    const { LINK_SIGNING_SECRET: secret, LINK_SIGNING_SECRET_ARN: arn } =
      config;
    deps = buildDeps({
      dynamo,
      ses,
      tableName: config.TABLE_NAME,
      apiKeyCacheTtlSeconds: config.API_KEY_CACHE_TTL_SECONDS,
      endpoints: {
        publicApiUrl: config.PUBLIC_API_URL,
        appFromAddress: config.APP_FROM_ADDRESS,
      },
      provider: new SesEmailProvider(ses, {
        region: config.AWS_REGION,
        accountId: config.AWS_ACCOUNT_ID ?? '',
      }),
      dns: new NodeDnsResolver(
        config.DNS_SERVERS?.split(',')
          .map((server) => server.trim())
          .filter(Boolean),
      ),
      providerStatusTtlSeconds: config.PROVIDER_STATUS_TTL_SECONDS,
      // Powertools caches the secret for the container's life (maxAge below).
      linkSecret: async () => {
        if (secret) return secret;
        const value = await getSecret(arn ?? '', { maxAge: 3600 });
        if (typeof value !== 'string') {
          throw new Error('The link signing secret is not a string');
        }
        return value;
      },
    });
  }
  return deps;
};
