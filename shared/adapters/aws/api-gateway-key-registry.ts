/**
 * Driven adapter: registers API keys with the API Gateway usage plan, the
 * edge shield in front of our own key check. The gateway key is named by our
 * key id, so it can be found again to disable it.
 *
 * The admin CLI knows the plan's id (a stack output). A function of the
 * stack cannot be told it: the plan depends on the API's stage, which
 * depends on the functions, so it finds the plan of its API's stage itself,
 * once per container, when it first changes a key (`usagePlanOfStage`).
 */
import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  paginateGetUsagePlans,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import type { GatewayKeyRegistry } from '../../access/ports.ts';

/**
 * The id of the usage plan serving a stage of a REST API, looked up when
 * first asked for and remembered (a failed lookup is asked again).
 */
export const usagePlanOfStage = (
  client: APIGatewayClient,
  restApiId: string,
  stage: string,
): (() => Promise<string>) => {
  let found: Promise<string> | undefined;
  const lookUp = async (): Promise<string> => {
    for await (const page of paginateGetUsagePlans({ client }, {})) {
      const plan = (page.items ?? []).find((candidate) =>
        (candidate.apiStages ?? []).some(
          (s) => s.apiId === restApiId && s.stage === stage,
        ),
      );
      if (plan?.id) return plan.id;
    }
    throw new Error(`No usage plan serves stage ${stage} of API ${restApiId}`);
  };
  return () => {
    found ??= lookUp().catch((error: unknown) => {
      found = undefined;
      throw error;
    });
    return found;
  };
};

/** API Gateway keys in one usage plan. */
export class ApiGatewayKeyRegistry implements GatewayKeyRegistry {
  private readonly usagePlanId: () => Promise<string>;

  constructor(
    private readonly client: APIGatewayClient,
    /** The plan's id, or how to find it. */
    usagePlan: string | (() => Promise<string>),
  ) {
    this.usagePlanId =
      typeof usagePlan === 'string' ? async () => usagePlan : usagePlan;
  }

  async register(keyId: string, value: string): Promise<void> {
    // The plan first: a key is never created without a plan to join.
    const usagePlanId = await this.usagePlanId();
    const created = await this.client.send(
      new CreateApiKeyCommand({
        name: keyId,
        value,
        enabled: true,
        description: 'Email marketing API key',
      }),
    );
    if (!created.id) throw new Error('API Gateway returned no key id');
    await this.client.send(
      new CreateUsagePlanKeyCommand({
        usagePlanId,
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
