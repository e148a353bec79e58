/**
 * Infrastructure. The trigger of one stream consumer, derived from its
 * declaration (`shared/streams/consumer.ts`): an event source mapping on
 * the table's change stream, from the oldest record still there
 * (TRIM_HORIZON), filtered to the records the consumer wants (Lambda drops
 * the others before invoking, free of charge), with partial batch
 * responses, bisection of failing batches and bounded retries; the batches
 * given up go to an on-failure queue (a DLQ of record descriptions); and
 * the alarms: a record given up, an error of the function, the consumer
 * falling behind the stream.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import {
  FilterCriteria,
  FilterRule,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import {
  DynamoEventSource,
  SqsDlq,
} from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENTITY_TYPE } from '../../shared/db/items.ts';
import type {
  StreamFilter,
  StreamSettings,
} from '../../shared/streams/consumer.ts';
import type { AppFunction } from './app-function.ts';

/** Props of a {@link StreamTrigger}. */
export interface StreamTriggerProps {
  /** The consumer's name, for alarm descriptions. */
  name: string;
  settings: StreamSettings;
  filter: StreamFilter;
  /** The table whose change stream feeds the consumer. */
  table: ITable;
  consumer: AppFunction;
}

/**
 * Seconds behind the stream (the age of the last record read) past which
 * the consumer is said to fall behind: more than its retries explain.
 */
export const ITERATOR_AGE_ALARM_SECONDS = 15 * 60;

/**
 * The filter criteria of a declared filter: the event names, and the
 * entity type of the new image (of the old one for REMOVE, which has no
 * new image). Lambda passes a record matching any of them;
 * `passesFilter` applies the same rule locally.
 */
export const filterCriteriaOf = (filter: StreamFilter) => {
  const types = { [ENTITY_TYPE]: { S: FilterRule.or(...filter.entityTypes) } };
  const written = filter.eventNames.filter((name) => name !== 'REMOVE');
  return [
    ...(written.length > 0
      ? [
          FilterCriteria.filter({
            eventName: FilterRule.or(...written),
            dynamodb: { NewImage: types },
          }),
        ]
      : []),
    ...(filter.eventNames.includes('REMOVE')
      ? [
          FilterCriteria.filter({
            eventName: FilterRule.or('REMOVE'),
            dynamodb: { OldImage: types },
          }),
        ]
      : []),
  ];
};

/** A stream consumer's mapping, on-failure queue, grants and alarms. */
export class StreamTrigger extends Construct {
  /** Where the batches given up after their retries are described. */
  readonly deadLetterQueue: Queue;
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, props: StreamTriggerProps) {
    super(scope, id);
    const { settings, consumer } = props;

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is a dead-letter queue: the on-failure destination of a stream consumer's event source mapping, which sends it the description of each batch given up.",
    });

    consumer.fn.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: settings.batchSize,
        ...(settings.batchWindowSeconds
          ? { maxBatchingWindow: Duration.seconds(settings.batchWindowSeconds) }
          : {}),
        retryAttempts: settings.retryAttempts,
        bisectBatchOnError: settings.bisectOnError,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: filterCriteriaOf(props.filter),
      }),
    );
    Validations.of(consumer).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Reading a table stream through an event source mapping needs dynamodb:ListStreams, which supports no resource-level permissions; the stream itself is read by its ARN only. So do the X-Ray actions of active tracing.',
    });

    this.alarms = [
      new Alarm(this, 'DeadLettersAlarm', {
        alarmDescription: `A batch of ${props.name} was given up after its retries (its description is in the dead-letter queue)`,
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
        alarmDescription: `The ${props.name} stream consumer failed an invocation`,
        metric: consumer.fn.metricErrors({
          period: Duration.minutes(5),
          statistic: 'Sum',
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'IteratorAgeAlarm', {
        alarmDescription: `${props.name} falls behind the table's stream (records older than its retries explain)`,
        metric: consumer.fn.metric('IteratorAge', {
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        threshold: ITERATOR_AGE_ALARM_SECONDS * 1000,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
  }
}
