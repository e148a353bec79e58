/**
 * Driven adapter: reads campaign items for the references other resources
 * must respect (an identity named by a campaign cannot be deleted).
 */
import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { CampaignReferences } from '../../sending/ports.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** The attributes of a campaign this reference check reads. */
const CampaignReferenceItem = itemSchema('Campaign', {
  id: v.string(),
  name: v.string(),
});

/** Campaigns naming an identity, by a filtered query of the organization. */
export class DynamoCampaignReferences implements CampaignReferences {
  constructor(private readonly table: DynamoTable) {}

  async usingIdentity(
    orgId: string,
    identityId: string,
  ): Promise<{ id: string; name: string }[]> {
    const query = keys.campaignsOfOrganization(orgId);
    const found: { id: string; name: string }[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression: 'sendingIdentityId = :identityId',
        ProjectionExpression: 'PK, SK, id, #name',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
          ':identityId': identityId,
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        found.push(parseItem(CampaignReferenceItem, item));
      }
    }
    return found;
  }
}
