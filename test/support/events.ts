import type { APIGatewayProxyEvent, Context, SQSRecord } from 'aws-lambda';

/** A REST proxy event as API Gateway sends it for a declared resource. */
export const restEvent = (options: {
  method: string;
  resource: string;
  path?: string;
  apiKey?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string>;
  params?: Record<string, string>;
}): APIGatewayProxyEvent => {
  const body =
    options.rawBody ??
    (options.body === undefined ? null : JSON.stringify(options.body));
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (body !== null) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
  }
  const path =
    options.path ??
    options.resource.replace(
      /\{(\w+)\}/g,
      (_, name: string) => options.params?.[name] ?? name,
    );
  return {
    resource: options.resource,
    path,
    httpMethod: options.method,
    headers,
    multiValueHeaders: {},
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: options.params ?? null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      httpMethod: options.method,
      path,
      resourcePath: options.resource,
      requestId: 'test-request',
    } as APIGatewayProxyEvent['requestContext'],
  };
};

/** A Lambda context good enough for the pipeline. */
export const lambdaContext = (): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:test',
  memoryLimitInMB: '512',
  awsRequestId: 'test-request',
  logGroupName: '/test',
  logStreamName: 'test',
  getRemainingTimeInMillis: () => 30_000,
  done: () => {},
  fail: () => {},
  succeed: () => {},
});

/** Parses a handler result's JSON body. */
export const jsonOf = (result: { body: string }) =>
  JSON.parse(result.body) as Record<string, unknown> & {
    data?: unknown;
    error?: string;
    details?: { field: string; message: string }[];
  };

/** An SQS record as Lambda hands it to a queue consumer. */
export const sqsRecord = (
  id: string,
  body: string,
  options: { receiveCount?: number; sentAt?: number } = {},
): SQSRecord => ({
  messageId: id,
  receiptHandle: `handle-${id}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(options.receiveCount ?? 1),
    SentTimestamp: String(options.sentAt ?? Date.now()),
    SenderId: 'sender',
    ApproximateFirstReceiveTimestamp: String(options.sentAt ?? Date.now()),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:queue',
  awsRegion: 'eu-west-1',
});
