/**
 * Infrastructure. What can be redeployed at will: one function per endpoint
 * group and the REST API in front of them. Every resource path and method
 * comes from the groups' route declarations; none is written here.
 */
import { CfnOutput, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type EndpointGroup, endpointGroups } from '../functions/groups.ts';
import { API_PREFIX, resourcePath } from '../shared/http/route.ts';
import { AppFunction } from './constructs/app-function.ts';

/** Props of the {@link StatelessStack}. */
export interface StatelessStackProps extends StackProps {
  /** The table every function reads and writes. */
  table: ITable;
  /** The endpoint groups to serve; defaults to every group of the API. */
  groups?: readonly EndpointGroup[];
}

/** Per-key edge shield: 120 requests a minute; the Lambda enforces it exactly. */
export const KEY_THROTTLE = { rateLimit: 2, burstLimit: 120 } as const;

/** Stage-wide guard across all keys, far above any single key's share. */
export const STAGE_THROTTLE = { rateLimit: 100, burstLimit: 200 } as const;

/** The deployment stage; the version lives in the paths (`/api/v1`). */
export const STAGE_NAME = 'prod';

/** Error bodies API Gateway itself returns, in our `{error, code}` envelope. */
const GATEWAY_RESPONSES: {
  type: ResponseType;
  statusCode?: string;
  error: string;
  code: string;
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

  /** One function per endpoint group, by group name. */
  readonly functions: ReadonlyMap<string, AppFunction>;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const groups = props.groups ?? endpointGroups;

    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
    });

    this.api = new RestApi(this, 'Api', {
      description: 'Email marketing API',
      // Execution logs (errors only) need the account-level CloudWatch role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: STAGE_NAME,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        metricsEnabled: true,
        throttlingRateLimit: STAGE_THROTTLE.rateLimit,
        throttlingBurstLimit: STAGE_THROTTLE.burstLimit,
      },
    });

    const functions = new Map<string, AppFunction>();
    for (const group of groups) {
      const fn = new AppFunction(this, pascal(group.name), {
        entry: group.entry,
      });
      fn.bindTable(props.table, group.tableActions);
      functions.set(group.name, fn);

      // One permission for the whole API instead of one per method, so the
      // function's resource policy stays small as routes are added.
      const integration = new LambdaIntegration(fn.fn, {
        scopePermissionToMethod: false,
      });
      for (const route of group.routes) {
        this.api.root
          .resourceForPath(resourcePath(route))
          .addMethod(route.method, integration, { apiKeyRequired: true });
      }
    }
    this.functions = functions;

    for (const response of GATEWAY_RESPONSES) {
      this.api.addGatewayResponse(pascal(response.type.responseType), {
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

    new CfnOutput(this, 'ApiUrl', { value: this.api.urlForPath(API_PREFIX) });
    new CfnOutput(this, 'ApiId', { value: this.api.restApiId });
    new CfnOutput(this, 'UsagePlanId', { value: plan.usagePlanId });
    new CfnOutput(this, 'TableName', { value: props.table.tableName });

    this.acknowledgeNagFindings(functions);
  }

  /** cdk-nag rules this design does not follow, each with its reason. */
  private acknowledgeNagFindings(functions: Map<string, AppFunction>): void {
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated in the Lambda with the valibot schemas of the route declarations, which return field-level details in our error envelope.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'No WAF web ACL yet: every method needs an API key, the usage plan throttles each key at the edge and the Lambda enforces the exact per-key rate.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Authentication is an API key: API Gateway requires one on every method and the Lambda resolves it to an organization, owner and role.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The API has no end-user sign-in; callers are services holding API keys, checked by API Gateway and by the Lambda.',
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-level role that lets API Gateway write execution logs; this AWS-managed policy is the one AWS documents for it.',
      },
    );
    for (const fn of functions.values()) {
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

/**
 * The access log, one JSON object per request; it names the key by id, never
 * by value. The error message field is already a quoted JSON string.
 */
const accessLogFormat = (): AccessLogFormat => {
  const fields = JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    requestTime: AccessLogField.contextRequestTime(),
    ip: AccessLogField.contextIdentitySourceIp(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
    method: AccessLogField.contextHttpMethod(),
    resource: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    apiKeyId: AccessLogField.contextIdentityApiKeyId(),
    errorType: AccessLogField.contextErrorResponseType(),
    xrayTraceId: AccessLogField.contextXrayTraceId(),
  });
  const error = AccessLogField.contextErrorMessageString();
  return AccessLogFormat.custom(`${fields.slice(0, -1)},"error":${error}}`);
};

/** `lists` → `Lists`, `INVALID_API_KEY` → `InvalidApiKey`: construct ids. */
const pascal = (name: string): string =>
  name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/** Header values in API Gateway mappings are quoted literals. */
const quoted = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, `'${value}'`]),
  );
