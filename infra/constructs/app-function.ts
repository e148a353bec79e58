/**
 * Infrastructure. One Lambda function with the house defaults: Node 22 on
 * arm64, our own ESM build with code splitting (`infra/bundle.ts`), JSON
 * logs to its own log group, active tracing (SDK calls traced only with the
 * `traceAwsCalls` context), source maps only with the `sourceMaps` context,
 * and resource access granted only through `bind*` helpers.
 */

import {
  ArnFormat,
  AssetHashType,
  Aws,
  DockerImage,
  Duration,
  type ILocalBundling,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { TrackingDomain } from '../../shared/adapters/aws/ses-email-provider.ts';
import type { Bindings, TableAction } from '../../shared/bindings.ts';
import { queueUrlEnv } from '../../shared/config.ts';
import { WEBHOOK_FANOUT_QUEUE } from '../../shared/webhooks/queues.ts';
import { type BundleOptions, bundleFunction, repoRoot } from '../bundle.ts';

/** The IAM actions SES v2 `SendEmail` needs: simple/template and raw content. */
const SES_SEND_ACTIONS = ['ses:SendEmail', 'ses:SendRawEmail'];

/**
 * What changing keys at the edge takes, each API Gateway action on the
 * resource paths it acts on: create and find keys, disable one, add one to
 * a plan, and list the plans (to find the one of the function's stage).
 */
const GATEWAY_KEY_GRANTS: [string, string[]][] = [
  ['apigateway:POST', ['/apikeys', '/usageplans/*/keys']],
  ['apigateway:GET', ['/apikeys', '/usageplans']],
  ['apigateway:PATCH', ['/apikeys/*']],
];

/** The SES resource types our grants name, as in their ARNs. */
type SesResourceType = 'identity' | 'configuration-set' | 'tenant';

/**
 * What managing the sending setup takes, each action on the SES resource
 * types it acts on: domain identities (Easy DKIM, MAIL FROM), the tenants'
 * configuration sets, the tenants themselves, and tenant associations,
 * scoped to the tenant and to what gets associated with it (an identity or
 * a configuration set).
 */
const SES_SETUP_GRANTS: { actions: string[]; resources: SesResourceType[] }[] =
  [
    {
      actions: [
        'ses:CreateEmailIdentity',
        'ses:GetEmailIdentity',
        'ses:DeleteEmailIdentity',
        'ses:PutEmailIdentityMailFromAttributes',
      ],
      resources: ['identity'],
    },
    {
      actions: [
        'ses:CreateConfigurationSet',
        'ses:CreateConfigurationSetEventDestination',
        'ses:PutConfigurationSetTrackingOptions',
      ],
      resources: ['configuration-set'],
    },
    {
      actions: ['ses:CreateTenant', 'ses:GetTenant', 'ses:ListTenantResources'],
      resources: ['tenant'],
    },
    {
      actions: [
        'ses:CreateTenantResourceAssociation',
        'ses:DeleteTenantResourceAssociation',
      ],
      resources: ['tenant', 'identity', 'configuration-set'],
    },
  ];

/** Grants scheduling (the schedule group, its role and target queues). */
export interface Scheduling {
  grantScheduling(
    fn: AppFunction,
    targets: Readonly<Record<string, IQueue>>,
  ): void;
}

/** The deployed resources bindings refer to. */
export interface BindingResources {
  table: ITable;
  /** Signs the public links; readable only with a `linkSecret` binding. */
  linkSigningSecret: ISecret;
  /** Keys the suppression list; readable only with an `addressKey` binding. */
  addressKeySecret: ISecret;
  publicApiUrl: string;
  /** The base URL of the hosted sign-up pages (their own origin). */
  pagesUrl: string;
  appFromAddress: string;
  /** How the public sign-up form defends itself (operator's context). */
  signupForms?: SignupFormResources;
  /**
   * The REST API and stage whose usage plan holds the keys (a
   * `gatewayKeys` binding finds the plan by them at run time).
   */
  gatewayKeys?: { restApiId: string; stageName: string };
  /** The consumer groups' queues, by group name. */
  queues?: ReadonlyMap<string, IQueue>;
  /** The configuration set of mail sent outside a tenant (its events). */
  configurationSetName?: string;
  /** The operator's open and click tracking domain, if any. */
  tracking?: TrackingDomain;
  scheduling?: Scheduling;
}

/** The sign-up form's settings, as the operator gave them (context). */
export interface SignupFormResources {
  minFillSeconds?: number;
  maxPerIpPerHour?: number;
  maxPerEmailPerHour?: number;
  frameAncestors?: string;
  captcha?: {
    provider: 'turnstile' | 'hcaptcha';
    siteKey: string;
    /** The Secrets Manager secret holding the provider's secret key. */
    secret: ISecret;
  };
}

/** A function's memory unless it says otherwise, in MB. */
export const DEFAULT_MEMORY_MB = 512;

/** Props of an {@link AppFunction}. */
export interface AppFunctionProps {
  /** The handler module, relative to the repository root. */
  entry: string;
  /**
   * Files of npm packages the function reads at run time, as module paths
   * (`redoc/bundles/redoc.standalone.js`): each is copied beside the bundle.
   */
  assets?: readonly string[];
  /** Default 10 s (an API request). */
  timeoutSeconds?: number;
  /**
   * Ships source maps and runs with `--enable-source-maps` (stack traces
   * name our files and lines), at a cost in cold start measured by
   * `npm run bench:cold`. Default off; the `sourceMaps` context turns it on.
   */
  sourceMaps?: boolean;
  /** Default 512 MB (Lambda gives CPU in proportion: 1,769 MB is one vCPU). */
  memorySize?: number;
}

/**
 * A yes/no context (`sourceMaps`, `traceAwsCalls`): `true` from cdk.json,
 * or `-c key=true` on the command line, where it arrives as a string.
 * Absent is off.
 */
const flagContext = (scope: Construct, key: string): boolean => {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === false || value === 'false') {
    return false;
  }
  if (value === true || value === 'true') return true;
  throw new Error(
    `The ${key} context must be true or false; got ${String(value)}`,
  );
};

/**
 * The function's build as a CDK local bundling step: `infra/bundle.ts` run
 * in this process (esbuild's JS API), never Docker. Its fields are part of
 * the asset's cache key, so two functions never share a build.
 */
class EsbuildBundling implements ILocalBundling {
  constructor(readonly options: BundleOptions) {}

  tryBundle(outputDir: string): boolean {
    bundleFunction(this.options, outputDir);
    return true;
  }
}

/**
 * A Lambda function with the house defaults, built by `infra/bundle.ts`. Environment variables are set
 * only by the `bind*` methods, so a grant and its variable stay together.
 */
export class AppFunction extends Construct {
  /** The underlying function, e.g. for API integrations. */
  readonly fn: LambdaFunction;

  /** The function's log group, one month of retention. */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: AppFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An explicit role instead of AWSLambdaBasicExecutionRole: the function
    // may write to its own log group and nowhere else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });
    this.logGroup.grantWrite(role);

    const sourceMaps = props.sourceMaps ?? flagContext(this, 'sourceMaps');
    const traceAwsCalls = flagContext(this, 'traceAwsCalls');
    const bundling: BundleOptions = {
      entry: props.entry,
      sourceMap: sourceMaps,
      ...(props.assets?.length ? { assets: props.assets } : {}),
    };
    this.fn = new LambdaFunction(this, 'Function', {
      code: Code.fromAsset(repoRoot, {
        // The hash of what was built, never of the whole repository.
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          local: new EsbuildBundling(bundling),
          // Required by CDK, never pulled: the local build always runs.
          image: DockerImage.fromRegistry(
            'public.ecr.aws/sam/build-nodejs22.x',
          ),
        },
      }),
      handler: 'index.handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      tracing: Tracing.ACTIVE,
      environment: {
        POWERTOOLS_SERVICE_NAME: 'email-marketing',
        // Whether the code loads the X-Ray tracer and records every SDK
        // call (shared/observability.ts); Lambda's own segments either way.
        POWERTOOLS_TRACE_ENABLED: String(traceAwsCalls),
        ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
    });
  }

  /**
   * Grants exactly `actions` on the table (and its indexes, if any) and tells
   * the function the table's name through `TABLE_NAME`; no action, no grant.
   */
  bindTable(table: ITable, actions: readonly TableAction[]): void {
    if (actions.length > 0) table.grant(this.fn, ...actions);
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
  }

  /**
   * Gives the function exactly its bindings: for each, its grants and the
   * variables its configuration schema reads (`shared/config.ts`), and
   * nothing else.
   */
  bind(bindings: Bindings, resources: BindingResources): void {
    const kinds = new Set(bindings.map((binding) => binding.kind));
    for (const binding of bindings) {
      switch (binding.kind) {
        case 'table':
          this.bindTable(resources.table, binding.actions);
          break;
        case 'endpoints':
          this.bindEnvironment('PUBLIC_API_URL', resources.publicApiUrl);
          this.bindEnvironment('APP_FROM_ADDRESS', resources.appFromAddress);
          this.bindEnvironment('PAGES_URL', resources.pagesUrl);
          break;
        case 'signupForms': {
          const forms = resources.signupForms ?? {};
          const optional: [string, string | number | undefined][] = [
            ['SIGNUP_MIN_FILL_SECONDS', forms.minFillSeconds],
            ['SIGNUP_MAX_PER_IP_PER_HOUR', forms.maxPerIpPerHour],
            ['SIGNUP_MAX_PER_EMAIL_PER_HOUR', forms.maxPerEmailPerHour],
            ['SIGNUP_FRAME_ANCESTORS', forms.frameAncestors],
          ];
          for (const [name, value] of optional) {
            if (value !== undefined) this.bindEnvironment(name, String(value));
          }
          if (forms.captcha) {
            this.bindEnvironment(
              'SIGNUP_CAPTCHA_PROVIDER',
              forms.captcha.provider,
            );
            this.bindEnvironment(
              'SIGNUP_CAPTCHA_SITE_KEY',
              forms.captcha.siteKey,
            );
            this.bindSecret(forms.captcha.secret, 'SIGNUP_CAPTCHA_SECRET_ARN');
          }
          break;
        }
        case 'mail':
          this.bindEmailSending();
          if (resources.configurationSetName) {
            this.bindEnvironment(
              'SES_CONFIGURATION_SET',
              resources.configurationSetName,
            );
          }
          break;
        case 'linkSecret':
          this.bindSecret(
            resources.linkSigningSecret,
            'LINK_SIGNING_SECRET_ARN',
          );
          break;
        case 'addressKey':
          this.bindSecret(resources.addressKeySecret, 'ADDRESS_KEY_SECRET_ARN');
          break;
        case 'sendingSetup':
          this.bindSendingSetup();
          this.bindAccount();
          if (resources.tracking) {
            this.bindEnvironment(
              'SES_TRACKING_DOMAIN',
              resources.tracking.domain,
            );
            this.bindEnvironment(
              'SES_TRACKING_HTTPS_POLICY',
              resources.tracking.httpsPolicy,
            );
          }
          break;
        case 'sendingStatus':
          // The setup's grants read tenants too.
          if (!kinds.has('sendingSetup')) this.bindSendingStatusRead();
          this.bindAccount();
          break;
        case 'sendingQuota':
          // The setup's grants read the account too.
          if (!kinds.has('sendingSetup')) this.bindAccountRead();
          this.bindAccount();
          break;
        case 'scheduler': {
          const scheduling = resources.scheduling;
          if (!scheduling) {
            throw new Error('A scheduler binding needs the schedules');
          }
          const targets = Object.fromEntries(
            binding.queues.map((name) => {
              const target = resources.queues?.get(name);
              if (!target) throw new Error(`No queue named ${name}`);
              return [name, target];
            }),
          );
          scheduling.grantScheduling(this, targets);
          break;
        }
        case 'gatewayKeys': {
          const api = resources.gatewayKeys;
          if (!api) throw new Error('A gatewayKeys binding needs the API');
          this.bindGatewayKeys(api);
          break;
        }
        case 'queue':
          this.bindQueue(resources, binding.queue);
          break;
        case 'webhookEvents':
          // The summaries (one GetItem per organization every few seconds)
          // and the fan-out queue.
          resources.table.grant(this.fn, 'dynamodb:GetItem');
          this.bindEnvironment('TABLE_NAME', resources.table.tableName);
          this.bindQueue(resources, WEBHOOK_FANOUT_QUEUE);
          break;
        case 'webhookCalls':
          // Calls out to the internet: no grant, no variable.
          break;
        case 'mailboxLookup':
          // Public DNS: no grant, no variable.
          break;
      }
    }
  }

  /** Lets the function send to a consumer group's queue, and tells it the URL. */
  private bindQueue(resources: BindingResources, name: string): void {
    const queue = resources.queues?.get(name);
    if (!queue) throw new Error(`No queue named ${name}`);
    queue.grantSendMessages(this.fn);
    this.bindEnvironment(queueUrlEnv(name), queue.queueUrl);
  }

  /**
   * The account id: the SES adapters build identity and tenant ARNs with
   * it; Lambda itself sets AWS_REGION but not the account.
   */
  private bindAccount(): void {
    this.bindEnvironment('AWS_ACCOUNT_ID', Aws.ACCOUNT_ID);
  }

  /**
   * Grants read on `secret` and tells the function its ARN through
   * `envName`; the function fetches the value itself, when first needed.
   */
  bindSecret(secret: ISecret, envName: string): void {
    secret.grantRead(this.fn);
    this.fn.addEnvironment(envName, secret.secretArn);
  }

  /**
   * Lets the function send email with SES: `ses:SendEmail` and
   * `ses:SendRawEmail` on the account's identities and configuration sets
   * (SES v2 `SendEmail` authorizes against both), in this stack's region.
   */
  bindEmailSending(): void {
    const stack = Stack.of(this);
    const arnOf = (resource: string) =>
      stack.formatArn({
        service: 'ses',
        resource,
        resourceName: '*',
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
    this.fn.addToRolePolicy(
      new PolicyStatement({
        actions: SES_SEND_ACTIONS,
        resources: [arnOf('identity'), arnOf('configuration-set')],
      }),
    );
    const reason =
      'Sender identities (domains and addresses) are created at run time, one set per organization, so their names are not known at deploy time; the grant is limited to sending, in this account and region.';
    Validations.of(this).acknowledge(
      ...['identity', 'configuration-set'].map((resource) => ({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:${resource}/*]`,
        reason,
      })),
    );
  }

  /**
   * Lets the function manage the sending setup: create, read and delete
   * domain identities and their MAIL FROM, create configuration sets and
   * tenants, read tenants, associate identities and configuration sets with
   * them, and read the account's quota (`ses:GetAccount`, which supports no
   * resource-level permissions). Everything else is limited to this
   * account and region.
   */
  bindSendingSetup(): void {
    const stack = Stack.of(this);
    const arnOf = (resource: SesResourceType) =>
      stack.formatArn({
        service: 'ses',
        resource,
        resourceName: '*',
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
    for (const grant of SES_SETUP_GRANTS) {
      this.fn.addToRolePolicy(
        new PolicyStatement({
          actions: grant.actions,
          resources: grant.resources.map(arnOf),
        }),
      );
    }
    this.fn.addToRolePolicy(
      new PolicyStatement({ actions: ['ses:GetAccount'], resources: ['*'] }),
    );
    const reason =
      'Domain identities, tenants and their configuration sets are created at run time, one set per organization, so their names are not known at deploy time; the grant is limited to the sending setup actions, in this account and region.';
    Validations.of(this).acknowledge(
      ...(['identity', 'configuration-set', 'tenant'] as const).map(
        (resource) => ({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:${resource}/*]`,
          reason,
        }),
      ),
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          "ses:GetAccount (the account's sending quota) supports no resource-level permissions; so do the X-Ray actions of active tracing.",
      },
    );
  }

  /**
   * Lets the function read the status of the organizations' tenants
   * (readiness): `ses:GetTenant` and `ses:ListTenantResources` on this
   * account's tenants only.
   */
  /**
   * Lets the function read the account's sending quota and rate
   * (`ses:GetAccount`, which supports no resource-level permissions).
   */
  bindAccountRead(): void {
    this.fn.addToRolePolicy(
      new PolicyStatement({ actions: ['ses:GetAccount'], resources: ['*'] }),
    );
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "ses:GetAccount (the account's sending quota and rate) supports no resource-level permissions; so do the X-Ray actions of active tracing.",
    });
  }

  bindSendingStatusRead(): void {
    const stack = Stack.of(this);
    this.fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:GetTenant', 'ses:ListTenantResources'],
        resources: [
          stack.formatArn({
            service: 'ses',
            resource: 'tenant',
            resourceName: '*',
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ],
      }),
    );
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/*]',
      reason:
        'Tenants are created at run time, one per organization; the grant only reads their status, in this account and region.',
    });
  }

  /**
   * Lets the function register and disable API keys at the edge: create a
   * key, find one by name, disable it, add it to a usage plan, and list the
   * plans to find the one of its API's stage. The plan's id cannot be in
   * the grant (nor in the environment): the plan depends on the stage,
   * which depends on the functions, so naming it here would be a cycle.
   */
  bindGatewayKeys(api: { restApiId: string; stageName: string }): void {
    const arnOf = (path: string) =>
      `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}::${path}`;
    for (const [action, paths] of GATEWAY_KEY_GRANTS) {
      this.fn.addToRolePolicy(
        new PolicyStatement({
          actions: [action],
          resources: paths.map(arnOf),
        }),
      );
    }
    this.bindEnvironment('REST_API_ID', api.restApiId);
    this.bindEnvironment('API_STAGE_NAME', api.stageName);
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]',
        reason:
          'API keys are created at run time, one per key of an organization, so their gateway ids are not known at deploy time; the grant only disables them (PATCH), in this region.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
        reason:
          "The usage plan depends on the API's stage, which depends on this function: naming the plan's id here would be a dependency cycle. The grant only adds keys to a plan, in this region.",
      },
    );
  }

  /**
   * Sets a plain configuration value that carries no access with it (a URL,
   * an address, the ARN of a secret the function may not read). Anything
   * that comes with a grant goes through its own `bind*` method instead.
   */
  bindEnvironment(name: string, value: string): void {
    this.fn.addEnvironment(name, value);
  }
}
