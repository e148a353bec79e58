/**
 * Where the admin CLI acts: the local stack of a data dir (found through its
 * stack.json), or a deployed stack (found through its CloudFormation
 * outputs, with the operator's AWS credentials). The local-only commands act
 * on the data dir's files, running stack or not.
 */

import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import {
  type CloudFormationClient,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps } from '../../shared/access/ports.ts';
import { ApiGatewayKeyRegistry } from '../../shared/adapters/aws/api-gateway-key-registry.ts';
import { refuseOversizedItems } from '../../shared/adapters/aws/item-size.ts';
import { buildAdminDeps } from '../../shared/runtime/admin.ts';
import { documentClientOptions } from '../../shared/runtime/deps.ts';
import { localAdminDeps } from '../../shared/runtime/local.ts';
import { localSecret } from '../local/secrets.ts';
import {
  clockFileOf,
  dnsRecordsFileOf,
  providerStateFileOf,
  readStackFile,
  sentLogFileOf,
} from '../local/stack-file.ts';
import type { LocalFiles } from './local-commands.ts';

/** The outputs of the API stack the CLI needs. */
export interface DeployedStack {
  tableName: string;
  usagePlanId: string;
  /**
   * The address key secret's ARN (the rekey of suppressions reads it);
   * absent from a stack deployed by a version without it.
   */
  addressKeySecretArn?: string;
}

/**
 * Reads the outputs `TableName`, `UsagePlanId` and `AddressKeySecretArn`
 * of a deployed stack.
 */
export const describeDeployedStack = async (
  cloudFormation: CloudFormationClient,
  stackName: string,
): Promise<DeployedStack> => {
  const { Stacks = [] } = await cloudFormation.send(
    new DescribeStacksCommand({ StackName: stackName }),
  );
  const outputs = new Map(
    (Stacks[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]),
  );
  const tableName = outputs.get('TableName');
  const usagePlanId = outputs.get('UsagePlanId');
  if (!tableName || !usagePlanId) {
    throw new Error(
      `Stack ${stackName} has no TableName/UsagePlanId outputs: is it the API stack of this service?`,
    );
  }
  const addressKeySecretArn = outputs.get('AddressKeySecretArn');
  return {
    tableName,
    usagePlanId,
    ...(addressKeySecretArn ? { addressKeySecretArn } : {}),
  };
};

/**
 * The address key secret of a deployed stack, read with the operator's
 * credentials when a command first needs it.
 */
const deployedAddressKey =
  (stack: DeployedStack, region?: string) => async (): Promise<string> => {
    if (!stack.addressKeySecretArn) {
      throw new Error(
        'The stack has no AddressKeySecretArn output: deploy this version first',
      );
    }
    const { SecretString } = await new SecretsManagerClient(
      region ? { region } : {},
    ).send(new GetSecretValueCommand({ SecretId: stack.addressKeySecretArn }));
    if (!SecretString) throw new Error('The address key secret is empty');
    return SecretString;
  };

/** The dependencies of a deployed stack, with the operator's credentials. */
export const deployedDeps = (
  stack: DeployedStack,
  region?: string,
): AdminDeps =>
  buildAdminDeps({
    dynamo: DynamoDBDocumentClient.from(
      refuseOversizedItems(new DynamoDBClient(region ? { region } : {})),
      documentClientOptions,
    ),
    tableName: stack.tableName,
    gatewayKeys: new ApiGatewayKeyRegistry(
      new APIGatewayClient(region ? { region } : {}),
      stack.usagePlanId,
    ),
    addressKeySecret: deployedAddressKey(stack, region),
  });

/** The dependencies of the local stack running on `dataDir`. */
export const localStackDeps = async (dataDir: string): Promise<AdminDeps> => {
  const stack = await readStackFile(dataDir);
  return localAdminDeps({
    dynamodb: stack.dynamodb,
    tableName: stack.tableName,
    addressKeySecret: await localSecret(dataDir, 'addressKey'),
  });
};

/** The files of a local data dir that the local-only commands change. */
export const localFilesOf = (dataDir: string): LocalFiles => ({
  dnsRecordsFile: dnsRecordsFileOf(dataDir),
  providerStateFile: providerStateFileOf(dataDir),
  sentLogFile: sentLogFileOf(dataDir),
  dataDir,
  clockFile: clockFileOf(dataDir),
});
