/**
 * The operator's composition root (the admin CLI, on AWS or the local
 * stack): the stores it manages, over a table and an edge key registry.
 * Apart from the functions' roots, so that no function bundles it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps, GatewayKeyRegistry } from '../access/ports.ts';
import { DynamoAccessRepository } from '../adapters/aws/dynamo-access-repository.ts';
import { DynamoAppSettingsRepository } from '../adapters/aws/dynamo-app-settings-repository.ts';
import { DynamoDeliveryRepository } from '../adapters/aws/dynamo-delivery-repository.ts';
import { DynamoOrganizationRepository } from '../adapters/aws/dynamo-organization-repository.ts';
import { DynamoRecounter } from '../adapters/aws/dynamo-recounter.ts';
import { randomIds, systemClock } from '../adapters/system.ts';
import type { AddressKeySecret } from '../delivery/address-key.ts';
import type { Clock, Ids } from '../ports.ts';

/** The operator's dependencies over a table and an edge key registry. */
export const buildAdminDeps = (options: {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  gatewayKeys: GatewayKeyRegistry;
  /** Read only by the rekey of suppressions. */
  addressKeySecret: AddressKeySecret;
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
    suppressionKeys: new DynamoDeliveryRepository(
      table,
      options.addressKeySecret,
    ),
  };
};
