/**
 * Infrastructure. The API's front door: the REST API and its stage (access
 * log, error execution logs, tracing, a stage throttle and each public
 * route's own), the usage plan that throttles each key, the web ACL that
 * limits each source address on the public routes, and API Gateway's own
 * error answers in our `{error, code}` envelope. The routes come from the
 * groups' declarations; `serve` puts each on its group's function.
 *
 * Not a construct of its own: it builds into the stack's scope, under the
 * ids its resources had before it was written, so their logical IDs (the
 * deployed API, its keys' usage plan, its web ACL) stay what they were.
 */
import { Aws, CfnOutput, Validations } from 'aws-cdk-lib';
import {
  LambdaIntegration,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { ErrorCode } from '../../shared/errors.ts';
import {
  API_PREFIX,
  type Route,
  resourcePath,
} from '../../shared/http/route.ts';
import { constructId } from '../construct-id.ts';
import { accessLogOptions } from './access-log.ts';
import { limitPerSource } from './per-source-limit.ts';

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

/** Header values in API Gateway mappings are quoted literals. */
const quoted = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, `'${value}'`]),
  );

/** Props of the {@link ApiFrontDoor}. */
export interface ApiFrontDoorProps {
  stageName: string;
  /** Every route the API serves: the public ones get their own limits. */
  routes: readonly Route<never>[];
  /** Requests per source address per minute on the public routes. */
  requestsPerIpPerMinute: number;
  /** The API's base URL on a custom domain (ending in `/api/v1`), if any. */
  url?: string | undefined;
}

/** The REST API, its usage plan, its web ACL and its error answers. */
export class ApiFrontDoor {
  readonly api: RestApi;
  readonly usagePlan: UsagePlan;
  /**
   * The base URL links in emails point to: the custom domain's, or the
   * stage's execute-api URL. The latter is built from the API's id, not
   * from `api.url`, which would make every function depend on the stage,
   * hence on the methods, which depend on the functions.
   */
  readonly url: string;

  constructor(scope: Construct, props: ApiFrontDoorProps) {
    const publicRoutes = props.routes.filter(
      (route) => route.role === 'public',
    );
    this.api = new RestApi(scope, 'Api', {
      description: 'Email marketing API',
      // Execution logs (errors only) need the account-level CloudWatch role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: props.stageName,
        ...accessLogOptions(scope, 'ApiAccessLogs'),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        metricsEnabled: true,
        throttlingRateLimit: STAGE_THROTTLE.rateLimit,
        throttlingBurstLimit: STAGE_THROTTLE.burstLimit,
        methodOptions: Object.fromEntries(
          publicRoutes.map((route) => [
            `${resourcePath(route)}/${route.method}`,
            {
              throttlingRateLimit: PUBLIC_ROUTE_THROTTLE.rateLimit,
              throttlingBurstLimit: PUBLIC_ROUTE_THROTTLE.burstLimit,
            },
          ]),
        ),
      },
    });
    this.url =
      props.url ??
      `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${props.stageName}${API_PREFIX}`;

    this.usagePlan = this.api.addUsagePlan('UsagePlan', {
      description: 'Per-key edge throttle; keys are added by the admin CLI',
      throttle: KEY_THROTTLE,
    });
    this.usagePlan.addApiStage({ stage: this.api.deploymentStage });

    // One address flooding forged links gets 429s from WAF, and never
    // spends the public method throttle that every reader of every
    // organization shares. A path with a parameter is matched by its
    // literal start: WAF sees the path as sent, never `{asset}`.
    limitPerSource(scope, 'ApiWebAcl', {
      stage: this.api.deploymentStage,
      metricName: 'EmailMarketingApi',
      ruleName: 'PublicRoutesPerSourceAddress',
      requestsPerMinute: props.requestsPerIpPerMinute,
      tooManyRequests: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify({
          error: 'Too many requests from this address; try again in a minute',
          code: 'rateLimit.perSource' satisfies ErrorCode,
        }),
      },
      paths: [
        ...new Set(
          publicRoutes.map((route) => resourcePath(route).split('/{')[0] ?? ''),
        ),
      ],
    });

    new CfnOutput(scope, 'ApiUrl', { value: this.api.urlForPath(API_PREFIX) });
    new CfnOutput(scope, 'ApiId', { value: this.api.restApiId });
    new CfnOutput(scope, 'UsagePlanId', { value: this.usagePlan.usagePlanId });
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
  }

  /**
   * Serves each group's routes on its function, then answers what API
   * Gateway rejects itself in our envelope. Called once, with every group:
   * the deployment's logical ID hashes the methods, then the responses.
   */
  serve(groups: readonly { routes: readonly Route<never>[]; fn: IFunction }[]) {
    for (const { routes, fn } of groups) {
      // One permission for the whole API instead of one per method, so the
      // function's resource policy stays small as routes are added.
      const integration = new LambdaIntegration(fn, {
        scopePermissionToMethod: false,
      });
      for (const route of routes) {
        this.api.root
          .resourceForPath(resourcePath(route))
          .addMethod(route.method, integration, {
            // Public routes are reached from links in emails: no key, a
            // signed token checked by the function instead.
            apiKeyRequired: route.role !== 'public',
          });
      }
    }
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
  }
}
