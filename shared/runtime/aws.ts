/**
 * Composition root on AWS Lambda: a function's deps built from its
 * bindings, once per container. Each SDK client is created when first
 * needed, so a function pays only for the clients its bindings name.
 */

import { refuseOversizedItems } from '../adapters/aws/item-size.ts';
import { type Bindings, bindingsOf, type DepsOf } from '../bindings.ts';
import {
  deadLetterQueueEnv,
  loadConfig,
  queueUrlEnv,
  required,
  scheduleTargetEnv,
} from '../config.ts';
import { captureClient, startTracing } from '../observability.ts';
import type { DeadLetters } from '../queue/consumer.ts';
import { thresholdsFrom } from '../reputation/model.ts';
import { buildDeps, documentClientOptions } from './deps.ts';

/**
 * One of each per container, made when first asked for. Each SDK client
 * and adapter is imported there too (`import()`: a chunk of its own in the
 * function's build), so a cold start loads only what the bindings use.
 */
const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
};

// Each low-level client is captured by the tracer (X-Ray) when SDK calls
// are traced, once: the document client shares its base client's middleware.
const dynamo = once(async () => {
  const [{ DynamoDBClient }, { DynamoDBDocumentClient }] = await Promise.all([
    import('@aws-sdk/client-dynamodb'),
    import('@aws-sdk/lib-dynamodb'),
  ]);
  return DynamoDBDocumentClient.from(
    // A sender claims as many recipients at once as it has sends in
    // flight (`parallelSendsFor`): more than the SDK's 50 sockets.
    captureClient(
      refuseOversizedItems(
        new DynamoDBClient({
          requestHandler: { httpsAgent: { maxSockets: 128 } },
        }),
      ),
    ),
    documentClientOptions,
  );
});
const ses = once(async () => {
  const { SESv2Client } = await import('@aws-sdk/client-sesv2');
  return captureClient(new SESv2Client({}));
});
// SendEmail has no idempotency token: a retried timeout may send the email
// twice. The mailer's client tries once; the caller decides (its refusal
// says `uncertain`).
const sendingSes = once(async () => {
  const { SESv2Client } = await import('@aws-sdk/client-sesv2');
  return captureClient(
    new SESv2Client({
      maxAttempts: 1,
      // A sender keeps up to `MAX_PARALLEL_SENDS` sends in flight.
      requestHandler: { httpsAgent: { maxSockets: 128 } },
    }),
  );
});
const sqs = once(async () => {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  return captureClient(new SQSClient({}));
});
const schedulerClient = once(async () => {
  const { SchedulerClient } = await import('@aws-sdk/client-scheduler');
  return captureClient(new SchedulerClient({}));
});
const apiGateway = once(async () => {
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  return captureClient(new APIGatewayClient({}));
});
const secrets = once(async () => {
  const [{ SecretsProvider }, { SecretsManagerClient }] = await Promise.all([
    import('@aws-lambda-powertools/parameters/secrets'),
    import('@aws-sdk/client-secrets-manager'),
  ]);
  return new SecretsProvider({
    awsSdkV3Client: captureClient(new SecretsManagerClient({})),
  });
});

/** A Secrets Manager secret, cached by Powertools for an hour. */
const secretValue = async (arn: string, what: string): Promise<string> => {
  const value = await (await secrets()).get(arn, { maxAge: 3600 });
  if (typeof value !== 'string') {
    throw new Error(`The ${what} secret is not a string`);
  }
  return value;
};

/**
 * The deps of a Lambda function with these bindings; the configuration of
 * exactly those bindings is read and validated first. Awaited at the top
 * of the function's module, so it runs once, in the init phase.
 */
export const awsDeps = async <const B extends Bindings>(
  bindings: B,
): Promise<DepsOf<B>> => {
  const config = loadConfig(bindings);
  // Before any client is made: the clients are captured when made.
  await startTracing();
  const region = config.AWS_REGION ?? 'us-east-1';
  const provider = once(async () => {
    const { SesEmailProvider } = await import(
      '../adapters/aws/ses-email-provider.ts'
    );
    return new SesEmailProvider(await ses(), {
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
    });
  });
  return buildDeps(bindings, {
    table: async () => ({
      dynamo: await dynamo(),
      tableName: required(config.TABLE_NAME, 'TABLE_NAME'),
      apiKeyCacheTtlSeconds: config.API_KEY_CACHE_TTL_SECONDS ?? 10,
      reputationThresholds: thresholdsFrom(config.REPUTATION_GUARDRAIL),
    }),
    endpoints: () => ({
      publicApiUrl: required(config.PUBLIC_API_URL, 'PUBLIC_API_URL'),
      appFromAddress: required(config.APP_FROM_ADDRESS, 'APP_FROM_ADDRESS'),
      pagesUrl: required(config.PAGES_URL, 'PAGES_URL'),
    }),
    signupForms: async () => {
      const { signupFormSettings } = await import('./signup-forms.ts');
      return signupFormSettings(config, secretValue);
    },
    mailer: async () => {
      const { SesMailer } = await import('../adapters/aws/ses-mailer.ts');
      return new SesMailer(await sendingSes(), {
        ...(config.SES_CONFIGURATION_SET
          ? { configurationSet: config.SES_CONFIGURATION_SET }
          : {}),
      });
    },
    linkSecret: () => async () =>
      config.LINK_SIGNING_SECRET ??
      secretValue(config.LINK_SIGNING_SECRET_ARN ?? '', 'link signing'),
    addressKeySecret: () => async () =>
      config.ADDRESS_KEY_SECRET ??
      secretValue(config.ADDRESS_KEY_SECRET_ARN ?? '', 'address key'),
    gatewayKeys: async () => {
      const { ApiGatewayKeyRegistry, usagePlanOfStage } = await import(
        '../adapters/aws/api-gateway-key-registry.ts'
      );
      const client = await apiGateway();
      return new ApiGatewayKeyRegistry(
        client,
        usagePlanOfStage(
          client,
          required(config.REST_API_ID, 'REST_API_ID'),
          required(config.API_STAGE_NAME, 'API_STAGE_NAME'),
        ),
      );
    },
    provider,
    dns: async () => {
      const { NodeDnsResolver } = await import(
        '../adapters/node-dns-resolver.ts'
      );
      return new NodeDnsResolver(
        config.DNS_SERVERS?.split(',')
          .map((server) => server.trim())
          .filter(Boolean),
      );
    },
    scheduler: async () => {
      const { EventBridgeScheduler } = await import(
        '../adapters/aws/eventbridge-scheduler.ts'
      );
      return new EventBridgeScheduler(await schedulerClient(), {
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
      });
    },
    // Never configurable on AWS: https only, no loopback.
    webhookCalls: () => ({
      rules: { httpsOnly: true, allowLoopback: false },
    }),
    queue: async (name) => {
      const { SqsQueueSender } = await import(
        '../adapters/aws/sqs-queue-sender.ts'
      );
      return new SqsQueueSender(
        await sqs(),
        String(required(config[queueUrlEnv(name)], queueUrlEnv(name))),
      );
    },
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
export const awsConsumerDeps = async <const B extends Bindings>(
  bindings: B,
  group: string,
): Promise<DepsOf<B> & { deadLetters: DeadLetters }> => {
  const name = deadLetterQueueEnv(group);
  const url = process.env[name];
  if (!url) throw new Error(`Invalid configuration: ${name} is required`);
  const [deps, { SqsDeadLetters }, client] = await Promise.all([
    awsDeps(bindings),
    import('../adapters/aws/sqs-dead-letters.ts'),
    sqs(),
  ]);
  return { ...deps, deadLetters: new SqsDeadLetters(client, { [group]: url }) };
};
