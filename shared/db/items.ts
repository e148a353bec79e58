/**
 * Item types of the single table: the entity-type attribute every item
 * carries, and the parsing of a stored item by the schema of its type.
 * The repository adapters declare one schema per item type next to their
 * mappers; an item that does not match its schema is a bug, never a value
 * to default silently.
 */
import * as v from 'valibot';
import type { Key } from './keys.ts';
import { attr } from './table.ts';

/** The attribute naming the entity type of an item (`_type`), on every item. */
export const ENTITY_TYPE = attr.type;

/** Every entity type the table stores, as written in `_type`. */
export const ENTITY_TYPES = [
  'ApiKey',
  'ApiKeyEntry',
  'ApiKeyLastUse',
  'AppSettings',
  'CollectionCounter',
  'Contact',
  'ContactActivity',
  'ContactPointer',
  'DeclinedTopics',
  'DeliveryEvent',
  'DeliveryStats',
  'Domain',
  'DomainClaim',
  'Erasure',
  'Field',
  'FieldKey',
  'IdempotencyRecord',
  'Identity',
  'IdentityBook',
  'List',
  'ListName',
  'Member',
  'OptinSettings',
  'Organization',
  'OrganizationStats',
  'OrganizationSlug',
  'RateLog',
  'Segment',
  'SignupConfirmationSent',
  'SignupLimit',
  'SignupPage',
  'SignupPageHtml',
  'SignupPageSlug',
  'Suppression',
  'SuppressionLift',
  'SuppressionLog',
  'SuppressionsRekeyed',
  'Tag',
  'TagName',
  'TaggedContact',
  'Template',
  'Topic',
  'TopicName',
  'TopicAudience',
  'TopicOptOut',
  'User',
  'WebhookDelivery',
  'WebhookEndpoint',
  'WebhookEvent',
  'WebhookHealth',
  'WebhookParked',
  'WebhookSubscriptions',
  'Campaign',
  'CampaignBatch',
  'CampaignContent',
  'CampaignCounts',
  'CampaignLink',
  'CampaignRecipient',
  'CampaignSend',
  'CampaignStats',
  'CampaignStatsBatch',
  'SendPacer',
  'SendWindow',
  'ReputationHour',
  'SeriesStepCampaign',
  'Sequence',
  'SequenceEnrolment',
  'SequenceNode',
  'SequenceStatsBatch',
  'SequenceStepLink',
  'SequenceStepMessage',
  'SequenceStepStats',
  'SequenceVersion',
] as const;

/** The entity type of an item. */
export type EntityType = (typeof ENTITY_TYPES)[number];

/** The entity-type attribute of an item to write: `{ _type: type }`. */
export const entityType = <T extends EntityType>(type: T) => ({
  [ENTITY_TYPE]: type,
});

/** The schema of one item type: its entity type and its attributes. */
export interface ItemSchema<TOutput> {
  type: EntityType;
  schema: v.GenericSchema<unknown, TOutput>;
}

/** The attributes of an item as its schema parses them. */
export type ItemOf<S extends { schema: v.GenericSchema }> = v.InferOutput<
  S['schema']
>;

/**
 * Declares the schema of an item type. Unknown attributes (the keys, the
 * entity type, the search haystack…) are left out of the output.
 */
export const itemSchema = <
  const T extends EntityType,
  const E extends v.ObjectEntries,
>(
  type: T,
  entries: E,
) => ({ type, schema: v.object(entries) });

/** A stored item that does not match the schema of its type: a bug. */
export class ItemSchemaError extends Error {
  constructor(
    readonly type: EntityType,
    readonly key: string,
    /** The dotted path of each failing attribute. */
    readonly fields: string[],
    issues: string,
  ) {
    super(`Stored ${type} item ${key} does not match its schema: ${issues}`);
    this.name = 'ItemSchemaError';
  }
}

const keyOf = (item: Record<string, unknown>, key?: Key) => {
  const { PK, SK } = key ?? item;
  return typeof PK === 'string' && typeof SK === 'string'
    ? `${PK} / ${SK}`
    : '(key not read)';
};

/**
 * Parses a stored item by the schema of its type. Its entity-type
 * attribute, when read (a projection may leave it out), must name that
 * type. `key` names the item in the error when the item was read without
 * its keys (a projection). Throws `ItemSchemaError` naming the type, the
 * key and each failing field.
 */
export const parseItem = <TOutput>(
  { type, schema }: ItemSchema<TOutput>,
  item: Record<string, unknown>,
  key?: Key,
): TOutput => {
  const result = v.safeParse(schema, item);
  const stored = item[ENTITY_TYPE];
  const issues = [
    ...(stored === undefined || stored === type
      ? []
      : [
          {
            field: ENTITY_TYPE,
            message: `Expected "${type}" but received ${describe(stored)}`,
          },
        ]),
    ...(result.issues ?? []).map((issue) => ({
      field: v.getDotPath(issue) ?? '(item)',
      message: issue.message,
    })),
  ];
  if (result.success && !issues.length) return result.output;
  throw new ItemSchemaError(
    type,
    keyOf(item, key),
    issues.map(({ field }) => field),
    issues.map(({ field, message }) => `${field}: ${message}`).join('; '),
  );
};

const describe = (value: unknown) =>
  typeof value === 'string' ? `"${value}"` : typeof value;
