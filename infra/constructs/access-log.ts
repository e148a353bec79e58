/**
 * The access log of a REST API stage, one JSON object per request, shared
 * by the API and the sign-up pages so both read the same: it names a key by
 * its id, never by value, and holds no body (execution logs stay at ERROR
 * without data tracing, so no form or request data is logged).
 */
import {
  AccessLogField,
  AccessLogFormat,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The fields of every access-log line. */
export const accessLogFormat = (): AccessLogFormat => {
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
  // The error message field is already a quoted JSON string.
  const error = AccessLogField.contextErrorMessageString();
  return AccessLogFormat.custom(`${fields.slice(0, -1)},"error":${error}}`);
};

/** A month-long log group and the stage options that write to it. */
export const accessLogOptions = (scope: Construct, id: string) => ({
  accessLogDestination: new LogGroupLogDestination(
    new LogGroup(scope, id, { retention: RetentionDays.ONE_MONTH }),
  ),
  accessLogFormat: accessLogFormat(),
});
