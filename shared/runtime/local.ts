/**
 * Composition root of the local stack and of tests: the same adapters,
 * pointed at the embedded engines (DynamoDB Local, the SES v2 emulator, the
 * local DNS server), plus the local stand-in of the email provider and the
 * SES emulator's sending limits.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps, GatewayKeyRegistry } from '../access/ports.ts';
import { refuseOversizedItems } from '../adapters/aws/item-size.ts';
import { SesMailer } from '../adapters/aws/ses-mailer.ts';
import { LocalEmailProvider } from '../adapters/local/local-email-provider.ts';
import {
  LocalSendLimits,
  withSendLimits,
} from '../adapters/local/local-send-limits.ts';
import { NodeDnsResolver } from '../adapters/node-dns-resolver.ts';
import { systemClock } from '../adapters/system.ts';
import type { AudienceEvents } from '../audience/ports.ts';
import { signupForms } from '../bindings.ts';
import { loadConfig } from '../config.ts';
import type { Deps } from '../deps.ts';
import type { Clock, Ids, Mailer, QueueSenders } from '../ports.ts';
import type { ReputationThresholds } from '../reputation/model.ts';
import type { Scheduler } from '../scheduling/ports.ts';
import type { SignupFormSettings } from '../signup/ports.ts';
import type {
  WebhookSender,
  WebhookUrlRules,
} from '../webhooks/delivery-ports.ts';
import { buildAdminDeps } from './admin.ts';
import { ALL_BINDINGS, buildDeps, documentClientOptions } from './deps.ts';
import { signupFormSettings } from './signup-forms.ts';

/** Credentials the embedded engines accept (they check none). */
export const LOCAL_CREDENTIALS = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
};
export const LOCAL_REGION = 'us-east-1';

/** The application address of local stacks. */
export const LOCAL_APP_FROM_ADDRESS = 'no-reply@mail.localhost.test';

/** Where the local engines listen, and the local settings. */
export interface LocalOptions {
  dynamodb: string;
  /** The engine's client, when the caller meters its calls (benchmarks). */
  dynamo?: DynamoDBDocumentClient;
  tableName: string;
  /** Base URL of the SES v2 emulator (the mailbox). */
  mailbox: string;
  /** The local DNS server, `127.0.0.1:PORT`. */
  dnsServer: string;
  /** The state file of the local email provider (identities, tenants, quota). */
  providerStateFile: string;
  /** The API's base URL as links should show it, ending in /api/v1. */
  publicApiUrl: string;
  linkSecret: string;
  /** The address key of the suppression list (at least 32 characters). */
  addressKeySecret: string;
  appFromAddress?: string;
  apiKeyCacheTtlSeconds?: number;
  /** The reputation guardrail's thresholds; default ours. */
  reputationThresholds?: ReputationThresholds;
  providerStatusTtlSeconds?: number;
  clock?: Clock;
  ids?: Ids;
  audienceEvents?: AudienceEvents;
  /** Wraps the SES mailer (the local stack adds simulated SES events). */
  mailer?: (ses: Mailer) => Mailer;
  scheduler?: Scheduler;
  scheduleMinLeadSeconds?: number;
  /** The consumer queues, by group name. */
  queues?: QueueSenders<string>;
  /**
   * The longest wait sent as a delayed queue message (default 900 s, as
   * on AWS); `npm start` shortens it so that the movable clock moves
   * longer waits (schedules follow it, SQS delays do not).
   */
  queueDelayMaxSeconds?: number;
  /**
   * What webhook endpoints may be here: default http and loopback allowed
   * (the local inbox), private and metadata addresses never.
   */
  webhookUrlRules?: WebhookUrlRules;
  /** The client that calls webhook endpoints (default: the guarded one). */
  webhookSender?: WebhookSender;
  /** Base URL of the hosted sign-up pages; default: the API's origin. */
  pagesUrl?: string;
  /**
   * The sign-up form's defences; default: from the `SIGNUP_*` variables
   * of the environment, as on AWS (tests set them here).
   */
  signupForms?: Partial<SignupFormSettings>;
}

/**
 * The local stack's webhook URL rules: http and loopback allowed, so that
 * its inbox (and a developer's own receiver) can take deliveries; private,
 * link-local and metadata addresses refused as on AWS.
 */
export const LOCAL_WEBHOOK_URL_RULES: WebhookUrlRules = {
  httpsOnly: false,
  allowLoopback: true,
};

/** A document client for the embedded DynamoDB engine. */
export const localDynamo = (endpoint: string): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    refuseOversizedItems(
      new DynamoDBClient({
        endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      }),
    ),
    documentClientOptions,
  );

/**
 * The real SESv2Client, pointed at the local SES v2 emulator.
 * @param options.sending for the mailer: one attempt per call, as on AWS
 * (SendEmail has no idempotency token, so a retried timeout may send twice).
 */
export const localSes = (
  endpoint: string,
  options: { sending?: boolean } = {},
): SESv2Client =>
  new SESv2Client({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    ...(options.sending ? { maxAttempts: 1 } : {}),
  });

/** The local dependencies: every binding, as the local stack runs every group. */
export const localDeps = async (options: LocalOptions): Promise<Deps> => {
  const dns = new NodeDnsResolver([options.dnsServer]);
  const clock = options.clock ?? systemClock;
  // SES's rate and 24-hour quota, from the provider's state file.
  const ses = withSendLimits(
    localSes(options.mailbox, { sending: true }),
    new LocalSendLimits(options.providerStateFile, { clock }),
  );
  const deps = await buildDeps(ALL_BINDINGS, {
    table: () => ({
      dynamo: options.dynamo ?? localDynamo(options.dynamodb),
      tableName: options.tableName,
      apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds ?? 10,
      ...(options.reputationThresholds
        ? { reputationThresholds: options.reputationThresholds }
        : {}),
      ...(options.audienceEvents
        ? { audienceEvents: options.audienceEvents }
        : {}),
    }),
    endpoints: () => ({
      publicApiUrl: options.publicApiUrl,
      appFromAddress: options.appFromAddress ?? LOCAL_APP_FROM_ADDRESS,
      pagesUrl: options.pagesUrl ?? new URL(options.publicApiUrl).origin,
    }),
    signupForms: () => ({
      ...signupFormSettings(loadConfig([signupForms]), async () => {
        throw new Error(
          'Locally, give the CAPTCHA secret itself: SIGNUP_CAPTCHA_SECRET',
        );
      }),
      ...options.signupForms,
    }),
    mailer: () => options.mailer?.(new SesMailer(ses)) ?? new SesMailer(ses),
    linkSecret: () => async () => options.linkSecret,
    addressKeySecret: () => async () => options.addressKeySecret,
    provider: () =>
      new LocalEmailProvider(options.providerStateFile, dns, clock),
    dns: () => dns,
    scheduler: () => options.scheduler ?? noScheduler,
    // A queue no option names is a wiring mistake, told when first used.
    queue: (name) => {
      const queue = options.queues?.[name];
      if (!queue) throw new Error(`This local stack has no ${name} queue`);
      return queue;
    },
    ...(options.queueDelayMaxSeconds !== undefined
      ? { queueDelayMaxSeconds: options.queueDelayMaxSeconds }
      : {}),
    webhookCalls: () => ({
      rules: options.webhookUrlRules ?? LOCAL_WEBHOOK_URL_RULES,
      ...(options.webhookSender ? { sender: options.webhookSender } : {}),
    }),
    gatewayKeys: () => noEdgeKeyRegistry,
    ...(options.scheduleMinLeadSeconds !== undefined
      ? { scheduleMinLeadSeconds: options.scheduleMinLeadSeconds }
      : {}),
    ...(options.providerStatusTtlSeconds !== undefined
      ? { providerStatusTtlSeconds: options.providerStatusTtlSeconds }
      : {}),
    clock,
    ...(options.ids ? { ids: options.ids } : {}),
  });
  return { ...deps, queues: options.queues ?? {} };
};

/** A stack without schedules (some tests): any use is a wiring mistake. */
const noScheduler: Scheduler = {
  schedule: async () => {
    throw new Error('This local stack has no scheduler');
  },
  cancel: async () => {
    throw new Error('This local stack has no scheduler');
  },
};

/**
 * The local stack has no API Gateway usage plan: its gateway passes every
 * request on and our own key check decides. There is nothing to register.
 */
export const noEdgeKeyRegistry: GatewayKeyRegistry = {
  register: async () => {},
  disable: async () => {},
};

/** The operator's dependencies on the local stack. */
export const localAdminDeps = (options: {
  dynamodb: string;
  tableName: string;
  /** The stack's address key (the rekey of suppressions uses it). */
  addressKeySecret: string;
  /** A client of the engine to use (tests watch its writes). */
  dynamo?: DynamoDBDocumentClient;
}): AdminDeps =>
  buildAdminDeps({
    dynamo: options.dynamo ?? localDynamo(options.dynamodb),
    tableName: options.tableName,
    gatewayKeys: noEdgeKeyRegistry,
    addressKeySecret: async () => options.addressKeySecret,
  });
