import { readFileSync } from 'node:fs';
import { App, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { consumerFunctions } from '../../functions/consumers.ts';
import {
  type EndpointGroup,
  endpointGroups,
  pageGroups,
} from '../../functions/groups.ts';
import { streamConsumerFunctions } from '../../functions/stream-consumers.ts';
import { buildApp, type Stacks } from '../../infra/app.ts';
import {
  DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE,
  PUBLIC_ROUTE_THROTTLE,
  STAGE_THROTTLE,
} from '../../infra/constructs/api-front-door.ts';
import type { AppFunction } from '../../infra/constructs/app-function.ts';
import { DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE } from '../../infra/constructs/pages-api.ts';
import { DEFAULT_APP_FROM_ADDRESS } from '../../infra/context.ts';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import { STAGE_NAME, StatelessStack } from '../../infra/stateless-stack.ts';
import {
  type Binding,
  bindingsOf,
  binds,
  sendingSetup,
} from '../../shared/bindings.ts';
import { configNamesOf, loadConfig } from '../../shared/config.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import { API_PREFIX, resourcePath } from '../../shared/http/route.ts';
import { RUN_LEASE_MS } from '../../shared/idempotency/requests.ts';

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

/**
 * An app whose stateless stack serves `groups` instead of the API's, for
 * flags no real group sets yet.
 */
const stacksWith = (groups: readonly EndpointGroup[]): Built => {
  const app = newApp();
  const data = new StatefulStack(app, 'CustomData');
  const api = new StatelessStack(app, 'CustomApi', {
    table: data.table,
    linkSigningSecret: data.linkSigningSecret,
    addressKeySecret: data.addressKeySecret,
    groups,
    pageGroups: [],
  });
  return {
    app,
    data,
    api,
    dataTemplate: Template.fromStack(data),
    apiTemplate: Template.fromStack(api),
  };
};

/** An endpoint group of the API by name; fails the test if there is none. */
const groupNamed = (name: string): EndpointGroup => {
  const group = endpointGroups.find((g) => g.name === name);
  if (!group) throw new Error(`No group ${name}`);
  return group;
};

/** The SES actions of the sending setup, each with the resources it gets. */
const SENDING_SETUP_GRANTS: Record<string, string[]> = (() => {
  const arn = (type: string) => `arn:aws:ses:eu-west-1:123456789012:${type}/*`;
  const identity = [arn('identity')];
  const tenant = [arn('tenant')];
  return {
    'ses:CreateEmailIdentity': identity,
    'ses:GetEmailIdentity': identity,
    'ses:DeleteEmailIdentity': identity,
    'ses:PutEmailIdentityMailFromAttributes': identity,
    'ses:CreateConfigurationSet': [arn('configuration-set')],
    'ses:CreateConfigurationSetEventDestination': [arn('configuration-set')],
    'ses:CreateTenant': tenant,
    'ses:GetTenant': tenant,
    'ses:ListTenantResources': tenant,
    'ses:CreateTenantResourceAssociation': [
      ...tenant,
      ...identity,
      arn('configuration-set'),
    ],
    'ses:DeleteTenantResourceAssociation': [
      ...tenant,
      ...identity,
      arn('configuration-set'),
    ],
    'ses:GetAccount': ['*'],
  };
})();

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

/** The policy statements of a group's role whose actions start with `prefix`. */
const statementsFor = (
  built: Built,
  group: EndpointGroup,
  prefix: string,
): Props[] => {
  const fn = functionOf(built.api, group);
  if (!fn.fn.role) throw new Error(`No role for group ${group.name}`);
  return statementsOf(
    built.apiTemplate,
    logicalId(built.api, fn.fn.role),
  ).filter((s) => asArray<string>(s.Action).some((a) => a.startsWith(prefix)));
};

/** The environment variables of a group's function, as in the template. */
const environmentOf = (built: Built, group: EndpointGroup): Props => {
  const functions = built.apiTemplate.findResources('AWS::Lambda::Function');
  const fn = functions[logicalId(built.api, functionOf(built.api, group).fn)];
  return fn?.Properties.Environment.Variables;
};

/**
 * Resolves a template value as CloudFormation would, with made-up values for
 * pseudo parameters, resource ids and imports, and parameter defaults.
 */
const resolve = (template: Template, value: unknown): string => {
  const parameters = (template.toJSON().Parameters ?? {}) as Props;
  const resources = (template.toJSON().Resources ?? {}) as Props;
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': 'eu-west-1',
    'AWS::AccountId': '123456789012',
    'AWS::URLSuffix': 'amazonaws.com',
  };
  const visit = (node: unknown): string => {
    if (typeof node === 'string') return node;
    const fn = node as Props;
    if (typeof fn.Ref === 'string') {
      // A queue's Ref is its URL.
      if (resources[fn.Ref]?.Type === 'AWS::SQS::Queue') {
        return `https://sqs.eu-west-1.amazonaws.com/123456789012/${fn.Ref}`;
      }
      return (
        pseudo[fn.Ref] ??
        parameters[fn.Ref]?.Default ??
        fn.Ref.toLowerCase().slice(0, 10)
      );
    }
    if (fn['Fn::Join']) {
      const [separator, parts] = fn['Fn::Join'] as [string, unknown[]];
      return parts.map(visit).join(separator);
    }
    if (fn['Fn::ImportValue']) {
      return `arn:aws:imported:${visit(fn['Fn::ImportValue'])}`;
    }
    if (fn['Fn::GetAtt']) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [string, string];
      return `arn:aws:made-up:${resource}.${attribute}`;
    }
    throw new Error(`Cannot resolve ${JSON.stringify(node)}`);
  };
  return visit(value);
};

describe('StatefulStack', () => {
  it('keys the table as the table definition says, with TTL and its stream', () => {
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
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
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

  it('keeps two generated secrets, retained on delete and never rotated: the link signing secret and the address key', () => {
    // Arrange
    const { data, dataTemplate } = stacks();

    // Act
    const secrets = dataTemplate.findResources('AWS::SecretsManager::Secret');

    // Assert
    expect(Object.keys(secrets).sort()).toEqual(
      [
        logicalId(data, data.linkSigningSecret),
        logicalId(data, data.addressKeySecret),
      ].sort(),
    );
    for (const secret of Object.values(secrets)) {
      expect(secret).toMatchObject({
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: {
          GenerateSecretString: {
            PasswordLength: 64,
            ExcludePunctuation: true,
          },
        },
      });
    }
    // Rotation would break every link already sent, and every suppression
    // stored under the address key: none is scheduled.
    expect(
      dataTemplate.findResources('AWS::SecretsManager::RotationSchedule'),
    ).toEqual({});
    expect(dataTemplate.toJSON().Outputs.LinkSigningSecretArn).toBeDefined();
    expect(dataTemplate.toJSON().Outputs.AddressKeySecretArn).toBeDefined();
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
  it('runs one arm64 Node 22 function per endpoint group, consumer group and stream consumer', () => {
    // Arrange
    const { api, apiTemplate } = stacks();

    // Act
    const functions = apiTemplate.findResources('AWS::Lambda::Function');

    // Assert
    expect(Object.keys(functions)).toHaveLength(
      endpointGroups.length +
        pageGroups.length +
        consumerFunctions.length +
        streamConsumerFunctions.length,
    );
    const all = [
      ...[...endpointGroups, ...pageGroups].map((group) =>
        functionOf(api, group),
      ),
      ...consumerFunctions.map(({ group }) => {
        const fn = api.consumers.get(group.name);
        if (!fn) throw new Error(`No consumer ${group.name}`);
        return fn;
      }),
      ...streamConsumerFunctions.map(({ group }) => {
        const fn = api.streamConsumers.get(group.name)?.fn;
        if (!fn) throw new Error(`No stream consumer ${group.name}`);
        return fn;
      }),
    ];
    for (const fn of all) {
      expect(functions[logicalId(api, fn.fn)]?.Properties).toMatchObject({
        Architectures: ['arm64'],
        Runtime: 'nodejs22.x',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogFormat: 'JSON' },
      });
    }
  });

  it('stops every endpoint function before a keyed write’s lease ends (a run still alive is never run beside)', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    const functions = apiTemplate.findResources('AWS::Lambda::Function');

    // Assert
    for (const group of endpointGroups) {
      const timeout = Number(
        functions[logicalId(api, functionOf(api, group).fn)]?.Properties
          ?.Timeout,
      );
      expect(timeout * 1000, group.name).toBeLessThan(RUN_LEASE_MS);
    }
  });

  it('reads the table stream with at most two event source mappings (AWS throttles a third reader per shard)', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const streamMappings = Object.values(
      apiTemplate.findResources('AWS::Lambda::EventSourceMapping'),
    ).filter((mapping) =>
      JSON.stringify(mapping.Properties.EventSourceArn).includes('StreamArn'),
    );

    // Assert
    expect(streamMappings).toHaveLength(streamConsumerFunctions.length);
    expect(streamMappings.length).toBeLessThanOrEqual(2);
  });

  it('serves every route on its group function, behind an API key unless public', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    const resources = apiTemplate.toJSON().Resources as Resources;
    const paths = resourcePaths(resources);

    // Act
    const methods = Object.values(resources).filter(
      (r) => r.Type === 'AWS::ApiGateway::Method',
    );

    // Assert
    const routes = [...endpointGroups, ...pageGroups].flatMap((g) => g.routes);
    expect(methods).toHaveLength(routes.length);
    // Both kinds exist, so both branches below are exercised.
    expect(new Set(routes.map((r) => r.role === 'public'))).toEqual(
      new Set([true, false]),
    );
    for (const group of [...endpointGroups, ...pageGroups]) {
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
          ApiKeyRequired: route.role !== 'public',
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

  it('gives each public (keyless) method its own throttle, below the stage’s', () => {
    // Arrange
    const { apiTemplate } = stacks();
    const publicRoutes = endpointGroups
      .flatMap((group) => group.routes)
      .filter((route) => route.role === 'public');

    // Act
    const [stage] = Object.values(
      apiTemplate.findResources('AWS::ApiGateway::Stage'),
    );
    const settings = stage?.Properties.MethodSettings as {
      ResourcePath: string;
      HttpMethod: string;
      ThrottlingRateLimit?: number;
      ThrottlingBurstLimit?: number;
    }[];

    // Assert
    expect(publicRoutes.length).toBeGreaterThan(0);
    for (const route of publicRoutes) {
      // Method settings name the path "/" + the path with "/" escaped as "~1".
      const path = `/${resourcePath(route).replaceAll('/', '~1')}`;
      expect(
        settings.find(
          (s) => s.ResourcePath === path && s.HttpMethod === route.method,
        ),
      ).toMatchObject({
        ThrottlingRateLimit: PUBLIC_ROUTE_THROTTLE.rateLimit,
        ThrottlingBurstLimit: PUBLIC_ROUTE_THROTTLE.burstLimit,
      });
    }
    expect(PUBLIC_ROUTE_THROTTLE.rateLimit).toBeLessThan(
      STAGE_THROTTLE.rateLimit,
    );
  });

  it('A13: limits each source address on the public routes with a WAF rate rule, far below the shared throttle', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    // A path with a parameter by its literal start (WAF sees real paths).
    const publicPaths = new Set(
      endpointGroups
        .flatMap((group) => group.routes)
        .filter((route) => route.role === 'public')
        .map((route) => resourcePath(route).split('/{')[0]),
    );

    // Act
    const acls = Object.values(
      apiTemplate.findResources('AWS::WAFv2::WebACL'),
    ).filter((found) =>
      found.Properties.Rules.some(
        (r: Props) => r.Name === 'PublicRoutesPerSourceAddress',
      ),
    );
    const [acl] = acls;
    const [rule] = acl?.Properties.Rules ?? [];
    const rate = rule?.Statement.RateBasedStatement;
    const scoped = (
      rate?.ScopeDownStatement.OrStatement?.Statements ?? [
        rate?.ScopeDownStatement,
      ]
    ).map((statement: Props) => statement.ByteMatchStatement.SearchString);

    // Assert: one regional ACL, per-IP, scoped to exactly the public paths.
    expect(acls).toHaveLength(1);
    expect(acl?.Properties.Scope).toBe('REGIONAL');
    expect(acl?.Properties.DefaultAction).toEqual({ Allow: {} });
    expect(rate).toMatchObject({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 60,
      Limit: DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE,
    });
    expect(new Set(scoped)).toEqual(publicPaths);
    expect(rule?.Action.Block.CustomResponse.ResponseCode).toBe(429);
    // One address alone can never spend the method throttle readers share.
    expect(DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE / 60).toBeLessThan(
      PUBLIC_ROUTE_THROTTLE.rateLimit,
    );
    // Associated with the API's stage (the ARN refers to the stage, so
    // CloudFormation creates the stage first).
    const aclId = Object.entries(
      apiTemplate.findResources('AWS::WAFv2::WebACL'),
    ).find(([, found]) => found === acl)?.[0];
    const stageId = logicalId(api, api.api.deploymentStage);
    const associations = Object.values(
      apiTemplate.findResources('AWS::WAFv2::WebACLAssociation'),
    ).filter(
      (found) =>
        JSON.stringify(found.Properties.WebACLArn) ===
        JSON.stringify({ 'Fn::GetAtt': [aclId, 'Arn'] }),
    );
    expect(associations).toHaveLength(1);
    expect(JSON.stringify(associations[0]?.Properties.ResourceArn)).toContain(
      `{"Ref":"${stageId}"}`,
    );
  });

  it('logs every request to the sign-up pages as the API’s are: the same access-log format, error execution logs, never a body (issue 29, defect 9)', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    const pages = api.pages;
    if (!pages) throw new Error('no pages origin');
    const stages = apiTemplate.findResources('AWS::ApiGateway::Stage');
    const apiStage = stages[logicalId(api, api.api.deploymentStage)];
    const pagesStage = stages[logicalId(api, pages.api.deploymentStage)];
    const account = api.api.node.tryFindChild('Account') as CfnResource;

    // Assert
    expect(pagesStage?.Properties.AccessLogSetting.Format).toBe(
      apiStage?.Properties.AccessLogSetting.Format,
    );
    expect(
      pagesStage?.Properties.AccessLogSetting.DestinationArn,
    ).toBeDefined();
    expect(pagesStage?.Properties.AccessLogSetting.DestinationArn).not.toEqual(
      apiStage?.Properties.AccessLogSetting.DestinationArn,
    );
    expect(pagesStage?.Properties.MethodSettings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
        }),
      ]),
    );
    // The account's logging role is set before the stage is made.
    expect(pagesStage?.DependsOn).toContain(api.getLogicalId(account));
  });

  it('serves the sign-up pages on an origin of their own: a keyless REST API with its own web ACL, whose address every function is told', () => {
    // Arrange
    const { api, apiTemplate } = stacks();
    const pages = api.pages;
    if (!pages) throw new Error('no pages origin');
    const pagesFn = functionOf(api, pageGroups[0] as EndpointGroup);

    // Act
    const apis = apiTemplate.findResources('AWS::ApiGateway::RestApi');
    const acls = Object.values(
      apiTemplate.findResources('AWS::WAFv2::WebACL'),
    ).filter((found) =>
      found.Properties.Rules.some(
        (r: Props) => r.Name === 'PagesPerSourceAddress',
      ),
    );
    const variables = (fn: AppFunction) =>
      apiTemplate.toJSON().Resources[logicalId(api, fn.fn)].Properties
        .Environment.Variables;

    // Assert
    expect(Object.keys(apis)).toHaveLength(2);
    expect(acls).toHaveLength(1);
    expect(
      acls[0]?.Properties.Rules[0].Statement.RateBasedStatement,
    ).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE,
    });
    expect(JSON.stringify(variables(pagesFn).PAGES_URL)).toContain(
      logicalId(api, pages.api),
    );
    expect(variables(pagesFn)).not.toHaveProperty('SIGNUP_CAPTCHA_PROVIDER');
    expect(
      JSON.stringify(
        variables(
          functionOf(
            api,
            endpointGroups.find(
              (g) => g.name === 'signupPages',
            ) as EndpointGroup,
          ),
        ).PAGES_URL,
      ),
    ).toContain(logicalId(api, pages.api));
  });

  it('takes the pages domain, the form settings and a CAPTCHA from the context', () => {
    // Arrange
    const app = newApp({
      signupPagesDomain: 'join.example.com',
      signupPagesCertificateArn:
        'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      signupFrameAncestors: 'https://www.example.com',
      signupMinFillSeconds: '5',
      signupCaptchaProvider: 'turnstile',
      signupCaptchaSiteKey: '0x4AAA',
      signupCaptchaSecretName: 'turnstile-secret',
    });
    const { api } = buildApp(app);
    const template = Template.fromStack(api);
    const pagesFn = functionOf(api, pageGroups[0] as EndpointGroup);

    // Act
    const variables =
      template.toJSON().Resources[logicalId(api, pagesFn.fn)].Properties
        .Environment.Variables;

    // Assert
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'join.example.com',
    });
    expect(variables).toMatchObject({
      PAGES_URL: 'https://join.example.com',
      SIGNUP_FRAME_ANCESTORS: 'https://www.example.com',
      SIGNUP_MIN_FILL_SECONDS: '5',
      SIGNUP_CAPTCHA_PROVIDER: 'turnstile',
      SIGNUP_CAPTCHA_SITE_KEY: '0x4AAA',
    });
    expect(variables.SIGNUP_CAPTCHA_SECRET_ARN).toBeDefined();
    expect(() =>
      buildApp(newApp({ signupPagesDomain: 'join.example.com' })),
    ).toThrow(/together/);
  });

  it('takes the per-address limit of the public routes from the context', () => {
    // Arrange
    const app = newApp({ publicRequestsPerIpPerMinute: '30' });
    const { api } = buildApp(app);

    // Act
    const template = Template.fromStack(api);

    // Assert
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: [
        Match.objectLike({
          Statement: {
            RateBasedStatement: Match.objectLike({ Limit: 30 }),
          },
        }),
      ],
    });
    expect(() =>
      buildApp(newApp({ publicRequestsPerIpPerMinute: 'lots' })),
    ).toThrow(/publicRequestsPerIpPerMinute/);
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
      expect(new Set(granted)).toEqual(
        new Set([
          ...bindingsOf(group.bindings, 'table').flatMap((b) => b.actions),
          // The webhook sink reads the subscription summaries.
          ...(binds(group.bindings, 'webhookEvents')
            ? ['dynamodb:GetItem']
            : []),
        ]),
      );
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

  it('tells each function exactly the variables of its bindings', () => {
    // Arrange
    const built = stacks();
    const { api, data } = built;
    const tableId = logicalId(data, data.table);
    const secretId = logicalId(data, data.linkSigningSecret);
    const addressKeyId = logicalId(data, data.addressKeySecret);
    const apiId = logicalId(api, api.api);
    // Set for every function by the house defaults, not by a binding.
    const RUNTIME = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME'];

    for (const group of endpointGroups) {
      // Act
      const env = environmentOf(built, group);

      // Assert: nothing a binding does not name.
      const allowed = new Set([...configNamesOf(group.bindings), ...RUNTIME]);
      for (const name of Object.keys(env)) {
        expect(
          allowed.has(name) || name.startsWith('POWERTOOLS_'),
          `${group.name}: ${name}`,
        ).toBe(true);
      }
      const bound = (kind: Binding['kind']) => binds(group.bindings, kind);
      if (bound('table')) {
        expect(env.TABLE_NAME, group.name).toEqual({
          'Fn::ImportValue': expect.stringMatching(new RegExp(`Ref${tableId}`)),
        });
      }
      expect(env.LINK_SIGNING_SECRET_ARN, group.name).toEqual(
        bound('linkSecret')
          ? {
              'Fn::ImportValue': expect.stringMatching(
                new RegExp(`Ref${secretId}`),
              ),
            }
          : undefined,
      );
      expect(env.ADDRESS_KEY_SECRET_ARN, group.name).toEqual(
        bound('addressKey')
          ? {
              'Fn::ImportValue': expect.stringMatching(
                new RegExp(`Ref${addressKeyId}`),
              ),
            }
          : undefined,
      );
      if (!bound('endpoints')) {
        expect(env.PUBLIC_API_URL, group.name).toBeUndefined();
        continue;
      }
      expect(env.APP_FROM_ADDRESS, group.name).toEqual({
        Ref: 'AppFromAddress',
      });
      // Built from the API's id, not from its stage, which depends on the
      // methods and so on the functions (Template.fromStack rejects cycles).
      expect(JSON.stringify(env.PUBLIC_API_URL)).toContain(
        JSON.stringify({ Ref: apiId }),
      );
      expect(resolve(built.apiTemplate, env.PUBLIC_API_URL)).toBe(
        `https://${resolve(built.apiTemplate, { Ref: apiId })}.execute-api.eu-west-1.amazonaws.com/${STAGE_NAME}${API_PREFIX}`,
      );
    }
  });

  it('gives every function a configuration its cold start accepts', () => {
    // Arrange
    const built = stacks();

    for (const group of endpointGroups) {
      // Act
      const env = Object.fromEntries(
        Object.entries(environmentOf(built, group)).map(([name, value]) => [
          name,
          resolve(built.apiTemplate, value),
        ]),
      );

      // Assert
      expect(() => loadConfig(group.bindings, env), group.name).not.toThrow();
    }
  });

  it('uses the publicApiUrl context, a custom domain, when given', () => {
    // Arrange
    const url = `https://mail.example.com${API_PREFIX}`;
    const app = newApp({ publicApiUrl: url });

    // Act
    const { api } = buildApp(app);

    // Assert
    const functions = Template.fromStack(api).findResources(
      'AWS::Lambda::Function',
    );
    const told = Object.values(functions)
      .map((fn) => fn.Properties.Environment.Variables.PUBLIC_API_URL)
      .filter((value) => value !== undefined);
    expect(told.length).toBeGreaterThan(0);
    for (const value of told) expect(value).toBe(url);
  });

  it('tracks opens and clicks through the trackingDomain context: the application set and every tenant set name it', () => {
    // Arrange
    const app = newApp({
      trackingDomain: 'track.example.com',
      trackingHttpsPolicy: 'OPTIONAL',
    });

    // Act
    const { api } = buildApp(app);

    // Assert
    const template = Template.fromStack(api);
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      TrackingOptions: {
        CustomRedirectDomain: 'track.example.com',
        HttpsPolicy: 'OPTIONAL',
      },
    });
    const functions = Object.values(
      template.findResources('AWS::Lambda::Function'),
    ).map((fn) => fn.Properties.Environment?.Variables ?? {});
    const told = functions.filter(
      (variables) => variables.SES_TRACKING_DOMAIN !== undefined,
    );
    // Exactly the functions that create tenants (sendingSetup) are told.
    expect(told.length).toBeGreaterThan(0);
    for (const variables of told) {
      expect(variables).toMatchObject({
        SES_TRACKING_DOMAIN: 'track.example.com',
        SES_TRACKING_HTTPS_POLICY: 'OPTIONAL',
        AWS_ACCOUNT_ID: expect.anything(),
      });
    }
    expect(JSON.stringify(template.toJSON())).toContain(
      'ses:PutConfigurationSetTrackingOptions',
    );
  });

  it('gives each consumer its declared memory (senders 256 MB, the rest 512), and the <group>MemoryMB context overrides it', () => {
    // Arrange
    const memories = (api: StatelessStack) => {
      const functions = Template.fromStack(api).findResources(
        'AWS::Lambda::Function',
      );
      const of = (group: string) =>
        Object.entries(functions).find(([id]) =>
          id.startsWith(`${group}Consumer`),
        )?.[1]?.Properties?.MemorySize;
      return {
        send: of('Send'),
        dispatch: of('Dispatch'),
        events: of('Events'),
      };
    };

    // Act
    const declared = memories(buildApp(newApp()).api);
    const raised = memories(buildApp(newApp({ sendMemoryMB: '1024' })).api);

    // Assert
    expect(declared).toEqual({ send: 256, dispatch: 512, events: 512 });
    expect(raised).toEqual({ send: 1024, dispatch: 512, events: 512 });
  });

  it.each(['64', '512.5', 'lots'])(
    'rejects the sendMemoryMB context %s at synth',
    (value) => {
      expect(() => buildApp(newApp({ sendMemoryMB: value }))).toThrow(
        'sendMemoryMB',
      );
    },
  );

  it('leaves tracking to the SES domain (awstrack.me) without the context', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const sets = Object.values(
      apiTemplate.findResources('AWS::SES::ConfigurationSet'),
    );

    // Assert
    expect(sets).toHaveLength(1);
    expect(sets[0]?.Properties?.TrackingOptions).toBeUndefined();
  });

  it.each([
    ['trackingDomain', 'https://track.example.com'],
    ['trackingDomain', 'Track.Example.com'],
    ['trackingHttpsPolicy', 'ALWAYS'],
    ['publicApiUrl', 'https://mail.example.com/api'],
    ['publicApiUrl', `http://mail.example.com${API_PREFIX}`],
    ['appFromAddress', 'not an address'],
  ])('rejects the %s context %s at synth', (key, value) => {
    // Arrange
    const app = newApp({ [key]: value });

    // Act
    const build = () => buildApp(app);

    // Assert
    expect(build).toThrow(key);
  });

  it('takes the sender address as a parameter that must be an email', () => {
    // Arrange
    const { apiTemplate } = stacks();

    // Act
    const parameter = apiTemplate.toJSON().Parameters.AppFromAddress;

    // Assert
    expect(parameter).toMatchObject({
      Type: 'String',
      Default: DEFAULT_APP_FROM_ADDRESS,
      Description: expect.stringContaining('verified SES identity'),
    });
    const pattern = new RegExp(parameter.AllowedPattern);
    expect(pattern.test('no-reply@mail.example.com')).toBe(true);
    expect(pattern.test('first.last+tag@example.co.uk')).toBe(true);
    expect(pattern.test('no-reply')).toBe(false);
    expect(pattern.test('Acme <no-reply@example.com>')).toBe(false);
  });

  it('defaults the sender address to the appFromAddress context', () => {
    // Arrange
    const app = newApp({ appFromAddress: 'hello@acme.example.com' });

    // Act
    const { api } = buildApp(app);

    // Assert
    Template.fromStack(api).hasParameter('AppFromAddress', {
      Default: 'hello@acme.example.com',
    });
  });

  it.each([
    ['linkSecret', 'the link signing secret', 'linkSigningSecret'],
    ['addressKey', 'the address key', 'addressKeySecret'],
  ] as const)(
    'lets only the groups with a %s binding read %s',
    (kind, _, secret) => {
      // Arrange
      const built = stacks();
      const secretId = logicalId(built.data, built.data[secret]);
      const onSecret = (statement: Props) =>
        JSON.stringify(statement.Resource).includes(`Ref${secretId}`);
      expect(
        new Set(endpointGroups.map((g) => binds(g.bindings, kind))),
      ).toEqual(new Set([true, false]));

      for (const group of endpointGroups) {
        // Act
        const statements = statementsFor(
          built,
          group,
          'secretsmanager:',
        ).filter(onSecret);

        // Assert
        const granted = statements.flatMap((s) => asArray<string>(s.Action));
        if (!binds(group.bindings, kind)) {
          expect(granted, group.name).toEqual([]);
          continue;
        }
        expect(granted, group.name).toContain('secretsmanager:GetSecretValue');
        for (const statement of statements) {
          expect(asArray(statement.Resource)).toEqual([
            {
              'Fn::ImportValue': expect.stringMatching(
                new RegExp(`Ref${secretId}`),
              ),
            },
          ]);
        }
      }
    },
  );

  it('binds the address key exactly to the groups whose table names the delivery store (it keys suppressions)', () => {
    // Arrange
    const all = [
      ...endpointGroups.map((g) => [g.name, g.bindings] as const),
      ...consumerFunctions.map((c) => [c.group.name, c.bindings] as const),
      ...streamConsumerFunctions.map(
        (c) => [c.group.name, c.bindings] as const,
      ),
    ];

    // Act
    const mismatched = all.filter(
      ([, bindings]) =>
        binds(bindings, 'addressKey') !==
        bindingsOf(bindings, 'table').some((t) =>
          t.stores.includes('delivery'),
        ),
    );

    // Assert
    expect(mismatched.map(([name]) => name)).toEqual([]);
    expect(
      all.filter(([, b]) => binds(b, 'addressKey')).length,
    ).toBeGreaterThan(5);
  });

  it('lets only the groups that send email send it, on identities and configuration sets', () => {
    // Arrange
    const built = stacks();
    expect(
      new Set(endpointGroups.map((g) => binds(g.bindings, 'mail'))),
    ).toEqual(new Set([true, false]));

    for (const group of endpointGroups) {
      // Act
      const statements = statementsFor(built, group, 'ses:Send');

      // Assert
      if (!binds(group.bindings, 'mail')) {
        expect(statements, group.name).toEqual([]);
        expect(
          environmentOf(built, group).SES_CONFIGURATION_SET,
        ).toBeUndefined();
        continue;
      }
      // Mail outside a tenant names the application's configuration set.
      expect(environmentOf(built, group).SES_CONFIGURATION_SET).toEqual({
        Ref: expect.stringMatching(/^ApplicationConfigurationSet/),
      });
      const granted = statements.flatMap((s) => asArray<string>(s.Action));
      expect(new Set(granted)).toEqual(
        new Set(['ses:SendEmail', 'ses:SendRawEmail']),
      );
      const resources = statements.flatMap((s) =>
        asArray<unknown>(s.Resource).map((r) => resolve(built.apiTemplate, r)),
      );
      expect(new Set(resources)).toEqual(
        new Set([
          'arn:aws:ses:eu-west-1:123456789012:identity/*',
          'arn:aws:ses:eu-west-1:123456789012:configuration-set/*',
        ]),
      );
    }
  });

  it('lets only the groups that manage the sending setup manage it', () => {
    // Arrange: the API's groups, and a stack serving a made-up manager
    // beside a group that only reads the status.
    const flagless = groupNamed('me');
    const manager: EndpointGroup = {
      ...flagless,
      name: 'domains',
      routes: [],
      bindings: [...flagless.bindings, sendingSetup],
    };
    const custom = stacksWith([flagless, manager]);

    for (const [built, groups] of [
      [custom, [flagless, manager]],
      [stacks(), endpointGroups],
    ] as const) {
      for (const group of groups) {
        // Act
        const granted = new Map<string, Set<string>>();
        for (const statement of statementsFor(built, group, 'ses:')) {
          expect(statement.Effect).toBe('Allow');
          const resources = asArray<unknown>(statement.Resource).map((r) =>
            resolve(built.apiTemplate, r),
          );
          for (const action of asArray<string>(statement.Action)) {
            if (!(action in SENDING_SETUP_GRANTS)) continue;
            const set = granted.get(action) ?? new Set<string>();
            for (const resource of resources) set.add(resource);
            granted.set(action, set);
          }
        }

        // Assert
        // Groups computing readiness read tenants, and nothing more.
        const statusOnly = ['ses:GetTenant', 'ses:ListTenantResources'];
        const expected = binds(group.bindings, 'sendingSetup')
          ? new Map(
              Object.entries(SENDING_SETUP_GRANTS).map(([action, arns]) => [
                action,
                new Set(arns),
              ]),
            )
          : new Map([
              ...(binds(group.bindings, 'sendingStatus')
                ? statusOnly.map(
                    (action) =>
                      [
                        action,
                        new Set([
                          'arn:aws:ses:eu-west-1:123456789012:tenant/*',
                        ]),
                      ] as const,
                  )
                : []),
              // The account's quota: GetAccount has no resource ARN.
              ...(binds(group.bindings, 'sendingQuota')
                ? [['ses:GetAccount', new Set(['*'])] as const]
                : []),
            ]);
        expect(granted, group.name).toEqual(expected);
      }
    }
  });

  it('lets only the groups that manage keys change them at the edge, finding the usage plan of their API’s stage (issue 32)', () => {
    // Arrange
    const built = stacks();
    expect(
      endpointGroups
        .filter((g) => binds(g.bindings, 'gatewayKeys'))
        .map((g) => g.name),
    ).toEqual(['keys']);

    for (const group of endpointGroups) {
      // Act
      const granted = statementsFor(built, group, 'apigateway:').flatMap(
        (statement) =>
          asArray<string>(statement.Action).flatMap((action) =>
            asArray<unknown>(statement.Resource).map(
              (r) => `${action} ${resolve(built.apiTemplate, r)}`,
            ),
          ),
      );
      const env = environmentOf(built, group);

      // Assert
      if (!binds(group.bindings, 'gatewayKeys')) {
        expect(granted, group.name).toEqual([]);
        expect(env.REST_API_ID, group.name).toBeUndefined();
        continue;
      }
      const arn = 'arn:aws:apigateway:eu-west-1::';
      expect(new Set(granted)).toEqual(
        new Set([
          `apigateway:POST ${arn}/apikeys`,
          `apigateway:POST ${arn}/usageplans/*/keys`,
          `apigateway:GET ${arn}/apikeys`,
          `apigateway:GET ${arn}/usageplans`,
          `apigateway:PATCH ${arn}/apikeys/*`,
        ]),
      );
      // The API itself (not its stage or plan: they depend on the functions).
      expect(env.REST_API_ID).toEqual({
        Ref: logicalId(built.api, built.api.api),
      });
      expect(env.API_STAGE_NAME).toBe('prod');
    }
  });

  it('keeps a sending setup grant clean under the AWS Solutions checks', () => {
    // Arrange
    const built = stacksWith([
      groupNamed('me'),
      {
        ...groupNamed('me'),
        name: 'domains',
        routes: [],
        bindings: [sendingSetup],
      },
    ]);

    // Act
    const report = new AwsSolutionsChecks().validateScope(built.app);

    // Assert
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('tells the functions that talk to SES the account id, for the ARNs they build', () => {
    // Arrange
    const built = stacks();

    for (const group of endpointGroups) {
      // Act
      const env = environmentOf(built, group);
      if (
        !binds(group.bindings, 'sendingSetup') &&
        !binds(group.bindings, 'sendingStatus') &&
        !binds(group.bindings, 'sendingQuota')
      ) {
        expect(env.AWS_ACCOUNT_ID, group.name).toBeUndefined();
        continue;
      }

      // Assert
      expect(env.AWS_ACCOUNT_ID, group.name).toEqual({
        Ref: 'AWS::AccountId',
      });
      expect(resolve(built.apiTemplate, env.AWS_ACCOUNT_ID)).toBe(
        '123456789012',
      );
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

  it("keeps each stack within CloudFormation's 500 resources, or deploy fails (the API stack grows with every group and consumer)", () => {
    // Arrange
    const { dataTemplate, apiTemplate } = stacks();

    // Act
    const counts = [dataTemplate, apiTemplate].map(
      (template) => Object.keys(template.toJSON().Resources ?? {}).length,
    );

    // Assert
    for (const count of counts) expect(count).toBeLessThanOrEqual(500);
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
