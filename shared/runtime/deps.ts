/**
 * Builds a function's dependencies from its bindings: only the adapters its
 * bindings name, over what its runtime provides. The part shared by the AWS
 * and the local composition roots.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps, GatewayKeyRegistry } from '../access/ports.ts';
import { DynamoAccessRepository } from '../adapters/aws/dynamo-access-repository.ts';
import { DynamoAppSettingsRepository } from '../adapters/aws/dynamo-app-settings-repository.ts';
import { DynamoAudienceReader } from '../adapters/aws/dynamo-audience-reader.ts';
import { DynamoCampaignReferences } from '../adapters/aws/dynamo-campaign-references.ts';
import { DynamoCampaignRepository } from '../adapters/aws/dynamo-campaign-repository.ts';
import { DynamoCampaignStats } from '../adapters/aws/dynamo-campaign-stats.ts';
import { DynamoContactRepository } from '../adapters/aws/dynamo-contact-repository.ts';
import { DynamoDeliveryRepository } from '../adapters/aws/dynamo-delivery-repository.ts';
import { DynamoDomainRepository } from '../adapters/aws/dynamo-domain-repository.ts';
import { DynamoEnrolmentRepository } from '../adapters/aws/dynamo-enrolment-repository.ts';
import { DynamoIdentityRepository } from '../adapters/aws/dynamo-identity-repository.ts';
import { DynamoListRepository } from '../adapters/aws/dynamo-list-repository.ts';
import { DynamoOptinSettingsRepository } from '../adapters/aws/dynamo-optin-settings-repository.ts';
import { DynamoOrganizationRepository } from '../adapters/aws/dynamo-organization-repository.ts';
import { DynamoRateLimitCounter } from '../adapters/aws/dynamo-rate-limit-counter.ts';
import { DynamoRecounter } from '../adapters/aws/dynamo-recounter.ts';
import { DynamoSegmentRepository } from '../adapters/aws/dynamo-segment-repository.ts';
import { DynamoSendPacer } from '../adapters/aws/dynamo-send-pacer.ts';
import { DynamoSendRepository } from '../adapters/aws/dynamo-send-repository.ts';
import { DynamoSendWindowRepository } from '../adapters/aws/dynamo-send-window-repository.ts';
import { DynamoSequenceRepository } from '../adapters/aws/dynamo-sequence-repository.ts';
import { DynamoSignupLimits } from '../adapters/aws/dynamo-signup-limits.ts';
import { DynamoSignupPageRepository } from '../adapters/aws/dynamo-signup-page-repository.ts';
import { DynamoTagRepository } from '../adapters/aws/dynamo-tag-repository.ts';
import { DynamoTemplateRepository } from '../adapters/aws/dynamo-template-repository.ts';
import { DynamoTopicRepository } from '../adapters/aws/dynamo-topic-repository.ts';
import { JoseLinkSigner } from '../adapters/jose-link-signer.ts';
import { loggingAudienceEvents } from '../adapters/logging-audience-events.ts';
import { randomIds, systemClock } from '../adapters/system.ts';
import type { AudienceEvents } from '../audience/ports.ts';
import {
  type Binding,
  type Bindings,
  bindingsOf,
  type DepsOf,
} from '../bindings.ts';
import type { Clock, Endpoints, Ids, Mailer, QueueSender } from '../ports.ts';
import type { Scheduler } from '../scheduling/ports.ts';
import type { DnsResolver, EmailProvider } from '../sending/provider.ts';
import { RecentDomainAnswers } from '../sending/recent-domain-answers.ts';
import type { SignupFormSettings } from '../signup/ports.ts';

/** The table and the settings of its stores. */
export interface TableOptions {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  /** How long a warm container trusts a resolved key. */
  apiKeyCacheTtlSeconds: number;
  audienceEvents?: AudienceEvents;
}

/**
 * What a runtime provides, each part built only when a binding needs it:
 * a function is never told, nor builds, what it does not use.
 */
export interface DepsOptions {
  clock?: Clock;
  ids?: Ids;
  table?: () => TableOptions;
  endpoints?: () => Endpoints;
  /** The mailer (`mail`): SES v2, locally with simulated events. */
  mailer?: () => Mailer;
  /** The link signing secret, fetched when first needed. */
  linkSecret?: () => () => Promise<string>;
  /** The email provider (SES v2, or the local stand-in) and DNS. */
  provider?: () => EmailProvider;
  dns?: () => DnsResolver;
  /** Default 60 s. */
  providerStatusTtlSeconds?: number;
  scheduler?: () => Scheduler;
  /** Default 120 s. */
  scheduleMinLeadSeconds?: number;
  /** The sender of one consumer group's queue. */
  queue?: (name: string) => QueueSender;
  /** The defences of the public sign-up form (operator settings). */
  signupForms?: () => SignupFormSettings;
}

const need = <T>(part: (() => T) | undefined, binding: string): T => {
  if (!part) {
    throw new Error(
      `The composition root provides nothing for the ${binding} binding`,
    );
  }
  return part();
};

/** The stores of the table. */
const tableDeps = (options: TableOptions) => {
  const table = { client: options.dynamo, tableName: options.tableName };
  return {
    organizations: new DynamoOrganizationRepository(table),
    access: new DynamoAccessRepository(table),
    rateLimits: new DynamoRateLimitCounter(table),
    appSettings: new DynamoAppSettingsRepository(table),
    lists: new DynamoListRepository(table),
    contacts: new DynamoContactRepository(table),
    tags: new DynamoTagRepository(table),
    optinSettings: new DynamoOptinSettingsRepository(table),
    templates: new DynamoTemplateRepository(table),
    topics: new DynamoTopicRepository(table),
    segments: new DynamoSegmentRepository(table),
    signupPages: new DynamoSignupPageRepository(table),
    signupLimits: new DynamoSignupLimits(table),
    identities: new DynamoIdentityRepository(table),
    domains: new DynamoDomainRepository(table),
    campaignReferences: new DynamoCampaignReferences(table),
    campaigns: new DynamoCampaignRepository(table),
    sends: new DynamoSendRepository(table),
    audience: new DynamoAudienceReader(table),
    pacer: new DynamoSendPacer(table),
    sendWindows: new DynamoSendWindowRepository(table),
    campaignStats: new DynamoCampaignStats(table),
    delivery: new DynamoDeliveryRepository(table),
    sequences: new DynamoSequenceRepository(table),
    enrolments: new DynamoEnrolmentRepository(table),
    audienceEvents: options.audienceEvents ?? loggingAudienceEvents,
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds,
  };
};

/** What one binding adds to the deps. */
const provide = (
  binding: Binding,
  options: DepsOptions,
  clock: Clock,
): Record<string, unknown> => {
  switch (binding.kind) {
    case 'table':
      return tableDeps(need(options.table, 'table'));
    case 'endpoints':
      return { endpoints: need(options.endpoints, 'endpoints') };
    case 'mail':
      return { mailer: need(options.mailer, 'mail') };
    case 'linkSecret':
      return {
        links: new JoseLinkSigner(
          need(options.linkSecret, 'linkSecret'),
          clock,
        ),
      };
    case 'sendingSetup':
      return {
        // Recent domain answers are reused within the freshness (GET /domains).
        provider: new RecentDomainAnswers(
          need(options.provider, 'sendingSetup'),
          clock,
        ),
        dns: need(options.dns, 'sendingSetup'),
        providerStatusTtlSeconds: options.providerStatusTtlSeconds ?? 60,
      };
    case 'sendingStatus':
      return {
        provider: need(options.provider, 'sendingStatus'),
        providerStatusTtlSeconds: options.providerStatusTtlSeconds ?? 60,
      };
    case 'sendingQuota':
      return { provider: need(options.provider, 'sendingQuota') };
    case 'scheduler':
      return {
        scheduler: need(options.scheduler, 'scheduler'),
        scheduleMinLeadSeconds: options.scheduleMinLeadSeconds ?? 120,
      };
    case 'signupForms':
      return { signupForms: need(options.signupForms, 'signupForms') };
    case 'queue':
      return {};
  }
};

/**
 * The deps of a function with these bindings: time and ids, and for each
 * binding its adapters (the setup provider wins over the status reader when
 * both are bound; queue bindings gather into `queues`).
 */
export const buildDeps = <const B extends Bindings>(
  bindings: B,
  options: DepsOptions,
): DepsOf<B> => {
  const clock = options.clock ?? systemClock;
  const deps: Record<string, unknown> = {
    clock,
    ids: options.ids ?? randomIds,
  };
  // The setup binding last, so its provider replaces the status reader.
  const ordered = [...bindings].sort(
    (a, b) =>
      Number(a.kind === 'sendingSetup') - Number(b.kind === 'sendingSetup'),
  );
  for (const binding of ordered) {
    Object.assign(deps, provide(binding, options, clock));
  }
  const queues = bindingsOf(bindings, 'queue');
  if (queues.length > 0) {
    const send = options.queue;
    if (!send) throw new Error('The composition root provides no queues');
    deps.queues = Object.fromEntries(
      queues.map((binding) => [binding.queue, send(binding.queue)]),
    );
  }
  return deps as DepsOf<B>;
};

/** Every binding there is: the local stack and the tests run every group. */
export const ALL_BINDINGS = [
  {
    kind: 'table',
    actions: [],
  },
  { kind: 'endpoints' },
  { kind: 'mail' },
  { kind: 'linkSecret' },
  { kind: 'sendingSetup' },
  { kind: 'sendingStatus' },
  { kind: 'sendingQuota' },
  { kind: 'scheduler', queues: [] },
  { kind: 'signupForms' },
] as const satisfies Bindings;

/** The operator's dependencies over a table and an edge key registry. */
export const buildAdminDeps = (options: {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  gatewayKeys: GatewayKeyRegistry;
  clock?: Clock;
  ids?: Ids;
}): AdminDeps => {
  const table = { client: options.dynamo, tableName: options.tableName };
  return {
    clock: options.clock ?? systemClock,
    ids: options.ids ?? randomIds,
    organizations: new DynamoOrganizationRepository(table),
    access: new DynamoAccessRepository(table),
    appSettings: new DynamoAppSettingsRepository(table),
    gatewayKeys: options.gatewayKeys,
    recounter: new DynamoRecounter(table),
  };
};

/** Marshalling options of every document client we create. */
export const documentClientOptions = {
  marshallOptions: { removeUndefinedValues: true },
} as const;
