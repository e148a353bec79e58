/**
 * Driven adapter: reads campaign items for the references other resources
 * must respect (an identity named by a campaign cannot be deleted).
 */
import * as v from 'valibot';
import { where } from '../../db/expressions.ts';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { CampaignReferences } from '../../sending/ports.ts';
import { entity } from './dynamo-entity.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** The attributes of a campaign this reference check reads. */
const CampaignReferenceItem = itemSchema('Campaign', {
  id: v.string(),
  name: v.string(),
});

/** Campaigns naming an identity, by a filtered query of the organization. */
export class DynamoCampaignReferences implements CampaignReferences {
  private readonly campaigns;

  constructor(table: DynamoTable) {
    this.campaigns = entity(table, CampaignReferenceItem);
  }

  usingIdentity(
    orgId: string,
    identityId: string,
  ): Promise<{ id: string; name: string }[]> {
    return this.campaigns.all(keys.campaignsOfOrganization(orgId), {
      // The projection's schema does not name the attribute filtered on.
      filter: where.eq('sendingIdentityId', identityId),
      project: ['id', 'name'],
    });
  }
}
