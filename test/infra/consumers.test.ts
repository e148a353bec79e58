/**
 * Consumer groups in the stateless stack, derived from their declarations:
 * a function per group with exactly its bindings' grants, its queue and
 * DLQ, and the EventBridge rule of a group that subscribes to events.
 */
import { readFileSync } from 'node:fs';
import { App, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { consumerFunction } from '../../functions/consumers.ts';
import { endpointGroups } from '../../functions/groups.ts';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import { StatelessStack } from '../../infra/stateless-stack.ts';
import { queue, table } from '../../shared/bindings.ts';
import { consumer } from '../../shared/queue/consumer.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON.
type Props = Record<string, any>;

const reminders = consumerFunction({
  description: 'A made-up consumer that records a fact per message',
  bindings: [
    table({ stores: [], actions: ['dynamodb:UpdateItem'] }),
    queue('digests'),
  ],
  group: consumer({
    name: 'reminders',
    entry: 'functions/me/lambda.ts',
    queue: {
      visibilityTimeoutSeconds: 60,
      batchSize: 5,
      maxConcurrency: 3,
      maxReceiveCount: 4,
    },
    message: v.object({ id: v.string() }),
    handle: async () => {},
  }),
  events: { source: ['aws.ses'], detailTypes: ['Email Bounced'] },
});
const digests = consumerFunction({
  description: 'A made-up consumer the first one sends to',
  bindings: [],
  group: consumer({
    name: 'digests',
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
    groups: endpointGroups.filter((group) => group.name === 'me'),
    pageGroups: [],
    consumers: [reminders, digests],
    streamConsumers: [],
  });
  return { app, data, api, template: Template.fromStack(api) };
};

const logicalId = (
  stack: Stack,
  construct: { node: { defaultChild?: unknown } },
) => stack.getLogicalId(construct.node.defaultChild as CfnResource);

const statementsOfRole = (template: Template, roleId: string): Props[] =>
  Object.values(
    template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: roleId }] },
    }),
  ).flatMap((policy) => policy.Properties.PolicyDocument.Statement);

const actionsOf = (statements: Props[]) =>
  new Set(
    statements.flatMap((s) =>
      Array.isArray(s.Action) ? s.Action : [s.Action],
    ),
  );

describe('consumer groups in the stack', () => {
  it('gives each group a queue and a DLQ, the queue triggering its function', () => {
    // Act
    const { template } = build();

    // Assert
    // Two groups, a queue and a DLQ each, and the schedules' DLQ.
    template.resourceCountIs('AWS::SQS::Queue', 5);
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 60,
      RedrivePolicy: {
        maxReceiveCount: 4,
        deadLetterTargetArn: Match.anyValue(),
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 5,
      ScalingConfig: { MaximumConcurrency: 3 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // SQS's advice: visibility timeout six times the function's timeout.
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 10 });
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 5 });
  });

  it('sends the subscribed events to the queue, each message being the detail', () => {
    // Arrange
    const { api, template } = build();
    const queueId = logicalId(api, api.queues.get('reminders')?.queue as never);

    // Assert
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.ses'], 'detail-type': ['Email Bounced'] },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [queueId, 'Arn'] },
          InputPath: '$.detail',
          DeadLetterConfig: Match.anyValue(),
        }),
      ],
    });
    // EventBridge may send to the queue.
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(['sqs:SendMessage']),
            Principal: { Service: 'events.amazonaws.com' },
          }),
        ]),
      },
    });
  });

  it('grants each consumer exactly its bindings, its queue and its DLQ', () => {
    // Arrange
    const { api, template } = build();
    const fn = api.consumers.get('reminders');
    const role = fn?.fn.role;
    if (!role) throw new Error('no role');

    // Act
    const statements = statementsOfRole(
      template,
      api.getLogicalId(role.node.defaultChild as CfnResource),
    );
    const variables = template.findResources('AWS::Lambda::Function')[
      logicalId(api, fn.fn)
    ]?.Properties.Environment.Variables;

    // Assert
    const dynamo = [...actionsOf(statements)].filter((a) =>
      a.startsWith('dynamodb:'),
    );
    expect(dynamo).toEqual(['dynamodb:UpdateItem']);
    const sqs = actionsOf(statements);
    expect(sqs).toContain('sqs:ReceiveMessage');
    expect(sqs).toContain('sqs:DeleteMessage');
    expect(sqs).toContain('sqs:SendMessage');
    expect([...actionsOf(statements)].some((a) => a.startsWith('ses:'))).toBe(
      false,
    );
    expect(Object.keys(variables).sort()).toEqual([
      'DEAD_LETTER_QUEUE_URL_REMINDERS',
      'POWERTOOLS_SERVICE_NAME',
      'POWERTOOLS_TRACE_ENABLED',
      'QUEUE_URL_DIGESTS',
      'TABLE_NAME',
    ]);
  });

  it('gives mail sent outside a tenant a configuration set publishing every event to the default bus, and tells the sending functions its name', () => {
    // Arrange
    const { api, template } = build();

    // Assert
    template.resourceCountIs('AWS::SES::ConfigurationSet', 1);
    template.hasResourceProperties(
      'AWS::SES::ConfigurationSetEventDestination',
      {
        EventDestination: {
          Enabled: true,
          MatchingEventTypes: Match.arrayWith([
            'bounce',
            'complaint',
            'delivery',
            'deliveryDelay',
            'renderingFailure',
          ]),
          EventBridgeDestination: { EventBusArn: Match.anyValue() },
        },
      },
    );
    const setId = Object.keys(
      template.findResources('AWS::SES::ConfigurationSet'),
    )[0];
    const functions = template.findResources('AWS::Lambda::Function');
    const told = Object.values(functions)
      .map((fn) => fn.Properties.Environment.Variables.SES_CONFIGURATION_SET)
      .filter((value) => value !== undefined);
    // The 'me' group sends nothing: no function of this stack is told.
    expect(told).toEqual([]);
    expect(api.functions.size).toBe(1);
    expect(setId).toBeDefined();
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
