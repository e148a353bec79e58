/**
 * Stream consumers in the stateless stack, derived from their
 * declarations: a function per consumer, its filtered event source mapping
 * on the table's stream, its on-failure queue and alarms, its grants.
 */
import { readFileSync } from 'node:fs';
import { App, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { consumerFunctions } from '../../functions/consumers.ts';
import { endpointGroups } from '../../functions/groups.ts';
import {
  MAX_STREAM_READERS,
  streamConsumerFunctions,
} from '../../functions/stream-consumers.ts';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import { StatelessStack } from '../../infra/stateless-stack.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON.
type Props = Record<string, any>;

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
    // The queues the stream consumers send to (journeys' steps, webhook
    // events' fan-out), and the ones those consumers send to, in turn (a
    // series step's campaign, an event's deliveries).
    consumers: consumerFunctions.filter((c) =>
      [
        'steps',
        'dispatch',
        'send',
        'webhookFanout',
        'webhookDeliveries',
        'webhookSlowDeliveries',
      ].includes(c.group.name),
    ),
  });
  const contacts = api.streamConsumers.get('contacts');
  const journeys = api.streamConsumers.get('journeys');
  if (!contacts || !journeys) {
    throw new Error('No contacts or journeys consumer');
  }
  return {
    app,
    data,
    api,
    contacts,
    journeys,
    template: Template.fromStack(api),
  };
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

describe('stream consumers in the stack', () => {
  it('declares the contacts (tag index and audience facts) and the journeys consumers', () => {
    expect(streamConsumerFunctions.map(({ group }) => group.name)).toEqual([
      'contacts',
      'journeys',
    ]);
  });

  it('reads each shard of the table stream with at most two mappings', () => {
    // Arrange
    const { template } = build();

    // Act
    const mappings = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping'),
    ).filter((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes('StreamArn'),
    );

    // Assert
    expect(MAX_STREAM_READERS).toBe(2);
    expect(mappings).toHaveLength(streamConsumerFunctions.length);
    expect(mappings.length).toBeLessThanOrEqual(MAX_STREAM_READERS);
  });

  it('maps the table stream to the contacts function: contacts inserted, modified or removed (erased), from the trim horizon', () => {
    // Arrange
    const { api, contacts, template } = build();

    // Act
    const mappings = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { FunctionName: { Ref: logicalId(api, contacts.fn.fn) } },
      }),
    );

    // Assert
    expect(mappings).toHaveLength(1);
    const properties = mappings[0]?.Properties as Props;
    expect(properties).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      MaximumRetryAttempts: 10,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // The table's stream, from the data stack.
    expect(JSON.stringify(properties.EventSourceArn)).toContain('StreamArn');
    const patterns = (properties.FilterCriteria.Filters as Props[]).map(
      (filter) => JSON.parse(filter.Pattern),
    );
    expect(patterns).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { _type: { S: ['Contact'] } } },
      },
      {
        eventName: ['REMOVE'],
        dynamodb: { OldImage: { _type: { S: ['Contact'] } } },
      },
    ]);
  });

  it('sends the batches it gives up to its own encrypted DLQ, and alarms on it', () => {
    // Arrange
    const { api, contacts, template } = build();
    const dlqId = logicalId(api, contacts.trigger.deadLetterQueue);

    // Act
    const [mapping] = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { FunctionName: { Ref: logicalId(api, contacts.fn.fn) } },
      }),
    );

    // Assert
    expect(mapping?.Properties.DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] },
        },
      ],
      Threshold: 0,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'IteratorAge',
      Statistic: 'Maximum',
    });
  });

  it('maps the table stream to the journeys function: heads, campaigns, journeys and erasures written or removed (issue 32: their webhook events)', () => {
    // Arrange
    const { api, journeys, template } = build();

    // Act
    const [mapping] = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { FunctionName: { Ref: logicalId(api, journeys.fn.fn) } },
      }),
    );
    if (!mapping) throw new Error('No mapping of the journeys function');

    // Assert: a REMOVE has only its old image to filter on.
    const patterns = (mapping.Properties.FilterCriteria.Filters as Props[]).map(
      (filter) => JSON.parse(filter.Pattern),
    );
    const types = ['Sequence', 'Campaign', 'SequenceEnrolment', 'Erasure'];
    expect(patterns).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { _type: { S: types } } },
      },
      {
        eventName: ['REMOVE'],
        dynamodb: { OldImage: { _type: { S: types } } },
      },
    ]);
  });

  it('grants the function the stream and its DLQ, and none of the table actions it does not bind', () => {
    // Arrange
    const { api, contacts, template } = build();
    const roleId = logicalId(api, contacts.fn.fn.role as never);

    // Act
    const actions = actionsOf(statementsOfRole(template, roleId));

    // Assert: enrolment reads and puts journeys, and schedules their
    // steps; the tag index writes its entries in batches.
    expect(actions).toContain('dynamodb:GetRecords');
    expect(actions).toContain('dynamodb:GetShardIterator');
    expect(actions).toContain('dynamodb:DescribeStream');
    expect(actions).toContain('sqs:SendMessage');
    expect(actions).toContain('dynamodb:PutItem');
    expect(actions).toContain('scheduler:CreateSchedule');
    expect(actions).toContain('dynamodb:BatchWriteItem');
    for (const action of ['dynamodb:UpdateItem', 'dynamodb:DeleteItem']) {
      expect(actions).not.toContain(action);
    }
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ TABLE_NAME: Match.anyValue() }),
      },
      Timeout: 30,
    });
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
