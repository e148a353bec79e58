/**
 * The queue of a consumer group, derived from its declared settings: the
 * queue and its DLQ, the trigger with partial batch responses, the grants
 * and the alarms.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { AppFunction } from '../../../infra/constructs/app-function.ts';
import {
  ConsumerQueue,
  deadLetterQueueEnv,
} from '../../../infra/constructs/consumer-queue.ts';

const settings = {
  visibilityTimeoutSeconds: 90,
  batchSize: 10,
  maxConcurrency: 4,
  maxReceiveCount: 5,
};

/** A stack with one consumer function and its queue, without bundling. */
const template = () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', {
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  const consumer = new AppFunction(stack, 'EventsConsumer', {
    entry: 'functions/me/lambda.ts',
  });
  new ConsumerQueue(stack, 'EventsQueue', {
    name: 'ses-events',
    settings,
    consumer,
  });
  return Template.fromStack(stack);
};

describe('the queue of a consumer group', () => {
  it('has a DLQ the queue redrives to after maxReceiveCount receipts, both encrypted', () => {
    // Act
    const t = template();
    // Assert
    t.resourceCountIs('AWS::SQS::Queue', 2);
    t.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 90,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        deadLetterTargetArn: Match.anyValue(),
        maxReceiveCount: 5,
      },
    });
    t.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
  });

  it('triggers the function with the declared batch size and concurrency, reporting item failures', () => {
    // Act
    const t = template();
    // Assert
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 4 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('gives the trigger the batching window a group declares, and none otherwise', () => {
    // Arrange
    const withWindow = (batchWindowSeconds?: number) => {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'Test');
      new ConsumerQueue(stack, 'Q', {
        name: 'events',
        settings: {
          ...settings,
          batchSize: 100,
          ...(batchWindowSeconds ? { batchWindowSeconds } : {}),
        },
        consumer: new AppFunction(stack, 'Fn', {
          entry: 'functions/me/lambda.ts',
        }),
      });
      return Template.fromStack(stack);
    };

    // Act
    const mapping = withWindow(2).findResources(
      'AWS::Lambda::EventSourceMapping',
    );

    // Assert
    expect(Object.values(mapping)[0]?.Properties).toMatchObject({
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 2,
    });
    expect(() => withWindow()).toThrow();
  });

  it("lets the function send to its DLQ, and tells it the DLQ's URL under the group's name", () => {
    // Act
    const t = template();
    // Assert
    expect(deadLetterQueueEnv('ses-events')).toBe(
      'DEAD_LETTER_QUEUE_URL_SES_EVENTS',
    );
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          DEAD_LETTER_QUEUE_URL_SES_EVENTS: Match.anyValue(),
        }),
      },
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(['sqs:SendMessage']),
            Effect: 'Allow',
          }),
        ]),
      },
    });
  });

  it('alarms on a dead letter, on a function error and on an old message', () => {
    // Act
    const t = template();
    // Assert
    t.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Threshold: 0,
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 90 * 5,
    });
  });
});
