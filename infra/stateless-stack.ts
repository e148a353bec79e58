/**
 * Infrastructure. What can be redeployed at will: one function per endpoint
 * group and the REST API in front of them. Every resource path and method
 * comes from the groups' route declarations; none is written here.
 */

import {
  Aws,
  CfnOutput,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import {
  LambdaIntegration,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import {
  CfnConfigurationSet,
  CfnConfigurationSetEventDestination,
} from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import {
  type ConsumerFunction,
  consumerFunctions,
} from '../functions/consumers.ts';
import {
  type EndpointGroup,
  endpointGroups,
  pageGroups,
} from '../functions/groups.ts';
import {
  type StreamConsumerFunction,
  streamConsumerFunctions,
} from '../functions/stream-consumers.ts';
import {
  PUBLISHED_EVENT_TYPES,
  SES_EVENT_DESTINATION,
} from '../shared/adapters/aws/ses-email-provider.ts';
import type { ErrorCode } from '../shared/errors.ts';
import { API_PREFIX, resourcePath } from '../shared/http/route.ts';
import { constructId } from './construct-id.ts';
import { accessLogOptions } from './constructs/access-log.ts';
import { AppFunction } from './constructs/app-function.ts';
import { ConsumerQueue } from './constructs/consumer-queue.ts';
import {
  DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE,
  PagesApi,
} from './constructs/pages-api.ts';
import { limitPerSource } from './constructs/per-source-limit.ts';
import { Schedules } from './constructs/schedules.ts';
import { StreamTrigger } from './constructs/stream-trigger.ts';
import {
  appFromAddress,
  memoryOf,
  publicApiUrl as publicApiUrlOf,
  requestsPerMinute,
  signupFormResources,
  signupPagesDomain,
  trackingDomain,
} from './context.ts';

/** Props of the {@link StatelessStack}. */
export interface StatelessStackProps extends StackProps {
  /** The table every function reads and writes. */
  table: ITable;
  /** Signs the public links; readable only by groups that `usesLinkSecret`. */
  linkSigningSecret: ISecret;
  /** The endpoint groups to serve; defaults to every group of the API. */
  groups?: readonly EndpointGroup[];
  /** The groups of the hosted pages' origin; defaults to every one. */
  pageGroups?: readonly EndpointGroup[];
  /** The consumer groups to run; defaults to every consumer. */
  consumers?: readonly ConsumerFunction[];
  /** The table's stream consumers; defaults to every one. */
  streamConsumers?: readonly StreamConsumerFunction[];
}

/**
 * A stream consumer's timeout: its calls are small, and a batch that runs
 * out of time is retried (and bisected) like one that fails.
 */
export const STREAM_CONSUMER_TIMEOUT_SECONDS = 30;

/** Per-key edge shield: 120 requests a minute; the Lambda enforces it exactly. */
export const KEY_THROTTLE = { rateLimit: 2, burstLimit: 120 } as const;

/** Stage-wide guard across all keys, far above any single key's share. */
export const STAGE_THROTTLE = { rateLimit: 100, burstLimit: 200 } as const;

/**
 * Public routes (links in emails) take no key, so no usage plan limits them:
 * each gets its own method throttle, well below the stage's, so a flood of
 * link clicks cannot spend the budget keyed callers share.
 */
export const PUBLIC_ROUTE_THROTTLE = {
  rateLimit: 50,
  burstLimit: 100,
} as const;

/**
 * Requests one source address may make to the public routes in a minute
 * before the web ACL answers 429 (context `publicRequestsPerIpPerMinute`).
 * A reader clicks a link or two; a flood from one address stops here, far
 * below the public method throttle that every reader shares.
 */
export const DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE = 100;

/** The deployment stage; the version lives in the paths (`/api/v1`). */
export const STAGE_NAME = 'prod';

/** Error bodies API Gateway itself returns, in our `{error, code}` envelope. */
const GATEWAY_RESPONSES: {
  type: ResponseType;
  statusCode?: string;
  error: string;
  code: ErrorCode;
  headers?: Record<string, string>;
}[] = [
  {
    type: ResponseType.INVALID_API_KEY,
    statusCode: '401',
    error: 'Invalid or missing API key',
    code: 'auth.invalidKey',
  },
  {
    // API Gateway answers this for unknown paths and methods.
    type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    error: 'No such route',
    code: 'route.notFound',
  },
  {
    type: ResponseType.THROTTLED,
    statusCode: '429',
    error: 'Rate limit exceeded: at most 120 requests per minute per key',
    code: 'rateLimit.exceeded',
    headers: { 'Retry-After': '60' },
  },
  {
    type: ResponseType.QUOTA_EXCEEDED,
    statusCode: '429',
    error: 'Request quota exceeded',
    code: 'rateLimit.quotaExceeded',
    headers: { 'Retry-After': '60' },
  },
  {
    type: ResponseType.REQUEST_TOO_LARGE,
    statusCode: '413',
    error: 'Request too large',
    code: 'request.tooLarge',
  },
  {
    type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
    statusCode: '415',
    error: 'Request bodies must be JSON: send content-type application/json',
    code: 'request.mediaType',
  },
  {
    type: ResponseType.ACCESS_DENIED,
    statusCode: '403',
    error: 'Access denied',
    code: 'auth.denied',
  },
  {
    type: ResponseType.DEFAULT_4XX,
    error: '$context.error.messageString',
    code: 'request.rejected',
  },
  {
    type: ResponseType.DEFAULT_5XX,
    error: 'Internal server error',
    code: 'internal',
  },
];

/**
 * A mapping template for `{error, code}`. `$context.error.messageString` is
 * already a quoted JSON string, so it is spliced in as is.
 */
const envelope = (error: string, code: string): string => {
  const message = error.startsWith('$context.') ? error : JSON.stringify(error);
  return `{"error":${message},"code":${JSON.stringify(code)}}`;
};

/** The stateless stack: functions and the API. */
export class StatelessStack extends Stack {
  /** The REST API. */
  readonly api: RestApi;

  /** The hosted sign-up pages' own REST API (none without page groups). */
  readonly pages: PagesApi | undefined;

  /** One function per endpoint group, by group name. */
  readonly functions: ReadonlyMap<string, AppFunction>;

  /** One function per consumer group, by group name. */
  readonly consumers: ReadonlyMap<string, AppFunction>;

  /** Each consumer group's queue, DLQ and alarms, by group name. */
  readonly queues: ReadonlyMap<string, ConsumerQueue>;

  /** The schedule group, its role and DLQ. */
  readonly schedules: Schedules;

  /** One function per stream consumer, with its trigger, by name. */
  readonly streamConsumers: ReadonlyMap<
    string,
    { fn: AppFunction; trigger: StreamTrigger }
  >;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const groups = props.groups ?? endpointGroups;

    this.api = new RestApi(this, 'Api', {
      description: 'Email marketing API',
      // Execution logs (errors only) need the account-level CloudWatch role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: STAGE_NAME,
        ...accessLogOptions(this, 'ApiAccessLogs'),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        metricsEnabled: true,
        throttlingRateLimit: STAGE_THROTTLE.rateLimit,
        throttlingBurstLimit: STAGE_THROTTLE.burstLimit,
        methodOptions: Object.fromEntries(
          groups
            .flatMap((group) => group.routes)
            .filter((route) => route.role === 'public')
            .map((route) => [
              `${resourcePath(route)}/${route.method}`,
              {
                throttlingRateLimit: PUBLIC_ROUTE_THROTTLE.rateLimit,
                throttlingBurstLimit: PUBLIC_ROUTE_THROTTLE.burstLimit,
              },
            ]),
        ),
      },
    });

    const fromAddress = appFromAddress(this);
    const publicApiUrl =
      publicApiUrlOf(this) ??
      `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${STAGE_NAME}${API_PREFIX}`;
    const servedPages = props.pageGroups ?? pageGroups;
    this.pages = servedPages.length > 0 ? this.pagesApi() : undefined;

    // Mail sent outside a tenant (the application's address, test sends)
    // names this configuration set, so SES publishes its events too.
    const tracking = trackingDomain(this);
    const configurationSet = new CfnConfigurationSet(
      this,
      'ApplicationConfigurationSet',
      tracking
        ? {
            trackingOptions: {
              customRedirectDomain: tracking.domain,
              httpsPolicy: tracking.httpsPolicy,
            },
          }
        : {},
    );
    const eventDestination = new CfnConfigurationSetEventDestination(
      this,
      'ApplicationEvents',
      {
        configurationSetName: configurationSet.ref,
        eventDestination: {
          name: SES_EVENT_DESTINATION,
          enabled: true,
          matchingEventTypes: PUBLISHED_EVENT_TYPES.map((type) =>
            type
              .toLowerCase()
              .replace(/_(\w)/g, (_, c: string) => c.toUpperCase()),
          ),
          eventBridgeDestination: {
            eventBusArn: `arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:event-bus/default`,
          },
        },
      },
    );
    eventDestination.addDependency(configurationSet);
    const resources = {
      configurationSetName: configurationSet.ref,
      table: props.table,
      linkSigningSecret: props.linkSigningSecret,
      publicApiUrl,
      // Without page groups (a stack of some groups only), nothing shows a
      // page's address: the API's stands in.
      pagesUrl: this.pages?.url ?? publicApiUrl,
      signupForms: signupFormResources(this),
      appFromAddress: fromAddress.valueAsString,
      ...(tracking ? { tracking } : {}),
    };

    // The consumers first: their queues are what other functions bind.
    const consumers = new Map<string, AppFunction>();
    const queues = new Map<string, ConsumerQueue>();
    for (const declared of props.consumers ?? consumerFunctions) {
      const { group } = declared;
      const fn = new AppFunction(this, `${constructId(group.name)}Consumer`, {
        entry: group.entry,
        memorySize: memoryOf(this, group.name, declared.memoryMB),
        // SQS's advice: a visibility timeout of six times the function's.
        timeoutSeconds: Math.max(
          3,
          Math.floor(group.queue.visibilityTimeoutSeconds / 6),
        ),
      });
      const consumerQueue = new ConsumerQueue(
        this,
        `${constructId(group.name)}Queue`,
        { name: group.name, settings: group.queue, consumer: fn },
      );
      if (declared.events) {
        new Rule(this, `${constructId(group.name)}Events`, {
          description: `Sends ${declared.events.source.join(', ')} events to the ${group.name} queue`,
          eventPattern: {
            source: [...declared.events.source],
            detailType: [...declared.events.detailTypes],
          },
          targets: [
            new SqsQueue(consumerQueue.queue, {
              message: RuleTargetInput.fromEventPath('$.detail'),
              deadLetterQueue: consumerQueue.deadLetterQueue,
            }),
          ],
        });
      }
      consumers.set(group.name, fn);
      queues.set(group.name, consumerQueue);
    }
    // One-shot schedules (scheduledAt, waits) deliver to consumer queues.
    this.schedules = new Schedules(this, 'Schedules');
    const boundResources = {
      ...resources,
      scheduling: this.schedules,
      queues: new Map(
        [...queues].map(([name, consumerQueue]) => [name, consumerQueue.queue]),
      ),
    };
    for (const declared of props.consumers ?? consumerFunctions) {
      consumers
        .get(declared.group.name)
        ?.bind(declared.bindings, boundResources);
    }
    this.consumers = consumers;
    this.queues = queues;

    // The table's stream consumers: a filtered trigger each.
    const streamConsumers = new Map<
      string,
      { fn: AppFunction; trigger: StreamTrigger }
    >();
    for (const declared of props.streamConsumers ?? streamConsumerFunctions) {
      const { group } = declared;
      const fn = new AppFunction(
        this,
        `${constructId(group.name)}StreamConsumer`,
        {
          entry: group.entry,
          memorySize: memoryOf(this, group.name, declared.memoryMB),
          timeoutSeconds: STREAM_CONSUMER_TIMEOUT_SECONDS,
        },
      );
      fn.bind(declared.bindings, boundResources);
      const trigger = new StreamTrigger(
        this,
        `${constructId(group.name)}Stream`,
        {
          name: group.name,
          settings: group.stream,
          filter: group.filter,
          table: props.table,
          consumer: fn,
        },
      );
      streamConsumers.set(group.name, { fn, trigger });
    }
    this.streamConsumers = streamConsumers;

    const functions = new Map<string, AppFunction>();
    for (const group of groups) {
      const fn = new AppFunction(this, constructId(group.name), {
        entry: group.entry,
        ...(group.assets ? { assets: group.assets } : {}),
      });
      fn.bind(group.bindings, boundResources);
      functions.set(group.name, fn);

      // One permission for the whole API instead of one per method, so the
      // function's resource policy stays small as routes are added.
      const integration = new LambdaIntegration(fn.fn, {
        scopePermissionToMethod: false,
      });
      for (const route of group.routes) {
        this.api.root
          .resourceForPath(resourcePath(route))
          .addMethod(route.method, integration, {
            // Public routes are reached from links in emails: no key, a
            // signed token checked by the function instead.
            apiKeyRequired: route.role !== 'public',
          });
      }
    }
    // The hosted pages: their functions on their own origin.
    for (const group of servedPages) {
      const fn = new AppFunction(this, constructId(group.name), {
        entry: group.entry,
      });
      fn.bind(group.bindings, boundResources);
      functions.set(group.name, fn);
      this.pages?.addRoutes(group.routes, fn.fn);
    }
    this.functions = functions;

    for (const response of GATEWAY_RESPONSES) {
      this.api.addGatewayResponse(constructId(response.type.responseType), {
        type: response.type,
        statusCode: response.statusCode,
        responseHeaders: quoted({
          'Content-Type': 'application/json',
          ...response.headers,
        }),
        templates: {
          'application/json': envelope(response.error, response.code),
        },
      });
    }

    const plan = this.api.addUsagePlan('UsagePlan', {
      description: 'Per-key edge throttle; keys are added by the admin CLI',
      throttle: KEY_THROTTLE,
    });
    plan.addApiStage({ stage: this.api.deploymentStage });

    this.limitPublicRoutesPerSource(groups);

    new CfnOutput(this, 'ApiUrl', { value: this.api.urlForPath(API_PREFIX) });
    new CfnOutput(this, 'ApiId', { value: this.api.restApiId });
    new CfnOutput(this, 'UsagePlanId', { value: plan.usagePlanId });
    new CfnOutput(this, 'TableName', { value: props.table.tableName });

    this.acknowledgeNagFindings([
      ...functions.values(),
      ...consumers.values(),
      ...[...streamConsumers.values()].map(({ fn }) => fn),
    ]);
  }

  /**
   * The pages' origin: `signupPagesDomain` (with
   * `signupPagesCertificateArn`) for a custom domain, else the pages API's
   * execute-api address; `signupRequestsPerIpPerMinute` for its web ACL.
   */
  private pagesApi(): PagesApi {
    const domain = signupPagesDomain(this);
    const account = this.api.node.tryFindChild('Account');
    return new PagesApi(this, 'SignupPagesOrigin', {
      stageName: STAGE_NAME,
      ...(account ? { loggingRole: account } : {}),
      requestsPerIpPerMinute: requestsPerMinute(
        this,
        'signupRequestsPerIpPerMinute',
        DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE,
      ),
      ...(domain ? { domain } : {}),
    });
  }

  /**
   * A WAF web ACL on the stage with a rate-based rule per source address on
   * the public routes: one address flooding forged links gets 429s from
   * WAF, and never spends the public method throttle that every reader of
   * every organization shares.
   */
  private limitPublicRoutesPerSource(groups: readonly EndpointGroup[]): void {
    const limit = requestsPerMinute(
      this,
      'publicRequestsPerIpPerMinute',
      DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE,
    );
    // A path with a parameter is matched by its literal start: WAF sees the
    // path as sent, never `{asset}`.
    const publicPaths = [
      ...new Set(
        groups
          .flatMap((group) => group.routes)
          .filter((route) => route.role === 'public')
          .map((route) => resourcePath(route).split('/{')[0] ?? ''),
      ),
    ];
    limitPerSource(this, 'ApiWebAcl', {
      stage: this.api.deploymentStage,
      metricName: 'EmailMarketingApi',
      ruleName: 'PublicRoutesPerSourceAddress',
      requestsPerMinute: limit,
      tooManyRequests: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify({
          error: 'Too many requests from this address; try again in a minute',
          code: 'rateLimit.perSource' satisfies ErrorCode,
        }),
      },
      paths: publicPaths,
    });
  }

  /** cdk-nag rules this design does not follow, each with its reason. */
  private acknowledgeNagFindings(functions: readonly AppFunction[]): void {
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated in the Lambda with the valibot schemas of the route declarations, which return field-level details in our error envelope.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          "Authentication is an API key: API Gateway requires one on every non-public method and the Lambda resolves it to an organization, owner and role. Public methods (links in emails) take no key; the function checks the link's signature instead.",
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The API has no end-user sign-in; callers are services holding API keys, checked by API Gateway and by the Lambda, or recipients following signed links from emails.',
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-level role that lets API Gateway write execution logs; this AWS-managed policy is the one AWS documents for it.',
      },
    );
    for (const fn of functions) {
      Validations.of(fn).acknowledge(
        {
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason:
            'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.',
        },
        {
          id: 'AwsSolutions-L1',
          reason:
            'Node.js 22 is the runtime the bundles target (node22) and the one the service is tested on; moving to a newer runtime is a deliberate upgrade.',
        },
      );
    }
  }
}

/** Header values in API Gateway mappings are quoted literals. */
const quoted = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, `'${value}'`]),
  );
