/**
 * Composition root on AWS Lambda: a function's deps built from its
 * bindings, once per container. Each SDK client is created when first
 * needed, so a function pays only for the clients its bindings name.
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgeScheduler } from '../adapters/aws/eventbridge-scheduler.ts';
import { SesEmailProvider } from '../adapters/aws/ses-email-provider.ts';
import { SesMailer } from '../adapters/aws/ses-mailer.ts';
import { SqsDeadLetters } from '../adapters/aws/sqs-dead-letters.ts';
import { SqsQueueSender } from '../adapters/aws/sqs-queue-sender.ts';
import { NodeDnsResolver } from '../adapters/node-dns-resolver.ts';
import { type Bindings, bindingsOf, type DepsOf } from '../bindings.ts';
import {
  deadLetterQueueEnv,
  loadConfig,
  queueUrlEnv,
  required,
  scheduleTargetEnv,
} from '../config.ts';
import { captureClient } from '../observability.ts';
import type { DeadLetters } from '../queue/consumer.ts';
import { buildDeps, documentClientOptions } from './deps.ts';
import { signupFormSettings } from './signup-forms.ts';

/** One client per container, made when first asked for. */
const once = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
};

// Each low-level client is captured by the tracer (X-Ray) on Lambda, once:
// the document client shares its base client's middleware.
const dynamo = once(() =>
  DynamoDBDocumentClient.from(
    captureClient(new DynamoDBClient({})),
    documentClientOptions,
  ),
);
const ses = once(() => captureClient(new SESv2Client({})));
// SendEmail has no idempotency token: a retried timeout may send the email
// twice. The mailer's client tries once; the caller decides (its refusal
// says `uncertain`).
const sendingSes = once(() =>
  captureClient(new SESv2Client({ maxAttempts: 1 })),
);
const sqs = once(() => captureClient(new SQSClient({})));
const schedulerClient = once(() => captureClient(new SchedulerClient({})));
const secrets = once(
  () =>
    new SecretsProvider({
      awsSdkV3Client: captureClient(new SecretsManagerClient({})),
    }),
);

/** A Secrets Manager secret, cached by Powertools for an hour. */
const secretValue = async (arn: string, what: string): Promise<string> => {
  const value = await secrets().get(arn, { maxAge: 3600 });
  if (typeof value !== 'string') {
    throw new Error(`The ${what} secret is not a string`);
  }
  return value;
};

/**
 * The deps of a Lambda function with these bindings; the configuration of
 * exactly those bindings is read and validated first.
 */
export const awsDeps = <const B extends Bindings>(bindings: B): DepsOf<B> => {
  const config = loadConfig(bindings);
  const region = config.AWS_REGION ?? 'us-east-1';
  const provider = once(
    () =>
      new SesEmailProvider(ses(), {
        region,
        accountId: required(config.AWS_ACCOUNT_ID, 'AWS_ACCOUNT_ID'),
        ...(config.SES_TRACKING_DOMAIN
          ? {
              tracking: {
                domain: config.SES_TRACKING_DOMAIN,
                httpsPolicy: config.SES_TRACKING_HTTPS_POLICY ?? 'REQUIRE',
              },
            }
          : {}),
      }),
  );
  return buildDeps(bindings, {
    table: () => ({
      dynamo: dynamo(),
      tableName: required(config.TABLE_NAME, 'TABLE_NAME'),
      apiKeyCacheTtlSeconds: config.API_KEY_CACHE_TTL_SECONDS ?? 10,
    }),
    endpoints: () => ({
      publicApiUrl: required(config.PUBLIC_API_URL, 'PUBLIC_API_URL'),
      appFromAddress: required(config.APP_FROM_ADDRESS, 'APP_FROM_ADDRESS'),
      pagesUrl: required(config.PAGES_URL, 'PAGES_URL'),
    }),
    signupForms: () => signupFormSettings(config, secretValue),
    mailer: () =>
      new SesMailer(sendingSes(), {
        ...(config.SES_CONFIGURATION_SET
          ? { configurationSet: config.SES_CONFIGURATION_SET }
          : {}),
      }),
    linkSecret: () => async () =>
      config.LINK_SIGNING_SECRET ??
      secretValue(config.LINK_SIGNING_SECRET_ARN ?? '', 'link signing'),
    provider,
    dns: () =>
      new NodeDnsResolver(
        config.DNS_SERVERS?.split(',')
          .map((server) => server.trim())
          .filter(Boolean),
      ),
    scheduler: () =>
      new EventBridgeScheduler(schedulerClient(), {
        groupName: required(config.SCHEDULE_GROUP_NAME, 'SCHEDULE_GROUP_NAME'),
        roleArn: required(config.SCHEDULER_ROLE_ARN, 'SCHEDULER_ROLE_ARN'),
        deadLetterQueueArn: required(
          config.SCHEDULER_DEAD_LETTER_QUEUE_ARN,
          'SCHEDULER_DEAD_LETTER_QUEUE_ARN',
        ),
        // The queues the scheduler binding names, each told by its ARN.
        queueArns: Object.fromEntries(
          bindingsOf(bindings, 'scheduler')
            .flatMap((binding) => binding.queues)
            .map((name) => [
              name,
              String(
                required(
                  config[scheduleTargetEnv(name)],
                  scheduleTargetEnv(name),
                ),
              ),
            ]),
        ),
      }),
    queue: (name) =>
      new SqsQueueSender(
        sqs(),
        String(required(config[queueUrlEnv(name)], queueUrlEnv(name))),
      ),
    ...(config.PROVIDER_STATUS_TTL_SECONDS !== undefined
      ? { providerStatusTtlSeconds: config.PROVIDER_STATUS_TTL_SECONDS }
      : {}),
    ...(config.SCHEDULE_MIN_LEAD_SECONDS !== undefined
      ? { scheduleMinLeadSeconds: config.SCHEDULE_MIN_LEAD_SECONDS }
      : {}),
  });
};

/**
 * The deps of a consumer function: its bindings', and the dead-letter
 * queue of its group (where a message that can never succeed goes at once).
 */
export const awsConsumerDeps = <const B extends Bindings>(
  bindings: B,
  group: string,
): DepsOf<B> & { deadLetters: DeadLetters } => {
  const name = deadLetterQueueEnv(group);
  const url = process.env[name];
  if (!url) throw new Error(`Invalid configuration: ${name} is required`);
  return {
    ...awsDeps(bindings),
    deadLetters: new SqsDeadLetters(sqs(), { [group]: url }),
  };
};
