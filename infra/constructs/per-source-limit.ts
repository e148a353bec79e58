/**
 * Infrastructure. A web ACL on a REST API stage with one rate-based rule:
 * a source address past its share of requests in a minute is answered 429
 * (with `Retry-After`) by WAF, before API Gateway or a function sees the
 * request. The API's public routes and the sign-up pages each have one.
 */
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';

/** Props of {@link limitPerSource}. */
export interface PerSourceLimitProps {
  /** The stage the web ACL guards. */
  stage: Stage;
  /** The web ACL's metric. */
  metricName: string;
  /** The rule's name, and its metric's. */
  ruleName: string;
  /** Requests one source address may make in a minute before the 429. */
  requestsPerMinute: number;
  /** The body of the 429. */
  tooManyRequests: {
    contentType: 'APPLICATION_JSON' | 'TEXT_HTML';
    content: string;
  };
  /**
   * Only requests whose path contains one of these count (all do without).
   * An empty list leaves nothing to limit: the ACL then has no rule.
   */
  paths?: readonly string[];
}

const metric = (name: string) => ({
  cloudWatchMetricsEnabled: true,
  metricName: name,
  sampledRequestsEnabled: true,
});

// WAF sees the path as sent (`/prod/api/v1/public/…`), decoded here so an
// encoded path cannot slip past the rule.
const onPath = (path: string): CfnWebACL.StatementProperty => ({
  byteMatchStatement: {
    fieldToMatch: { uriPath: {} },
    positionalConstraint: 'CONTAINS',
    searchString: path,
    textTransformations: [
      { priority: 0, type: 'URL_DECODE' },
      { priority: 1, type: 'LOWERCASE' },
    ],
  },
});

/** One of the paths (an `orStatement` needs two statements or more). */
const onPaths = (paths: readonly string[]): CfnWebACL.StatementProperty => {
  const [only] = paths;
  return paths.length === 1 && only !== undefined
    ? onPath(only)
    : { orStatement: { statements: paths.map(onPath) } };
};

/**
 * Adds the web ACL (`id`) and its association with the stage
 * (`<id>Association`) to `scope`.
 */
export const limitPerSource = (
  scope: Construct,
  id: string,
  props: PerSourceLimitProps,
): CfnWebACL => {
  const { paths } = props;
  const acl = new CfnWebACL(scope, id, {
    scope: 'REGIONAL',
    defaultAction: { allow: {} },
    visibilityConfig: metric(props.metricName),
    customResponseBodies: { TooManyRequests: props.tooManyRequests },
    rules:
      paths?.length === 0
        ? []
        : [
            {
              name: props.ruleName,
              priority: 0,
              action: {
                block: {
                  customResponse: {
                    responseCode: 429,
                    customResponseBodyKey: 'TooManyRequests',
                    responseHeaders: [{ name: 'Retry-After', value: '60' }],
                  },
                },
              },
              statement: {
                rateBasedStatement: {
                  aggregateKeyType: 'IP',
                  evaluationWindowSec: 60,
                  limit: props.requestsPerMinute,
                  ...(paths ? { scopeDownStatement: onPaths(paths) } : {}),
                },
              },
              visibilityConfig: metric(props.ruleName),
            },
          ],
  });
  new CfnWebACLAssociation(scope, `${id}Association`, {
    resourceArn: props.stage.stageArn,
    webAclArn: acl.attrArn,
  });
  return acl;
};
