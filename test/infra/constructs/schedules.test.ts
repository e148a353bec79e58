/**
 * What one-shot schedules need: the group, the execution role, the DLQ and
 * its alarm, and the grants of a function that schedules.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { AppFunction } from '../../../infra/constructs/app-function.ts';
import {
  Schedules,
  scheduleTargetEnv,
} from '../../../infra/constructs/schedules.ts';

type Props = Record<string, unknown>;

/** A stack with the schedules, a consumer queue and a function that schedules. */
const build = (
  options: { grant?: boolean; env?: { account: string; region: string } } = {},
) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', {
    env: { account: '123456789012', region: 'eu-west-1' },
    ...('env' in options ? { env: options.env } : {}),
  });
  const schedules = new Schedules(stack, 'Schedules');
  const campaigns = new Queue(stack, 'Campaigns', { enforceSSL: true });
  const other = new Queue(stack, 'Other', { enforceSSL: true });
  const fn = new AppFunction(stack, 'Scheduling', {
    entry: 'functions/me/lambda.ts',
  });
  if (options.grant !== false) {
    schedules.grantScheduling(fn, { campaigns });
  }
  return {
    app,
    stack,
    schedules,
    template: Template.fromStack(stack),
    refs: {
      campaigns: stack.resolve(campaigns.queueArn),
      other: stack.resolve(other.queueArn),
      dlq: stack.resolve(schedules.deadLetterQueue.queueArn),
      role: stack.resolve(schedules.role.roleArn),
      roleLogicalId: stack.getLogicalId(
        schedules.role.node.defaultChild as never,
      ),
    },
  };
};

/** The statements of every IAM policy attached to `roleLogicalId`. */
const statementsOf = (template: Template, roleLogicalId: string): Props[] =>
  Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes(roleLogicalId),
    )
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);

/** The logical id of the function's role. */
const functionRoleId = (template: Template): string => {
  const [id] = Object.keys(
    template.findResources('AWS::IAM::Role', {
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [
            Match.objectLike({
              Principal: { Service: 'lambda.amazonaws.com' },
            }),
          ],
        },
      },
    }),
  );
  return id ?? '';
};

describe('the schedules', () => {
  it('have a schedule group with a valid name of their own', () => {
    // Act
    const { template, schedules } = build();
    // Assert
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', {
      Name: schedules.groupName,
    });
    expect(schedules.groupName).toMatch(/^[0-9a-zA-Z_.-]{1,64}$/);
  });

  it('have an execution role only EventBridge Scheduler may assume, for this group in this account', () => {
    // Act
    const { template, schedules } = build();
    // Assert
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: {
              StringEquals: {
                'aws:SourceAccount': '123456789012',
                'aws:SourceArn': {
                  'Fn::Join': [
                    '',
                    [
                      'arn:',
                      { Ref: 'AWS::Partition' },
                      `:scheduler:eu-west-1:123456789012:schedule-group/${schedules.groupName}`,
                    ],
                  ],
                },
              },
            },
          },
        ],
      },
    });
  });

  it('have an encrypted dead-letter queue the role sends to, with an alarm on any message in it', () => {
    // Act
    const { template, refs } = build();
    // Assert
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    expect(statementsOf(template, refs.roleLogicalId)).toContainEqual(
      expect.objectContaining({
        Action: expect.arrayContaining(['sqs:SendMessage']),
        Resource: refs.dlq,
      }),
    );
    template.resourceCountIs('AWS::CloudWatch::Alarm', 1);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: Match.objectLike({ 'Fn::GetAtt': Match.anyValue() }),
        },
      ],
    });
  });

  it('let the role send to the queues they target, and to no other', () => {
    // Act
    const { template, refs } = build();
    // Assert
    const resources = statementsOf(template, refs.roleLogicalId).map(
      (statement) => statement.Resource,
    );
    expect(resources).toContainEqual(refs.campaigns);
    expect(resources).not.toContainEqual(refs.other);
    expect(resources).toHaveLength(2);
  });

  it('let a function that schedules manage the schedules of the group only, and pass the role to Scheduler only', () => {
    // Act
    const { template, schedules, refs } = build();
    // Assert
    const statements = statementsOf(template, functionRoleId(template));
    expect(statements).toContainEqual({
      Action: [
        'scheduler:CreateSchedule',
        'scheduler:UpdateSchedule',
        'scheduler:DeleteSchedule',
      ],
      Effect: 'Allow',
      Resource: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            `:scheduler:eu-west-1:123456789012:schedule/${schedules.groupName}/*`,
          ],
        ],
      },
    });
    expect(statements).toContainEqual({
      Action: 'iam:PassRole',
      Effect: 'Allow',
      Resource: refs.role,
      Condition: {
        StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      },
    });
  });

  it('tell a function that schedules the group, the role, the DLQ and its targets', () => {
    // Act
    const { template, schedules, refs } = build();
    // Assert
    expect(scheduleTargetEnv('campaigns')).toBe(
      'SCHEDULE_TARGET_QUEUE_ARN_CAMPAIGNS',
    );
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          SCHEDULE_GROUP_NAME: schedules.groupName,
          SCHEDULER_ROLE_ARN: refs.role,
          SCHEDULER_DEAD_LETTER_QUEUE_ARN: refs.dlq,
          SCHEDULE_TARGET_QUEUE_ARN_CAMPAIGNS: refs.campaigns,
        }),
      },
    });
  });

  it('grant a function that does not schedule nothing', () => {
    // Act
    const { template } = build({ grant: false });
    // Assert
    const statements = statementsOf(template, functionRoleId(template));
    expect(JSON.stringify(statements)).not.toMatch(/scheduler:|iam:PassRole/);
  });

  it.each([
    ['in an environment', { account: '123456789012', region: 'eu-west-1' }],
    ['environment-agnostic', undefined],
  ])(
    'pass the AWS Solutions checks with every exception acknowledged, %s',
    (_, env) => {
      // Arrange
      const { app } = build({ env });
      // Act
      const report = new AwsSolutionsChecks().validateScope(app);
      // Assert: the findings of the schedules and of their grants (the
      // function and the queues of the test have findings of their own).
      const ours = report.violations.filter(
        (v) =>
          v.ruleName.includes(':scheduler:') ||
          v.violatingResources.some((r) =>
            (r.constructPath ?? '').startsWith('Test/Schedules/'),
          ),
      );
      const findings = ours.map(
        (v) =>
          `${v.ruleName} at ${v.violatingResources
            .map((r) => r.constructPath)
            .join(', ')}`,
      );
      expect(findings).toEqual([]);
    },
  );
});
