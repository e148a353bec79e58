/**
 * The contract of the Scheduler port, run against both implementations:
 * EventBridgeScheduler over a mocked SchedulerClient that keeps schedules
 * as the service does (CreateSchedule refuses an existing name with a
 * ConflictException, UpdateSchedule and DeleteSchedule a missing one with a
 * ResourceNotFoundException), and LocalScheduler over its file. Same calls,
 * same pending schedules, same refusals: the laptop cannot drift from AWS.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeScheduler } from '../../../shared/adapters/aws/eventbridge-scheduler.ts';
import { readJsonFile } from '../../../shared/adapters/local/json-file.ts';
import { LocalScheduler } from '../../../shared/adapters/local/local-scheduler.ts';
import type { Scheduler } from '../../../shared/scheduling/ports.ts';

/** A schedule waiting to fire, as each implementation keeps it. */
interface Pending {
  /** The earliest time it may fire. */
  fireAt: Date;
  queue: string;
  body: string;
}

/** One implementation, and a view of what it has pending. */
interface Subject {
  scheduler: Scheduler;
  pending(): Promise<Map<string, Pending>>;
}

const QUEUES = ['campaigns', 'sequences'];
const arnOf = (queue: string) => `arn:aws:sqs:eu-west-1:123456789012:${queue}`;

/** EventBridgeScheduler on a mocked client with the service's semantics. */
const eventBridgeSubject = (): Subject => {
  const client = new SchedulerClient({ region: 'eu-west-1' });
  const mock = mockClient(client);
  const store = new Map<string, CreateScheduleCommandInput>();
  const exception = (type: 'conflict' | 'missing') => {
    const options = { message: type, Message: type, $metadata: {} };
    return type === 'conflict'
      ? new ConflictException(options)
      : new ResourceNotFoundException(options);
  };
  mock.on(CreateScheduleCommand).callsFake((input) => {
    if (store.has(input.Name)) throw exception('conflict');
    store.set(input.Name, input);
    return { ScheduleArn: input.Name };
  });
  mock.on(UpdateScheduleCommand).callsFake((input) => {
    if (!store.has(input.Name)) throw exception('missing');
    store.set(input.Name, input);
    return { ScheduleArn: input.Name };
  });
  mock.on(DeleteScheduleCommand).callsFake((input) => {
    if (!store.delete(input.Name)) throw exception('missing');
    return {};
  });
  const scheduler = new EventBridgeScheduler(client, {
    groupName: 'group',
    roleArn: 'arn:aws:iam::123456789012:role/scheduler',
    deadLetterQueueArn: arnOf('schedules-dlq'),
    queueArns: Object.fromEntries(QUEUES.map((q) => [q, arnOf(q)])),
  });
  return {
    scheduler,
    pending: async () =>
      new Map(
        [...store].map(([name, input]) => {
          const time = /^at\((.+)\)$/.exec(input.ScheduleExpression ?? '');
          return [
            name,
            {
              fireAt: new Date(`${time?.[1]}Z`),
              queue: input.Target?.Arn?.split(':').at(-1) ?? '',
              body: input.Target?.Input ?? '',
            },
          ];
        }),
      ),
  };
};

/** LocalScheduler on a file of its own. */
const localSubject = (dir: string): Subject => {
  const file = join(dir, `schedules-${randomUUID()}.json`);
  return {
    scheduler: new LocalScheduler(file, { queues: QUEUES }),
    pending: async () => {
      const state = (await readJsonFile(file)) as
        | {
            schedules: Record<
              string,
              { at: string; queue: string; body: string }
            >;
          }
        | undefined;
      return new Map(
        Object.entries(state?.schedules ?? {}).map(([name, s]) => [
          name,
          { fireAt: new Date(s.at), queue: s.queue, body: s.body },
        ]),
      );
    },
  };
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scheduler-contract-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const AT = new Date('2030-05-01T10:15:30.250Z');

describe.each([
  ['EventBridgeScheduler', eventBridgeSubject],
  ['LocalScheduler', () => localSubject(dir)],
])('the Scheduler contract: %s', (_, subjectOf) => {
  it('keeps a schedule for the queue with the JSON of the message, firing never before its time and within two minutes', async () => {
    // Arrange
    const { scheduler, pending } = subjectOf();
    // Act
    await scheduler.schedule({
      name: 'campaign.c1',
      at: AT,
      queue: 'campaigns',
      message: { campaignId: 'c1' },
    });
    // Assert
    const kept = (await pending()).get('campaign.c1');
    expect(kept).toMatchObject({
      queue: 'campaigns',
      body: '{"campaignId":"c1"}',
    });
    const lead = (kept?.fireAt.getTime() ?? 0) - AT.getTime();
    expect(lead).toBeGreaterThanOrEqual(0);
    expect(lead).toBeLessThan(2 * 60_000);
  });

  it('replaces a schedule of the same name, and schedules the same one twice without an error', async () => {
    // Arrange
    const { scheduler, pending } = subjectOf();
    const first = { name: 'x', at: AT, queue: 'campaigns', message: 1 };
    const later = new Date(AT.getTime() + 3_600_000);
    // Act
    await scheduler.schedule(first);
    await scheduler.schedule(first);
    await scheduler.schedule({
      ...first,
      at: later,
      queue: 'sequences',
      message: 2,
    });
    // Assert
    const all = await pending();
    expect([...all.keys()]).toEqual(['x']);
    expect(all.get('x')).toMatchObject({ queue: 'sequences', body: '2' });
    expect(all.get('x')?.fireAt.getTime()).toBeGreaterThanOrEqual(
      later.getTime(),
    );
  });

  it('cancels a schedule, and one that is not there without an error', async () => {
    // Arrange
    const { scheduler, pending } = subjectOf();
    await scheduler.schedule({
      name: 'x',
      at: AT,
      queue: 'campaigns',
      message: 1,
    });
    await scheduler.schedule({
      name: 'y',
      at: AT,
      queue: 'campaigns',
      message: 1,
    });
    // Act
    await scheduler.cancel('x');
    await scheduler.cancel('x');
    await scheduler.cancel('never');
    // Assert
    expect([...(await pending()).keys()]).toEqual(['y']);
  });

  it.each([
    [{ queue: 'events' }, 'No queue is bound for scheduled messages to events'],
    [{ name: 'a/b' }, 'Invalid schedule name "a/b"'],
    [{ name: 'a'.repeat(65) }, 'Invalid schedule name'],
    [{ message: undefined }, 'A scheduled message needs JSON'],
    [{ at: new Date(Number.NaN) }, 'A schedule needs a valid time'],
  ])('refuses %j, keeping nothing', async (change, message) => {
    // Arrange
    const { scheduler, pending } = subjectOf();
    // Act
    const failure = scheduler.schedule({
      name: 'x',
      at: AT,
      queue: 'campaigns',
      message: 1,
      ...change,
    });
    // Assert
    await expect(failure).rejects.toThrow(message);
    expect((await pending()).size).toBe(0);
  });
});
