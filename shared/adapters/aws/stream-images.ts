/**
 * Driven adapter: the items of an organization as the table's change
 * stream carries them (unmarshalled, keys included), read by their own
 * item schemas, for the stream consumers that find webhook events in
 * campaigns, journeys and erasures.
 */
import type { Campaign } from '../../campaigns/model.ts';
import { ENTITY_TYPE, ItemSchemaError, parseItem } from '../../db/items.ts';
import { keyParsers } from '../../db/keys.ts';
import type { Erasure } from '../../privacy/erasure-ports.ts';
import type { Enrolment } from '../../sequences/model.ts';
import { CampaignItem } from './dynamo-campaign-repository.ts';
import { EnrolmentItem } from './dynamo-enrolment-repository.ts';
import { ErasureItem } from './dynamo-erasure-repository.ts';

/** One item of an organization, read. */
export type OrganizationImage =
  | { kind: 'campaign'; orgId: string; campaign: Campaign }
  | { kind: 'enrolment'; orgId: string; enrolment: Enrolment }
  | { kind: 'erasure'; orgId: string; erasure: Erasure };

/** The entity types {@link organizationImageOf} reads. */
export const ORGANIZATION_IMAGE_TYPES = [
  'Campaign',
  'SequenceEnrolment',
  'Erasure',
] as const;

/**
 * Reads a campaign, a journey or an erasure with its organization; throws
 * `ItemSchemaError` for any other item.
 */
export const organizationImageOf = (
  item: Record<string, unknown>,
): OrganizationImage => {
  const orgId = keyParsers.organization(item);
  const type = item[ENTITY_TYPE];
  if (!orgId) {
    throw new ItemSchemaError(
      'Campaign',
      `${String(item.PK)} / ${String(item.SK)}`,
      ['PK'],
      'PK: not the key of an item of an organization',
    );
  }
  switch (type) {
    case 'Campaign':
      return {
        kind: 'campaign',
        orgId,
        campaign: parseItem(CampaignItem, item),
      };
    case 'SequenceEnrolment':
      return {
        kind: 'enrolment',
        orgId,
        enrolment: parseItem(EnrolmentItem, item),
      };
    case 'Erasure':
      return { kind: 'erasure', orgId, erasure: parseItem(ErasureItem, item) };
    default:
      throw new ItemSchemaError(
        'Campaign',
        `${String(item.PK)} / ${String(item.SK)}`,
        [ENTITY_TYPE],
        `${ENTITY_TYPE}: ${String(type)} is not a campaign, a journey or an erasure`,
      );
  }
};
