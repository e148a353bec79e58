/**
 * Webhook delivery in the stateless stack (issue 32): its three consumer
 * groups — the fan-out, the deliveries and their slow lane, each with its
 * queue, DLQ, trigger and alarms from the registry — and the
 * `webhookEvents` binding
 * an emitter declares: read the subscription summaries (GetItem, nothing
 * else on the table) and send to the fan-out queue, told its URL and the
 * table's name, nothing more.
 */
import { readFileSync } from 'node:fs';
import { App, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  consumerFunction,
  consumerFunctions,
} from '../../functions/consumers.ts';
import { endpointGroups } from '../../functions/groups.ts';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import { StatelessStack } from '../../infra/stateless-stack.ts';
import { webhookEvents } from '../../shared/bindings.ts';
import { configNamesOf } from '../../shared/config.ts';
import { consumer } from '../../shared/queue/consumer.ts';
import {
  WEBHOOK_DELIVERIES_QUEUE,
  WEBHOOK_FANOUT_QUEUE,
  WEBHOOK_SLOW_DELIVERIES_QUEUE,
} from '../../shared/webhooks/queues.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON.
type Props = Record<string, any>;

/** A made-up emitter: it binds the sink and nothing else. */
const emitter = consumerFunction({
  description: 'A made-up consumer that publishes webhook events',
  bindings: [webhookEvents],
  group: consumer({
    name: 'emitter',
    entry: 'functions/me/lambda.ts',
    queue: {
      visibilityTimeoutSeconds: 30,
      batchSize: 10,
      maxConcurrency: 2,
      maxReceiveCount: 3,
    },
    message: v.object({ id: v.string() }),
    handle: async () => {},
  }),
});

const webhookConsumers = consumerFunctions.filter((fn) =>
  [
    WEBHOOK_FANOUT_QUEUE,
    WEBHOOK_DELIVERIES_QUEUE,
    WEBHOOK_SLOW_DELIVERIES_QUEUE,
  ].includes(fn.group.name),
);

const build = () => {
  const app = new App({
    context: {
      ...JSON.parse(
        readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
      ).context,
      'aws:cdk:bundling-stacks': [],
    },
  });
  const data = new StatefulStack(app, 'Data');
  const api = new StatelessStack(app, 'Api', {
    table: data.table,
    linkSigningSecret: data.linkSigningSecret,
    addressKeySecret: data.addressKeySecret,
    groups: endpointGroups.filter((group) => group.name === 'webhooks'),
    pageGroups: [],
    consumers: [...webhookConsumers, emitter],
    streamConsumers: [],
  });
  return { app, data, api, template: Template.fromStack(api) };
};

const logicalId = (
  stack: Stack,
  construct: { node: { defaultChild?: unknown } },
) => stack.getLogicalId(construct.node.defaultChild as CfnResource);

const statementsOf = (template: Template, api: Stack, role: unknown) =>
  Object.values(
    template.findResources('AWS::IAM::Policy', {
      Properties: {
        Roles: [
          {
            Ref: api.getLogicalId(
              (role as { node: { defaultChild: CfnResource } }).node
                .defaultChild,
            ),
          },
        ],
      },
    }),
  ).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Props[]);

const actionsOf = (statements: Props[]) =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

describe('webhook delivery in the stack', () => {
  it('runs the fan-out, the deliveries and the slow lane consumers, each with its queue, DLQ, trigger and alarms', () => {
    // Arrange
    const { api, template } = build();

    // Act
    const fanout = api.queues.get(WEBHOOK_FANOUT_QUEUE);
    const deliveries = api.queues.get(WEBHOOK_DELIVERIES_QUEUE);
    const slowLane = api.queues.get(WEBHOOK_SLOW_DELIVERIES_QUEUE);

    // Assert
    expect(webhookConsumers).toHaveLength(3);
    expect(fanout?.alarms).toHaveLength(3);
    expect(deliveries?.alarms).toHaveLength(3);
    expect(slowLane?.alarms).toHaveLength(3);
    // The slow lane: one attempt per batch.
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 50 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 120,
      RedrivePolicy: {
        maxReceiveCount: 10,
        deadLetterTargetArn: Match.anyValue(),
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 50 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // The deliveries consumer: 20 s, a sixth of its visibility timeout.
    const fn = api.consumers.get(WEBHOOK_DELIVERIES_QUEUE)?.fn;
    if (!fn) throw new Error('no deliveries consumer');
    expect(
      template.findResources('AWS::Lambda::Function')[logicalId(api, fn)]
        ?.Properties.Timeout,
    ).toBe(20);
  });

  it('lets the deliveries consumer schedule its own later attempts, and send to its own queue', () => {
    // Arrange
    const { api, template } = build();
    const fn = api.consumers.get(WEBHOOK_DELIVERIES_QUEUE);

    // Act
    const actions = actionsOf(statementsOf(template, api, fn?.fn.role));
    const variables = template.findResources('AWS::Lambda::Function')[
      logicalId(api, fn?.fn as never)
    ]?.Properties.Environment.Variables;

    // Assert
    expect(actions).toEqual(
      expect.arrayContaining([
        'scheduler:CreateSchedule',
        'iam:PassRole',
        'sqs:SendMessage',
      ]),
    );
    expect(actions).not.toContain('dynamodb:Scan');
    expect(Object.keys(variables)).toEqual(
      expect.arrayContaining([
        'SCHEDULE_TARGET_QUEUE_ARN_WEBHOOKDELIVERIES',
        'QUEUE_URL_WEBHOOKDELIVERIES',
        'TABLE_NAME',
      ]),
    );
  });

  it('gives a function binding webhookEvents a GetItem on the table, the fan-out queue, and their two variables', () => {
    // Arrange
    const { api, template } = build();
    const fn = api.consumers.get('emitter');

    // Act
    const statements = statementsOf(template, api, fn?.fn.role);
    const variables = template.findResources('AWS::Lambda::Function')[
      logicalId(api, fn?.fn as never)
    ]?.Properties.Environment.Variables;

    // Assert
    expect(
      actionsOf(statements).filter((a: string) => a.startsWith('dynamodb:')),
    ).toEqual(['dynamodb:GetItem']);
    const fanoutId = logicalId(
      api,
      api.queues.get(WEBHOOK_FANOUT_QUEUE)?.queue as never,
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: expect.arrayContaining(['sqs:SendMessage']),
        Resource: { 'Fn::GetAtt': [fanoutId, 'Arn'] },
      }),
    );
    // Its own consumer's variables, and exactly those of its binding.
    expect(Object.keys(variables).sort()).toEqual(
      [
        'DEAD_LETTER_QUEUE_URL_EMITTER',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_TRACE_ENABLED',
        ...configNamesOf([webhookEvents]),
      ].sort(),
    );
    expect(configNamesOf([webhookEvents])).toEqual([
      'QUEUE_URL_WEBHOOKFANOUT',
      'TABLE_NAME',
    ]);
  });

  it('passes the AWS Solutions checks', () => {
    // Arrange
    const { app } = build();

    // Act
    const report = new AwsSolutionsChecks().validateScope(app);

    // Assert
    expect(report.violations.map((violation) => violation.ruleName)).toEqual(
      [],
    );
  });
});
