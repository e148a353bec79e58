import { readFileSync } from 'node:fs';
import { App, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { type EndpointGroup, endpointGroups } from '../../functions/groups.ts';
import { buildApp, type Stacks } from '../../infra/app.ts';
import type { AppFunction } from '../../infra/constructs/app-function.ts';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import type { StatelessStack } from '../../infra/stateless-stack.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import { resourcePath } from '../../shared/http/route.ts';

type Resources = Record<string, { Type: string; Properties: Props }>;
// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are untyped JSON.
type Props = Record<string, any>;

/**
 * An app with the CLI's context from cdk.json and no bundling: templates
 * only. It skips the built-in CloudFormation schema validation (4 s per
 * synth; `npm run synth` still runs it), and a cdk-nag finding does not fail
 * synthesis here, so that only the cdk-nag test reports it.
 */
const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    builtinCloudFormationValidation: false,
    context: {
      ...JSON.parse(
        readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
      ).context,
      'aws:cdk:bundling-stacks': [],
      '@aws-cdk/core:failSynthOnValidationErrors': false,
      ...context,
    },
  });

type Built = Stacks & {
  app: App;
  dataTemplate: Template;
  apiTemplate: Template;
};
let built: Built | undefined;

/** Builds the app once; every test reads the same synthesised templates. */
const stacks = (): Built => {
  if (!built) {
    const app = newApp();
    const { data, api } = buildApp(app);
    built = {
      app,
      data,
      api,
      dataTemplate: Template.fromStack(data),
      apiTemplate: Template.fromStack(api),
    };
  }
  return built;
};

/** The function of an endpoint group; fails the test if there is none. */
const functionOf = (api: StatelessStack, group: EndpointGroup): AppFunction => {
  const fn = api.functions.get(group.name);
  if (!fn) throw new Error(`No function for group ${group.name}`);
  return fn;
};

const logicalId = (
  stack: Stack,
  construct: { node: { defaultChild?: unknown } },
) => stack.getLogicalId(construct.node.defaultChild as CfnResource);

/** Full path of every API Gateway resource, rebuilt from the template. */
const resourcePaths = (resources: Resources): Map<string, string> => {
  const pathOf = (id: string): string => {
    const resource = resources[id];
    if (!resource) throw new Error(`No resource ${id}`);
    const parent = resource.Properties.ParentId;
    const prefix = parent.Ref ? pathOf(parent.Ref) : '';
    return `${prefix}/${resource.Properties.PathPart}`;
  };
  return new Map(
    Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGateway::Resource')
      .map(([id]) => [pathOf(id), id]),
  );
};

/** The statements of the policy attached to a role. */
const statementsOf = (template: Template, roleId: string): Props[] => {
  const policies = template.findResources('AWS::IAM::Policy', {
    Properties: { Roles: [{ Ref: roleId }] },
  });
  return Object.values(policies).flatMap(
    (p) => p.Properties.PolicyDocument.Statement,
  );
};

const asArray = <T>(value: T | T[]): T[] =>
  Array.isArray(value) ? value : [value];

describe('StatefulStack', () => {
  it('keys the table as the table definition says, with TTL', () => {
    // Arrange
    const { dataTemplate } = stacks();

    // Act
    const tables = dataTemplate.findResources('AWS::DynamoDB::Table');

    // Assert
    expect(Object.keys(tables)).toHaveLength(1);
    dataTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: {
        AttributeName: tableDefinition.ttlAttribute,
        Enabled: true,
      },
    });
  });

  it('bills on demand, encrypts, keeps PITR and resists deletion', () => {
    // Arrange
    const { dataTemplate } = stacks();

    // Act
    const table = dataTemplate.findResources('AWS::DynamoDB::Table');

    // Assert
    const [resource] = Object.values(table);
    expect(resource).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
    // AWS-managed key: encryption on, no customer key named.
    expect(resource?.Properties.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('creates each declared index as a GSI projecting all attributes', () => {
    // Arrange
    const app = newApp();
    const definition = {
      ...tableDefinition,
      indexes: [{ name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' }],
    };

    // Act
    const stack = new StatefulStack(app, 'Indexed', { definition });

    // Assert
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        {
          IndexName: 'GSI1',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });
});

describe('StatelessStack', () => {
  it('runs one arm64 Node 22 function per endpoint group', () => {
    // Arrange
    const { api, apiTemplate } = stacks();

    // Act
    const functions = apiTemplate.findResources('AWS::Lambda::Function');

    // Assert
    expect(Object.keys(functions)).toHaveLength(endpointGroups.length);
    for (const group of endpointGroups) {
      const fn = functionOf(api, group);
      expect(functions[logicalId(api, fn.fn)]?.Properties).toMatchObject({
        Architectures: ['arm64'],
        Runtime: 'nodejs22.x',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogFormat: 'JSON' },
      });
    }
  });

  it('serves every declared route behind an API key, on its group function', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    const resources = apiTemplate.toJSON().Resources as Resources;
    const paths = resourcePaths(resources);

    // Act
    const methods = Object.values(resources).filter(
      (r) => r.Type === 'AWS::ApiGateway::Method',
    );

    // Assert
    const routes = endpointGroups.flatMap((g) => g.routes);
    expect(methods).toHaveLength(routes.length);
    for (const group of endpointGroups) {
      const fn = functionOf(api, group);
      const fnId = logicalId(api, fn.fn);
      for (const route of group.routes) {
        const resourceId = paths.get(resourcePath(route));
        const method = methods.find(
          (m) =>
            m.Properties.HttpMethod === route.method &&
            m.Properties.ResourceId.Ref === resourceId,
        );
        expect(method, `${route.method} ${resourcePath(route)}`).toBeDefined();
        expect(method?.Properties).toMatchObject({
          ApiKeyRequired: true,
          Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
        });
        expect(JSON.stringify(method?.Properties.Integration.Uri)).toContain(
          JSON.stringify({ 'Fn::GetAtt': [fnId, 'Arn'] }),
        );
      }
    }
  });

  it('throttles each key at 2 requests a second with a burst of 120', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const plans = apiTemplate.findResources('AWS::ApiGateway::UsagePlan');

    // Assert
    expect(Object.values(plans)).toHaveLength(1);
    apiTemplate.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 2, BurstLimit: 120 },
      ApiStages: [Match.objectLike({ Stage: Match.anyValue() })],
    });
  });

  it.each([
    ['INVALID_API_KEY', '401', 'auth.invalidKey'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'route.notFound'],
    ['THROTTLED', '429', 'rateLimit.exceeded'],
  ])('answers %s with %s in the error envelope', (type, status, code) => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const responses = apiTemplate.findResources(
      'AWS::ApiGateway::GatewayResponse',
      { Properties: { ResponseType: type } },
    );

    // Assert
    const [response] = Object.values(responses);
    expect(response?.Properties.StatusCode).toBe(status);
    expect(
      response?.Properties.ResponseParameters[
        'gatewayresponse.header.Content-Type'
      ],
    ).toBe("'application/json'");
    const body = JSON.parse(
      response?.Properties.ResponseTemplates['application/json'],
    );
    expect(body).toEqual({ error: expect.any(String), code });
  });

  it('tells a throttled caller to retry after 60 seconds', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const responses = apiTemplate.findResources(
      'AWS::ApiGateway::GatewayResponse',
      { Properties: { ResponseType: 'THROTTLED' } },
    );

    // Assert
    const [response] = Object.values(responses);
    expect(
      response?.Properties.ResponseParameters[
        'gatewayresponse.header.Retry-After'
      ],
    ).toBe("'60'");
  });

  it("grants each function exactly its group's table actions", () => {
    // Arrange
    const { api, data, apiTemplate } = stacks();
    const tableId = logicalId(data, data.table);

    for (const group of endpointGroups) {
      const fn = functionOf(api, group);
      if (!fn.fn.role) throw new Error(`No role for group ${group.name}`);
      const roleId = logicalId(api, fn.fn.role);

      // Act
      const statements = statementsOf(apiTemplate, roleId).filter((s) =>
        asArray<string>(s.Action).some((a) => a.startsWith('dynamodb:')),
      );

      // Assert
      const granted = statements.flatMap((s) => asArray<string>(s.Action));
      expect(new Set(granted)).toEqual(new Set(group.tableActions));
      expect(granted).not.toContain('dynamodb:Scan');
      expect(granted).not.toContain('dynamodb:DeleteTable');
      for (const statement of statements) {
        expect(statement.Effect).toBe('Allow');
        for (const resource of asArray<Props>(statement.Resource)) {
          expect(resource).toEqual({
            'Fn::ImportValue': expect.stringMatching(
              new RegExp(`GetAtt${tableId}Arn`),
            ),
          });
        }
      }
    }
  });

  it('tells each function the table name', () => {
    // Arrange
    const { api, data, apiTemplate } = stacks();
    const tableId = logicalId(data, data.table);

    // Act
    const functions = apiTemplate.findResources('AWS::Lambda::Function');

    // Assert
    for (const group of endpointGroups) {
      const fn = functionOf(api, group);
      expect(
        functions[logicalId(api, fn.fn)]?.Properties.Environment.Variables,
      ).toMatchObject({
        TABLE_NAME: {
          'Fn::ImportValue': expect.stringMatching(new RegExp(`Ref${tableId}`)),
        },
      });
    }
  });

  it('outputs what the admin CLI reads, under stable keys', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const outputs = apiTemplate.toJSON().Outputs as Record<string, Props>;

    // Assert
    for (const key of ['ApiUrl', 'ApiId', 'UsagePlanId', 'TableName']) {
      expect(outputs[key], key).toBeDefined();
      expect(outputs[key]?.Export, key).toBeUndefined();
    }
    const url = JSON.stringify(outputs.ApiUrl?.Value);
    expect(url).toMatch(/\/api\/v1"\]\]\}$/);
  });
});

describe('app', () => {
  it('names the stacks after the stage context', () => {
    // Arrange
    const app = newApp({ stage: 'Preview' });

    // Act
    const { data, api } = buildApp(app);

    // Assert
    expect([data.stackName, api.stackName]).toEqual([
      'PreviewData',
      'PreviewApi',
    ]);
  });

  it('passes the AWS Solutions checks with every exception acknowledged', () => {
    // Arrange
    const { app } = stacks();

    // Act
    const report = new AwsSolutionsChecks().validateScope(app);

    // Assert
    const findings = report.violations.map(
      (v) =>
        `${v.ruleName} (${v.severity}) at ${v.violatingResources
          .map((r) => r.constructPath)
          .join(', ')}`,
    );
    expect(findings).toEqual([]);
  });
});
