/**
 * Driven adapter: registers API keys with the API Gateway usage plan, the
 * edge shield in front of our own key check. The gateway key is named by our
 * key id, so it can be found again to disable it.
 */
import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import type { GatewayKeyRegistry } from '../../access/ports.ts';

/** API Gateway keys in one usage plan. */
export class ApiGatewayKeyRegistry implements GatewayKeyRegistry {
  constructor(
    private readonly client: APIGatewayClient,
    private readonly usagePlanId: string,
  ) {}

  async register(keyId: string, value: string): Promise<void> {
    const created = await this.client.send(
      new CreateApiKeyCommand({
        name: keyId,
        value,
        enabled: true,
        description: 'Email marketing API key (created by the admin CLI)',
      }),
    );
    if (!created.id) throw new Error('API Gateway returned no key id');
    await this.client.send(
      new CreateUsagePlanKeyCommand({
        usagePlanId: this.usagePlanId,
        keyId: created.id,
        keyType: 'API_KEY',
      }),
    );
  }

  async disable(keyIds: string[]): Promise<void> {
    for (const keyId of keyIds) {
      const { items = [] } = await this.client.send(
        new GetApiKeysCommand({ nameQuery: keyId, limit: 500 }),
      );
      // nameQuery matches prefixes: keep exact names only.
      for (const key of items.filter((k) => k.name === keyId && k.id)) {
        await this.client.send(
          new UpdateApiKeyCommand({
            apiKey: key.id,
            patchOperations: [
              { op: 'replace', path: '/enabled', value: 'false' },
            ],
          }),
        );
      }
    }
  }
}
