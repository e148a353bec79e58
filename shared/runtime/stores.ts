/**
 * The table's store adapters, each loaded when a binding names its store.
 * A dynamic `import()` per adapter: the function build (`infra/bundle.ts`,
 * code splitting) makes each one a chunk, so a function reads at its cold
 * start the adapters its `table` binding names and no other.
 */
import type { DynamoTable } from '../adapters/aws/dynamo-table.ts';
import type { StoreName, TableStores } from '../bindings.ts';
import type { AddressKeySecret } from '../delivery/address-key.ts';

/** What some stores need besides the table: secrets of other bindings. */
export interface StoreContext {
  /**
   * The address key secret (the `addressKey` binding): the delivery store
   * keys suppressions with it, so it cannot be built without.
   */
  addressKeySecret?: AddressKeySecret;
}

/** Builds one store over the table. */
type StoreFactory<N extends StoreName> = (
  table: DynamoTable,
  context: StoreContext,
) => TableStores[N];

/** How to load each store's adapter: every store there is, by name. */
const LOADERS: { [N in StoreName]: () => Promise<StoreFactory<N>> } = {
  organizations: async () => {
    const { DynamoOrganizationRepository } = await import(
      '../adapters/aws/dynamo-organization-repository.ts'
    );
    return (table) => new DynamoOrganizationRepository(table);
  },
  access: async () => {
    const { DynamoAccessRepository } = await import(
      '../adapters/aws/dynamo-access-repository.ts'
    );
    return (table) => new DynamoAccessRepository(table);
  },
  rateLimits: async () => {
    const { DynamoRateLimitCounter } = await import(
      '../adapters/aws/dynamo-rate-limit-counter.ts'
    );
    return (table) => new DynamoRateLimitCounter(table);
  },
  idempotency: async () => {
    const { DynamoIdempotencyStore } = await import(
      '../adapters/aws/dynamo-idempotency-store.ts'
    );
    return (table) => new DynamoIdempotencyStore(table);
  },
  appSettings: async () => {
    const { DynamoAppSettingsRepository } = await import(
      '../adapters/aws/dynamo-app-settings-repository.ts'
    );
    return (table) => new DynamoAppSettingsRepository(table);
  },
  lists: async () => {
    const { DynamoListRepository } = await import(
      '../adapters/aws/dynamo-list-repository.ts'
    );
    return (table) => new DynamoListRepository(table);
  },
  contacts: async () => {
    const { DynamoContactRepository } = await import(
      '../adapters/aws/dynamo-contact-repository.ts'
    );
    return (table) => new DynamoContactRepository(table);
  },
  activity: async () => {
    const { DynamoActivityRepository } = await import(
      '../adapters/aws/dynamo-activity-repository.ts'
    );
    return (table) => new DynamoActivityRepository(table);
  },
  tags: async () => {
    const { DynamoTagRepository } = await import(
      '../adapters/aws/dynamo-tag-repository.ts'
    );
    return (table) => new DynamoTagRepository(table);
  },
  optinSettings: async () => {
    const { DynamoOptinSettingsRepository } = await import(
      '../adapters/aws/dynamo-optin-settings-repository.ts'
    );
    return (table) => new DynamoOptinSettingsRepository(table);
  },
  templates: async () => {
    const { DynamoTemplateRepository } = await import(
      '../adapters/aws/dynamo-template-repository.ts'
    );
    return (table) => new DynamoTemplateRepository(table);
  },
  topics: async () => {
    const { DynamoTopicRepository } = await import(
      '../adapters/aws/dynamo-topic-repository.ts'
    );
    return (table) => new DynamoTopicRepository(table);
  },
  fields: async () => {
    const { DynamoFieldRepository } = await import(
      '../adapters/aws/dynamo-field-repository.ts'
    );
    return (table) => new DynamoFieldRepository(table);
  },
  erasures: async () => {
    const { DynamoErasureRepository } = await import(
      '../adapters/aws/dynamo-erasure-repository.ts'
    );
    return (table) => new DynamoErasureRepository(table);
  },
  segments: async () => {
    const { DynamoSegmentRepository } = await import(
      '../adapters/aws/dynamo-segment-repository.ts'
    );
    return (table) => new DynamoSegmentRepository(table);
  },
  signupPages: async () => {
    const { DynamoSignupPageRepository } = await import(
      '../adapters/aws/dynamo-signup-page-repository.ts'
    );
    return (table) => new DynamoSignupPageRepository(table);
  },
  signupLimits: async () => {
    const { DynamoSignupLimits } = await import(
      '../adapters/aws/dynamo-signup-limits.ts'
    );
    return (table) => new DynamoSignupLimits(table);
  },
  identities: async () => {
    const { DynamoIdentityRepository } = await import(
      '../adapters/aws/dynamo-identity-repository.ts'
    );
    return (table) => new DynamoIdentityRepository(table);
  },
  domains: async () => {
    const { DynamoDomainRepository } = await import(
      '../adapters/aws/dynamo-domain-repository.ts'
    );
    return (table) => new DynamoDomainRepository(table);
  },
  campaignReferences: async () => {
    const { DynamoCampaignReferences } = await import(
      '../adapters/aws/dynamo-campaign-references.ts'
    );
    return (table) => new DynamoCampaignReferences(table);
  },
  campaigns: async () => {
    const { DynamoCampaignRepository } = await import(
      '../adapters/aws/dynamo-campaign-repository.ts'
    );
    return (table) => new DynamoCampaignRepository(table);
  },
  sends: async () => {
    const { DynamoSendRepository } = await import(
      '../adapters/aws/dynamo-send-repository.ts'
    );
    return (table) => new DynamoSendRepository(table);
  },
  audience: async () => {
    const { DynamoAudienceReader } = await import(
      '../adapters/aws/dynamo-audience-reader.ts'
    );
    return (table) => new DynamoAudienceReader(table);
  },
  pacer: async () => {
    const { DynamoSendPacer } = await import(
      '../adapters/aws/dynamo-send-pacer.ts'
    );
    return (table) => new DynamoSendPacer(table);
  },
  sendWindows: async () => {
    const { DynamoSendWindowRepository } = await import(
      '../adapters/aws/dynamo-send-window-repository.ts'
    );
    return (table) => new DynamoSendWindowRepository(table);
  },
  reputation: async () => {
    const { DynamoReputationRepository } = await import(
      '../adapters/aws/dynamo-reputation-repository.ts'
    );
    return (table) => new DynamoReputationRepository(table);
  },
  campaignStats: async () => {
    const { DynamoCampaignStats } = await import(
      '../adapters/aws/dynamo-campaign-stats.ts'
    );
    return (table) => new DynamoCampaignStats(table);
  },
  mailStats: async () => {
    const { DynamoMailStats } = await import(
      '../adapters/aws/dynamo-mail-stats.ts'
    );
    return (table) => new DynamoMailStats(table);
  },
  delivery: async () => {
    const { DynamoDeliveryRepository } = await import(
      '../adapters/aws/dynamo-delivery-repository.ts'
    );
    return (table, { addressKeySecret }) => {
      if (!addressKeySecret) {
        throw new Error(
          'The delivery store keys suppressions by address key: bind addressKey with it',
        );
      }
      return new DynamoDeliveryRepository(table, addressKeySecret);
    };
  },
  sequences: async () => {
    const { DynamoSequenceRepository } = await import(
      '../adapters/aws/dynamo-sequence-repository.ts'
    );
    return (table) => new DynamoSequenceRepository(table);
  },
  enrolments: async () => {
    const { DynamoEnrolmentRepository } = await import(
      '../adapters/aws/dynamo-enrolment-repository.ts'
    );
    return (table) => new DynamoEnrolmentRepository(table);
  },
  webhooks: async () => {
    const { DynamoWebhookRepository } = await import(
      '../adapters/aws/dynamo-webhook-repository.ts'
    );
    return (table) => new DynamoWebhookRepository(table);
  },
  webhookDeliveries: async () => {
    const { DynamoWebhookDeliveryRepository } = await import(
      '../adapters/aws/dynamo-webhook-delivery-repository.ts'
    );
    return (table) => new DynamoWebhookDeliveryRepository(table);
  },
  exportReader: async () => {
    const { DynamoExportReader } = await import(
      '../adapters/aws/dynamo-export-reader.ts'
    );
    return (table) => new DynamoExportReader(table);
  },
};

/** The named stores over the table, their adapters loaded at once. */
export const loadStores = async <S extends StoreName>(
  names: readonly S[],
  table: DynamoTable,
  context: StoreContext = {},
): Promise<Pick<TableStores, S>> => {
  const built = await Promise.all(
    names.map(
      async (name) => [name, (await LOADERS[name]())(table, context)] as const,
    ),
  );
  return Object.fromEntries(built) as Pick<TableStores, S>;
};
