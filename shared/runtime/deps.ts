/**
 * Builds the dependencies from the SDK clients: the part shared by the AWS
 * and the local composition roots.
 */
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps, GatewayKeyRegistry } from '../access/ports.ts';
import { DynamoAccessRepository } from '../adapters/aws/dynamo-access-repository.ts';
import { DynamoAppSettingsRepository } from '../adapters/aws/dynamo-app-settings-repository.ts';
import { DynamoCampaignReferences } from '../adapters/aws/dynamo-campaign-references.ts';
import { DynamoContactRepository } from '../adapters/aws/dynamo-contact-repository.ts';
import { DynamoDomainRepository } from '../adapters/aws/dynamo-domain-repository.ts';
import { DynamoIdentityRepository } from '../adapters/aws/dynamo-identity-repository.ts';
import { DynamoListRepository } from '../adapters/aws/dynamo-list-repository.ts';
import { DynamoOptinSettingsRepository } from '../adapters/aws/dynamo-optin-settings-repository.ts';
import { DynamoOrganizationRepository } from '../adapters/aws/dynamo-organization-repository.ts';
import { DynamoRateLimitCounter } from '../adapters/aws/dynamo-rate-limit-counter.ts';
import { DynamoTagRepository } from '../adapters/aws/dynamo-tag-repository.ts';
import { DynamoTemplateRepository } from '../adapters/aws/dynamo-template-repository.ts';
import { DynamoTopicRepository } from '../adapters/aws/dynamo-topic-repository.ts';
import { SesMailer } from '../adapters/aws/ses-mailer.ts';
import { JoseLinkSigner } from '../adapters/jose-link-signer.ts';
import { loggingAudienceEvents } from '../adapters/logging-audience-events.ts';
import { randomIds, systemClock } from '../adapters/system.ts';
import type { AudienceEvents } from '../audience/ports.ts';
import type { Deps } from '../deps.ts';
import type { Clock, Endpoints, Ids } from '../ports.ts';
import type { DnsResolver, EmailProvider } from '../sending/provider.ts';
import { RecentDomainAnswers } from '../sending/recent-domain-answers.ts';

/** What differs between runtimes. */
export interface DepsOptions {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  ses: SESv2Client;
  /** The link signing secret, fetched when first needed. */
  linkSecret: () => Promise<string>;
  endpoints: Endpoints;
  /** The email provider: SES v2, or the local stand-in. */
  provider: EmailProvider;
  dns: DnsResolver;
  /** Default 60 s. */
  providerStatusTtlSeconds?: number;
  apiKeyCacheTtlSeconds: number;
  clock?: Clock;
  ids?: Ids;
  audienceEvents?: AudienceEvents;
}

/** Wires the repositories, the mailer, the link signer, clock and ids. */
export const buildDeps = (options: DepsOptions): Deps => {
  const table = { client: options.dynamo, tableName: options.tableName };
  const clock = options.clock ?? systemClock;
  return {
    clock,
    ids: options.ids ?? randomIds,
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
    identities: new DynamoIdentityRepository(table),
    domains: new DynamoDomainRepository(table),
    campaignReferences: new DynamoCampaignReferences(table),
    mailer: new SesMailer(options.ses),
    links: new JoseLinkSigner(options.linkSecret, clock),
    audienceEvents: options.audienceEvents ?? loggingAudienceEvents,
    endpoints: options.endpoints,
    // Recent domain answers are reused within the freshness (GET /domains).
    provider: new RecentDomainAnswers(options.provider, clock),
    dns: options.dns,
    providerStatusTtlSeconds: options.providerStatusTtlSeconds ?? 60,
    apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds,
  };
};

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
  };
};

/** Marshalling options of every document client we create. */
export const documentClientOptions = {
  marshallOptions: { removeUndefinedValues: true },
} as const;
