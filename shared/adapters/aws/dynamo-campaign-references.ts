/**
 * Driven adapter: reads campaign items for the references other resources
 * must respect (an identity named by a campaign cannot be deleted).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../db/keys.ts';
import type { CampaignReferences } from '../../sending/ports.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** Campaigns naming an identity, by a filtered query of the organization. */
export class DynamoCampaignReferences implements CampaignReferences {
  constructor(private readonly table: DynamoTable) {}

  async usingIdentity(
    orgId: string,
    identityId: string,
  ): Promise<{ id: string; name: string }[]> {
    const query = keys.campaignsOfOrganization(orgId);
    const found: { id: string; name: string }[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const result = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          FilterExpression: 'sendingIdentityId = :identityId',
          ProjectionExpression: 'id, #name',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':pk': query.PK,
            ':prefix': query.skPrefix,
            ':identityId': identityId,
          },
          ExclusiveStartKey,
        }),
      );
      for (const item of result.Items ?? []) {
        found.push({ id: String(item.id), name: String(item.name) });
      }
      ExclusiveStartKey = result.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return found;
  }
}
