/**
 * The hosted sign-up pages' own origin: a REST API of their own (so that
 * customer HTML never shares an origin with the API or another product
 * surface), keyless, throttled, with a web ACL limiting each source
 * address, and optionally a custom domain (`signupPagesDomain` with
 * `signupPagesCertificateArn`, an ACM certificate of this region).
 */
import { Aws, CfnOutput, Validations } from 'aws-cdk-lib';
import {
  BasePathMapping,
  DomainName,
  EndpointType,
  LambdaIntegration,
  MethodLoggingLevel,
  RestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct, type IDependable } from 'constructs';
import { type Route, resourcePath } from '../../shared/http/route.ts';
import { accessLogOptions } from './access-log.ts';
import { limitPerSource } from './per-source-limit.ts';

/** Every request to the pages shares this stage throttle. */
export const PAGES_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;

/** Requests one source address may make to the pages in a minute. */
export const DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE = 60;

/** Props of {@link PagesApi}. */
export interface PagesApiProps {
  stageName: string;
  /** Requests per source address per minute before WAF answers 429. */
  requestsPerIpPerMinute: number;
  /** A custom domain, e.g. `pages.example.com`, with its certificate. */
  domain?: { name: string; certificateArn: string };
  /**
   * What sets the account's CloudWatch role for API Gateway (the API's
   * `CfnAccount`): error execution logs need it before the stage exists.
   */
  loggingRole?: IDependable;
}

/** The pages' REST API, its web ACL and its address. */
export class PagesApi extends Construct {
  readonly api: RestApi;
  /** The base URL of the pages (no trailing slash). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: PagesApiProps) {
    super(scope, id);
    this.api = new RestApi(this, 'Api', {
      description: 'Hosted sign-up pages (an origin of their own)',
      // The account-level logging role is the API's; none is made here.
      cloudWatchRole: false,
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: {
        stageName: props.stageName,
        // An anonymous write surface: every request logged as the API's
        // are, and errors of execution; never a body (no data trace).
        ...accessLogOptions(this, 'AccessLogs'),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        metricsEnabled: true,
        throttlingRateLimit: PAGES_THROTTLE.rateLimit,
        throttlingBurstLimit: PAGES_THROTTLE.burstLimit,
      },
    });
    if (props.loggingRole) {
      this.api.deploymentStage.node.addDependency(props.loggingRole);
    }
    if (props.domain) {
      const domain = new DomainName(this, 'Domain', {
        domainName: props.domain.name,
        certificate: Certificate.fromCertificateArn(
          this,
          'Certificate',
          props.domain.certificateArn,
        ),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      new BasePathMapping(this, 'Mapping', {
        domainName: domain,
        restApi: this.api,
        stage: this.api.deploymentStage,
      });
      new CfnOutput(this, 'DnsTarget', {
        description: `Point ${props.domain.name} (CNAME or alias) here`,
        value: domain.domainNameAliasDomainName,
      });
      this.url = `https://${props.domain.name}`;
    } else {
      // From the API's id, not `api.url`: the functions depend on this
      // address, and the stage depends on the functions.
      this.url = `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${props.stageName}`;
    }
    limitPerSource(this, 'WebAcl', {
      stage: this.api.deploymentStage,
      metricName: 'SignupPages',
      ruleName: 'PagesPerSourceAddress',
      requestsPerMinute: props.requestsPerIpPerMinute,
      tooManyRequests: {
        contentType: 'TEXT_HTML',
        content:
          '<!doctype html><html lang="en"><title>Too many requests</title><h1>Too many requests</h1><p>Please try again in a minute.</p></html>',
      },
    });
    new CfnOutput(this, 'Url', { value: this.url });
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'The form is validated in the Lambda, which answers the page again with each error beside its field.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Public sign-up pages, reached by anyone: no authorization by design; WAF limits each source address and the function applies its own limits.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Public sign-up pages for visitors without an account: there is no user pool to authorize with.',
      },
    );
  }

  /** Serves the routes of one function. */
  addRoutes(routes: readonly Route<never>[], fn: IFunction): void {
    const integration = new LambdaIntegration(fn, {
      scopePermissionToMethod: false,
    });
    for (const route of routes) {
      this.api.root
        .resourceForPath(resourcePath(route))
        .addMethod(route.method, integration, { apiKeyRequired: false });
    }
  }
}
