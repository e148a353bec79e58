import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  atExpression,
  EventBridgeScheduler,
} from '../../../../shared/adapters/aws/eventbridge-scheduler.ts';

const client = new SchedulerClient({ region: 'eu-west-1' });
const scheduler = mockClient(client);

const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:campaigns';
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:schedules-dlq';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler';

const adapter = () =>
  new EventBridgeScheduler(client, {
    groupName: 'email-marketing',
    roleArn: ROLE_ARN,
    deadLetterQueueArn: DLQ_ARN,
    queueArns: { campaigns: QUEUE_ARN },
  });

const conflict = () =>
  new ConflictException({
    message: 'exists',
    Message: 'exists',
    $metadata: {},
  });
const notFound = () =>
  new ResourceNotFoundException({
    message: 'gone',
    Message: 'gone',
    $metadata: {},
  });

const delivery = {
  name: 'campaign.c1',
  at: new Date('2030-05-01T10:15:00.000Z'),
  queue: 'campaigns',
  message: { orgId: 'o1', campaignId: 'c1' },
};

/** What CreateSchedule and UpdateSchedule both receive for `delivery`. */
const definition = {
  Name: 'campaign.c1',
  GroupName: 'email-marketing',
  ScheduleExpression: 'at(2030-05-01T10:15:00)',
  ScheduleExpressionTimezone: 'UTC',
  FlexibleTimeWindow: { Mode: 'OFF' },
  ActionAfterCompletion: 'DELETE',
  State: 'ENABLED',
  Target: {
    Arn: QUEUE_ARN,
    RoleArn: ROLE_ARN,
    Input: '{"orgId":"o1","campaignId":"c1"}',
    RetryPolicy: {
      MaximumEventAgeInSeconds: 86_400,
      MaximumRetryAttempts: 185,
    },
    DeadLetterConfig: { Arn: DLQ_ARN },
  },
};

describe('schedules on EventBridge Scheduler', () => {
  beforeEach(() => scheduler.reset());

  it('creates a self-deleting one-shot schedule in UTC, sending the message to the queue', async () => {
    // Arrange
    scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    // Act
    await adapter().schedule(delivery);
    // Assert
    expect(
      scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input,
    ).toEqual(definition);
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(0);
  });

  it('replaces a schedule of the same name with the same definition', async () => {
    // Arrange
    scheduler.on(CreateScheduleCommand).rejects(conflict());
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    // Act
    await adapter().schedule(delivery);
    // Assert
    expect(
      scheduler.commandCalls(UpdateScheduleCommand)[0]?.args[0].input,
    ).toEqual(definition);
  });

  it('creates the schedule again when the old one vanishes before the update', async () => {
    // Arrange: it exists, then fires and deletes itself.
    scheduler
      .on(CreateScheduleCommand)
      .rejectsOnce(conflict())
      .resolves({ ScheduleArn: 'arn' });
    scheduler.on(UpdateScheduleCommand).rejects(notFound());
    // Act
    await adapter().schedule(delivery);
    // Assert
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(2);
  });

  it('gives up after two rounds of create and update racing each other', async () => {
    // Arrange
    scheduler.on(CreateScheduleCommand).rejects(conflict());
    scheduler.on(UpdateScheduleCommand).rejects(notFound());
    // Act
    const failure = adapter().schedule(delivery);
    // Assert
    await expect(failure).rejects.toBeInstanceOf(ConflictException);
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(2);
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(1);
  });

  it('lets any other error of the service through', async () => {
    // Arrange
    scheduler.on(CreateScheduleCommand).rejects(
      new ValidationException({
        message: 'bad',
        Message: 'bad',
        $metadata: {},
      }),
    );
    // Act
    const failure = adapter().schedule(delivery);
    // Assert
    await expect(failure).rejects.toBeInstanceOf(ValidationException);
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(0);
  });

  it('refuses a queue it knows no ARN for, an invalid name or a message that is not JSON, calling nothing', async () => {
    // Act
    const failures = [
      adapter().schedule({ ...delivery, queue: 'sequences' }),
      adapter().schedule({ ...delivery, name: 'campaign/c1' }),
      adapter().schedule({ ...delivery, message: undefined }),
      adapter().schedule({ ...delivery, at: new Date('nope') }),
    ];
    // Assert
    await expect(failures[0]).rejects.toThrow(
      'No queue is bound for scheduled messages to sequences',
    );
    await expect(failures[1]).rejects.toThrow('Invalid schedule name');
    await expect(failures[2]).rejects.toThrow('needs JSON');
    await expect(failures[3]).rejects.toThrow('needs a valid time');
    expect(scheduler.calls()).toHaveLength(0);
  });

  it('deletes the schedule on cancel', async () => {
    // Arrange
    scheduler.on(DeleteScheduleCommand).resolves({});
    // Act
    await adapter().cancel('campaign.c1');
    // Assert
    expect(
      scheduler.commandCalls(DeleteScheduleCommand)[0]?.args[0].input,
    ).toEqual({ Name: 'campaign.c1', GroupName: 'email-marketing' });
  });

  it('cancels a schedule that is not there without an error', async () => {
    // Arrange
    scheduler.on(DeleteScheduleCommand).rejects(notFound());
    // Act
    const cancelled = adapter().cancel('campaign.c1');
    // Assert
    await expect(cancelled).resolves.toBeUndefined();
  });

  it('lets another error of a cancel through', async () => {
    // Arrange
    scheduler.on(DeleteScheduleCommand).rejects(conflict());
    // Act
    const cancelled = adapter().cancel('campaign.c1');
    // Assert
    await expect(cancelled).rejects.toBeInstanceOf(ConflictException);
  });
});

describe('the at() expression', () => {
  it.each([
    ['2030-05-01T10:15:00.000Z', 'at(2030-05-01T10:15:00)'],
    ['2030-05-01T10:15:00.001Z', 'at(2030-05-01T10:16:00)'],
    ['2030-05-01T10:15:30.000Z', 'at(2030-05-01T10:16:00)'],
    ['2030-12-31T23:59:59.999Z', 'at(2031-01-01T00:00:00)'],
  ])('never fires before %s: %s', (at, expression) => {
    expect(atExpression(new Date(at))).toBe(expression);
  });
});
