import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ApiGatewayKeyRegistry,
  usagePlanOfStage,
} from '../../../../shared/adapters/aws/api-gateway-key-registry.ts';

const client = new APIGatewayClient({ region: 'eu-west-1' });
const gateway = mockClient(client);

describe('ApiGatewayKeyRegistry', () => {
  beforeEach(() => gateway.reset());

  it('creates the key under our key id and adds it to the usage plan', async () => {
    // Arrange
    gateway.on(CreateApiKeyCommand).resolves({ id: 'gw-1' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    // Act
    await new ApiGatewayKeyRegistry(client, 'plan-1').register('k-1', 'emk_v');
    // Assert
    expect(
      gateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input,
    ).toMatchObject({
      name: 'k-1',
      value: 'emk_v',
      enabled: true,
    });
    expect(
      gateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input,
    ).toEqual({ usagePlanId: 'plan-1', keyId: 'gw-1', keyType: 'API_KEY' });
  });

  it('disables only the gateway keys whose name is exactly the key id', async () => {
    gateway.on(GetApiKeysCommand).resolves({
      items: [
        { id: 'gw-1', name: 'k-1' },
        { id: 'gw-2', name: 'k-10' },
      ],
    });
    gateway.on(UpdateApiKeyCommand).resolves({});
    await new ApiGatewayKeyRegistry(client, 'plan-1').disable(['k-1']);
    const updates = gateway.commandCalls(UpdateApiKeyCommand);
    expect(updates).toHaveLength(1);
    expect(updates[0]?.args[0].input).toEqual({
      apiKey: 'gw-1',
      patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }],
    });
  });

  it('finds the usage plan of its API stage, across pages, once per container', async () => {
    // Arrange: another API's plan first, ours on the second page.
    gateway
      .on(GetUsagePlansCommand)
      .resolvesOnce({
        items: [
          { id: 'plan-x', apiStages: [{ apiId: 'other', stage: 'prod' }] },
          { id: 'plan-y', apiStages: [{ apiId: 'api-1', stage: 'test' }] },
        ],
        position: 'p2',
      })
      .resolvesOnce({
        items: [
          { id: 'plan-1', apiStages: [{ apiId: 'api-1', stage: 'prod' }] },
        ],
      });
    gateway.on(CreateApiKeyCommand).resolves({ id: 'gw-1' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    const registry = new ApiGatewayKeyRegistry(
      client,
      usagePlanOfStage(client, 'api-1', 'prod'),
    );
    // Act
    await registry.register('k-1', 'emk_v');
    await registry.register('k-2', 'emk_w');
    // Assert
    expect(gateway.commandCalls(GetUsagePlansCommand)).toHaveLength(2);
    expect(
      gateway
        .commandCalls(CreateUsagePlanKeyCommand)
        .map((call) => call.args[0].input.usagePlanId),
    ).toEqual(['plan-1', 'plan-1']);
  });

  it('creates no key when no plan serves its stage, and looks again next time', async () => {
    // Arrange
    gateway.on(GetUsagePlansCommand).resolves({ items: [] });
    const registry = new ApiGatewayKeyRegistry(
      client,
      usagePlanOfStage(client, 'api-1', 'prod'),
    );
    // Act
    const first = registry.register('k-1', 'emk_v');
    // Assert
    await expect(first).rejects.toThrow('No usage plan serves stage prod');
    await expect(registry.register('k-1', 'emk_v')).rejects.toThrow();
    expect(gateway.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
    expect(gateway.commandCalls(GetUsagePlansCommand)).toHaveLength(2);
  });
});
