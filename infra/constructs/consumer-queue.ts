/**
 * Infrastructure. The queue of one consumer group, derived from its
 * declaration (`shared/queue/consumer.ts`): the queue and its dead-letter
 * queue (redrive after `maxReceiveCount` receipts), the SQS trigger of the
 * group's function with partial batch responses and its concurrency cap,
 * the grants (consume the queue, send to the DLQ for bad bodies) and the
 * alarms: a message in the DLQ, an error of the function, a message older
 * than it should ever get.
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deadLetterQueueEnv } from '../../shared/config.ts';
import type { QueueSettings } from '../../shared/queue/consumer.ts';
import type { AppFunction } from './app-function.ts';

/** Props of a {@link ConsumerQueue}. */
export interface ConsumerQueueProps {
  /** The group's name: the function learns its DLQ under it. */
  name: string;
  settings: QueueSettings;
  /** The group's function, triggered by the queue. */
  consumer: AppFunction;
}

export { deadLetterQueueEnv };

/** A consumer group's queue, DLQ, trigger, grants and alarms. */
export class ConsumerQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, props: ConsumerQueueProps) {
    super(scope, id);
    const { settings, consumer } = props;

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: settings.maxReceiveCount,
      },
    });

    consumer.fn.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: settings.batchSize,
        ...(settings.batchWindowSeconds
          ? { maxBatchingWindow: Duration.seconds(settings.batchWindowSeconds) }
          : {}),
        maxConcurrency: settings.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    this.deadLetterQueue.grantSendMessages(consumer.fn);
    consumer.bindEnvironment(
      deadLetterQueueEnv(props.name),
      this.deadLetterQueue.queueUrl,
    );

    this.alarms = [
      new Alarm(this, 'DeadLettersAlarm', {
        alarmDescription: `A message of ${props.name} is in its dead-letter queue`,
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'ErrorsAlarm', {
        alarmDescription: `The ${props.name} consumer failed an invocation`,
        metric: consumer.fn.metricErrors({
          period: Duration.minutes(5),
          statistic: 'Sum',
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'AgeAlarm', {
        alarmDescription: `A message of ${props.name} waits longer than its retries can explain`,
        metric: this.queue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        // Every receipt may wait a visibility timeout before the next.
        threshold: settings.visibilityTimeoutSeconds * settings.maxReceiveCount,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
  }
}
