/**
 * Infrastructure. What can be redeployed at will: a function per endpoint
 * group, consumer group and stream consumer, the REST API in front of the
 * groups, the sign-up pages' own origin and where SES's events start. Every
 * resource path and method comes from the groups' route declarations, and
 * every queue and trigger from the consumers'; none is written here.
 */

import { CfnOutput, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
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
import { constructId } from './construct-id.ts';
import {
  ApiFrontDoor,
  DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE,
} from './constructs/api-front-door.ts';
import {
  AppFunction,
  type BindingResources,
} from './constructs/app-function.ts';
import { ConsumerQueue } from './constructs/consumer-queue.ts';
import {
  DEFAULT_PAGE_REQUESTS_PER_IP_PER_MINUTE,
  PagesApi,
} from './constructs/pages-api.ts';
import { Schedules } from './constructs/schedules.ts';
import { SesEvents } from './constructs/ses-events.ts';
import { StreamTrigger } from './constructs/stream-trigger.ts';
import {
  appFromAddress,
  memoryOf,
  publicApiUrl,
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
  /** Keys the suppression list; readable only with an `addressKey` binding. */
  addressKeySecret: ISecret;
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

/** The deployment stage; the version lives in the paths (`/api/v1`). */
export const STAGE_NAME = 'prod';

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
    const servedPages = props.pageGroups ?? pageGroups;
    const consumers = props.consumers ?? consumerFunctions;

    const frontDoor = new ApiFrontDoor(this, {
      stageName: STAGE_NAME,
      routes: groups.flatMap((group) => group.routes),
      requestsPerIpPerMinute: requestsPerMinute(
        this,
        'publicRequestsPerIpPerMinute',
        DEFAULT_PUBLIC_REQUESTS_PER_IP_PER_MINUTE,
      ),
      url: publicApiUrl(this),
    });
    this.api = frontDoor.api;
    this.pages = servedPages.length > 0 ? this.pagesOrigin() : undefined;
    const tracking = trackingDomain(this);
    const sesEvents = new SesEvents(this, { tracking });

    // The consumers first: their queues are what the other functions bind,
    // and what one-shot schedules (scheduledAt, waits) deliver to.
    ({ functions: this.consumers, queues: this.queues } =
      this.addConsumers(consumers));
    this.schedules = new Schedules(this, 'Schedules');
    const resources: BindingResources = {
      table: props.table,
      linkSigningSecret: props.linkSigningSecret,
      addressKeySecret: props.addressKeySecret,
      publicApiUrl: frontDoor.url,
      // Without page groups (a stack of some groups only), nothing shows a
      // page's address: the API's stands in.
      pagesUrl: this.pages?.url ?? frontDoor.url,
      appFromAddress: appFromAddress(this).valueAsString,
      signupForms: signupFormResources(this),
      // The id of the API, not of its stage or plan (they depend on the
      // functions): a key-managing function finds the plan by these.
      gatewayKeys: { restApiId: this.api.restApiId, stageName: STAGE_NAME },
      configurationSetName: sesEvents.configurationSetName,
      ...(tracking ? { tracking } : {}),
      scheduling: this.schedules,
      queues: new Map(
        [...this.queues].map(([name, { queue }]) => [name, queue]),
      ),
    };
    for (const { group, bindings } of consumers) {
      this.consumers.get(group.name)?.bind(bindings, resources);
    }
    this.streamConsumers = this.addStreamConsumers(
      props.streamConsumers ?? streamConsumerFunctions,
      resources,
    );
    this.functions = this.addGroupFunctions(
      [...groups, ...servedPages],
      resources,
    );

    // Each route on its group's function: the API's, then the pages'.
    frontDoor.serve(
      groups.map(({ name, routes }) => ({ routes, fn: this.fnOf(name) })),
    );
    for (const { name, routes } of servedPages) {
      this.pages?.addRoutes(routes, this.fnOf(name));
    }
    new CfnOutput(this, 'TableName', { value: props.table.tableName });
    // The admin CLI's rekey of suppressions reads it (`--stack`).
    new CfnOutput(this, 'AddressKeySecretArn', {
      value: props.addressKeySecret.secretArn,
    });
    this.acknowledgeNagFindings();
  }

  /**
   * The pages' origin: `signupPagesDomain` (with
   * `signupPagesCertificateArn`) for a custom domain, else the pages API's
   * execute-api address; `signupRequestsPerIpPerMinute` for its web ACL.
   */
  private pagesOrigin(): PagesApi {
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
   * A function per consumer group, with its queue, DLQ, trigger and alarms,
   * and a rule for the events it subscribes to. The functions are bound
   * once every queue exists.
   */
  private addConsumers(declared: readonly ConsumerFunction[]) {
    const functions = new Map<string, AppFunction>();
    const queues = new Map<string, ConsumerQueue>();
    for (const { group, memoryMB, events } of declared) {
      const fn = new AppFunction(this, `${constructId(group.name)}Consumer`, {
        entry: group.entry,
        memorySize: memoryOf(this, group.name, memoryMB),
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
      if (events) {
        new Rule(this, `${constructId(group.name)}Events`, {
          description: `Sends ${events.source.join(', ')} events to the ${group.name} queue`,
          eventPattern: {
            source: [...events.source],
            detailType: [...events.detailTypes],
          },
          targets: [
            new SqsQueue(consumerQueue.queue, {
              message: RuleTargetInput.fromEventPath('$.detail'),
              deadLetterQueue: consumerQueue.deadLetterQueue,
            }),
          ],
        });
      }
      functions.set(group.name, fn);
      queues.set(group.name, consumerQueue);
    }
    return { functions, queues };
  }

  /** A function per stream consumer, with its filtered trigger. */
  private addStreamConsumers(
    declared: readonly StreamConsumerFunction[],
    resources: BindingResources,
  ): Map<string, { fn: AppFunction; trigger: StreamTrigger }> {
    const streamConsumers = new Map<
      string,
      { fn: AppFunction; trigger: StreamTrigger }
    >();
    for (const { group, bindings, memoryMB } of declared) {
      const fn = new AppFunction(
        this,
        `${constructId(group.name)}StreamConsumer`,
        {
          entry: group.entry,
          memorySize: memoryOf(this, group.name, memoryMB),
          timeoutSeconds: STREAM_CONSUMER_TIMEOUT_SECONDS,
        },
      );
      fn.bind(bindings, resources);
      const trigger = new StreamTrigger(
        this,
        `${constructId(group.name)}Stream`,
        {
          name: group.name,
          settings: group.stream,
          filter: group.filter,
          table: resources.table,
          consumer: fn,
        },
      );
      streamConsumers.set(group.name, { fn, trigger });
    }
    return streamConsumers;
  }

  /** A function per endpoint group (the API's and the pages'). */
  private addGroupFunctions(
    groups: readonly EndpointGroup[],
    resources: BindingResources,
  ): Map<string, AppFunction> {
    const functions = new Map<string, AppFunction>();
    for (const group of groups) {
      const fn = new AppFunction(this, constructId(group.name), {
        entry: group.entry,
        ...(group.assets ? { assets: group.assets } : {}),
      });
      fn.bind(group.bindings, resources);
      functions.set(group.name, fn);
    }
    return functions;
  }

  /** The Lambda function of an endpoint group. */
  private fnOf(group: string) {
    const fn = this.functions.get(group)?.fn;
    if (!fn) throw new Error(`No function for the ${group} group`);
    return fn;
  }

  /** cdk-nag rules the functions do not follow, each with its reason. */
  private acknowledgeNagFindings(): void {
    for (const fn of [
      ...this.functions.values(),
      ...this.consumers.values(),
      ...[...this.streamConsumers.values()].map(({ fn }) => fn),
    ]) {
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
