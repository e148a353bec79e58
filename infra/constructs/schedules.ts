/**
 * Infrastructure. What one-shot schedules need (see
 * `shared/adapters/aws/eventbridge-scheduler.ts`): the schedule group they
 * are created in at run time, the execution role EventBridge Scheduler
 * assumes to send their messages to consumer queues, the dead-letter queue
 * of deliveries that failed all their retries and its alarm, and the grants
 * that let a function create, replace and delete schedules in the group.
 */

import {
  ArnFormat,
  Duration,
  Names,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { scheduleTargetEnv } from '../../shared/config.ts';
import type { AppFunction } from './app-function.ts';

/** The environment variable naming the queue ARN of a schedule target. */
export { scheduleTargetEnv };

/** The schedule group, its execution role, its DLQ and its alarm. */
export class Schedules extends Construct {
  /** The group's name: schedules are created in it at run time. */
  readonly groupName: string;
  readonly group: CfnScheduleGroup;
  /** The role EventBridge Scheduler assumes to deliver. */
  readonly role: Role;
  /** Deliveries that failed all their retries. */
  readonly deadLetterQueue: Queue;
  readonly alarm: Alarm;
  private readonly targets = new Set<IQueue>();

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const stack = Stack.of(this);
    // A name of our own rather than CloudFormation's: the grants and the
    // functions' environment need it, and it stays within the 64
    // characters EventBridge Scheduler allows.
    this.groupName = Names.uniqueResourceName(this, { maxLength: 64 });
    this.group = new CfnScheduleGroup(this, 'Group', { name: this.groupName });

    // Only EventBridge Scheduler, acting for this group (the source ARN
    // Scheduler gives is the schedule group's) in this account, may assume
    // the role: no confused deputy.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': stack.account,
            'aws:SourceArn': stack.formatArn({
              service: 'scheduler',
              resource: 'schedule-group',
              resourceName: this.groupName,
              arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
            }),
          },
        },
      }),
      description: `EventBridge Scheduler delivers the schedules of ${this.groupName} to their queues`,
    });

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // EventBridge Scheduler sends dead letters with the execution role.
    this.deadLetterQueue.grantSendMessages(this.role);
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is a dead-letter queue: that of the schedules, which name it in their DeadLetterConfig when they are created at run time, where cdk-nag cannot see it.',
    });

    this.alarm = new Alarm(this, 'DeadLettersAlarm', {
      alarmDescription:
        'A scheduled message could not be delivered to its queue and is in the schedules dead-letter queue',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /** Lets the schedules deliver to `queue` (SQS SendMessage). */
  allowTarget(queue: IQueue): void {
    if (this.targets.has(queue)) return;
    this.targets.add(queue);
    queue.grantSendMessages(this.role);
  }

  /**
   * Lets the function create, replace and delete schedules in the group and
   * hand them the execution role (for EventBridge Scheduler only), and tells
   * it the group (`SCHEDULE_GROUP_NAME`), the role (`SCHEDULER_ROLE_ARN`),
   * the dead-letter queue (`SCHEDULER_DEAD_LETTER_QUEUE_ARN`) and the ARN
   * of each queue its schedules target, by logical name
   * ({@link scheduleTargetEnv}); each becomes a target of the schedules.
   */
  grantScheduling(
    fn: AppFunction,
    targets: Readonly<Record<string, IQueue>> = {},
  ): void {
    fn.fn.addToRolePolicy(
      new PolicyStatement({
        actions: [
          'scheduler:CreateSchedule',
          'scheduler:UpdateSchedule',
          'scheduler:DeleteSchedule',
        ],
        resources: [this.scheduleArns()],
      }),
    );
    fn.fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: {
          StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
        },
      }),
    );
    Validations.of(fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.scheduleArnPattern()}]`,
      reason:
        'Schedules are created at run time, one per scheduled delivery (a campaign, a sequence step), so their names are not known at deploy time; the grant is limited to the schedules of this group, in this account and region.',
    });
    fn.bindEnvironment('SCHEDULE_GROUP_NAME', this.groupName);
    fn.bindEnvironment('SCHEDULER_ROLE_ARN', this.role.roleArn);
    fn.bindEnvironment(
      'SCHEDULER_DEAD_LETTER_QUEUE_ARN',
      this.deadLetterQueue.queueArn,
    );
    for (const [name, queue] of Object.entries(targets)) {
      this.allowTarget(queue);
      fn.bindEnvironment(scheduleTargetEnv(name), queue.queueArn);
    }
  }

  /** `arn:…:scheduler:<region>:<account>:schedule/<group>/*`. */
  private scheduleArns(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /**
   * The schedules' ARN as cdk-nag prints it in a finding's id: a pseudo
   * parameter where the stack's region or account is not known.
   */
  private scheduleArnPattern(): string {
    const { region, account } = Stack.of(this);
    const known = (value: string, pseudo: string) =>
      Token.isUnresolved(value) ? `<${pseudo}>` : value;
    return `arn:<AWS::Partition>:scheduler:${known(region, 'AWS::Region')}:${known(account, 'AWS::AccountId')}:schedule/${this.groupName}/*`;
  }
}
