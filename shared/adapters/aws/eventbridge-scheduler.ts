/**
 * The Scheduler port on EventBridge Scheduler: one one-shot `at()` schedule
 * per delivery, in the service's schedule group, targeting a consumer's SQS
 * queue with the message as input. The schedule deletes itself once it has
 * fired; what cannot be delivered after the retries goes to the scheduling
 * dead-letter queue (see `infra/constructs/schedules.ts`).
 */
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import {
  isScheduleName,
  type ScheduledMessage,
  type Scheduler,
} from '../../scheduling/ports.ts';

/** Where the schedules live and what they may reach. */
export interface EventBridgeSchedulerOptions {
  /** The schedule group of this deployment. */
  groupName: string;
  /** The role EventBridge Scheduler assumes to send to the queues. */
  roleArn: string;
  /** Where a delivery that failed all its retries goes. */
  deadLetterQueueArn: string;
  /** The ARN of each consumer queue, by its logical name (`campaigns`). */
  queueArns: Readonly<Record<string, string>>;
}

/**
 * Retries of a delivery that fails (SQS throttled, the queue or its key
 * misconfigured): the most EventBridge Scheduler allows, 185 attempts with
 * exponential back-off over up to 24 hours, so an outage or a bad deploy can
 * be fixed before the message lands in the dead-letter queue. A late
 * delivery is harmless: consumers re-check the state they act on.
 */
const RETRY_POLICY = {
  MaximumEventAgeInSeconds: 24 * 60 * 60,
  MaximumRetryAttempts: 185,
};

const MINUTE_MS = 60_000;

/**
 * The `at()` expression of `at`, in UTC. EventBridge Scheduler fires with a
 * minute's precision (a schedule for 10:00:30 may fire from 10:00:00), so
 * the time is rounded up to the next whole minute: never early, at most
 * two minutes late.
 */
export const atExpression = (at: Date): string => {
  const time = at.getTime();
  if (Number.isNaN(time)) throw new Error('A schedule needs a valid time');
  const minute = new Date(Math.ceil(time / MINUTE_MS) * MINUTE_MS);
  return `at(${minute.toISOString().slice(0, 19)})`;
};

/** Whether `error` is the SDK's service exception named `name`. */
const isNamed = (error: unknown, name: string): boolean =>
  error instanceof Error && error.name === name;

/** Schedules as EventBridge Scheduler one-shot schedules. */
export class EventBridgeScheduler implements Scheduler {
  constructor(
    private readonly client: SchedulerClient,
    private readonly options: EventBridgeSchedulerOptions,
  ) {}

  /**
   * Creates the schedule, or replaces it when one of that name exists
   * (CreateSchedule refuses with a ConflictException). Should the old one
   * vanish in between (it fired, or was cancelled), it is created again.
   */
  async schedule(s: ScheduledMessage): Promise<void> {
    const input = this.inputOf(s);
    for (let round = 1; ; round++) {
      try {
        await this.client.send(new CreateScheduleCommand(input));
        return;
      } catch (error) {
        if (!isNamed(error, 'ConflictException') || round === 2) throw error;
      }
      try {
        await this.client.send(new UpdateScheduleCommand(input));
        return;
      } catch (error) {
        if (!isNamed(error, 'ResourceNotFoundException') || round === 2) {
          throw error;
        }
      }
    }
  }

  /** Deletes the schedule; one that already fired or never was is fine. */
  async cancel(name: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteScheduleCommand({
          Name: name,
          GroupName: this.options.groupName,
        }),
      );
    } catch (error) {
      if (!isNamed(error, 'ResourceNotFoundException')) throw error;
    }
  }

  /** The full definition of a schedule: CreateSchedule and UpdateSchedule. */
  private inputOf(s: ScheduledMessage): CreateScheduleCommandInput {
    if (!isScheduleName(s.name)) {
      throw new Error(`Invalid schedule name "${s.name}"`);
    }
    const queueArn = this.options.queueArns[s.queue];
    if (!queueArn) {
      throw new Error(`No queue is bound for scheduled messages to ${s.queue}`);
    }
    const input = JSON.stringify(s.message);
    if (input === undefined) throw new Error('A scheduled message needs JSON');
    return {
      Name: s.name,
      GroupName: this.options.groupName,
      ScheduleExpression: atExpression(s.at),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      State: 'ENABLED',
      Target: {
        Arn: queueArn,
        RoleArn: this.options.roleArn,
        Input: input,
        RetryPolicy: RETRY_POLICY,
        DeadLetterConfig: { Arn: this.options.deadLetterQueueArn },
      },
    };
  }
}
