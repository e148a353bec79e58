/**
 * A series' steps on the embedded engine: one schedule per step at its
 * instant on the calendar (the organization's time zone, daylight saving
 * included), cancelled by name; each fire re-reads the series and makes
 * one campaign sent to the list ∩ segment ∩ tag as it is at that instant,
 * through the campaign pipeline driven by hand with its queues captured.
 * Test names quote the issue's rules and the spec's ("Campaigns already
 * sent by its steps remain").
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  addContact,
  unsubscribeContact,
} from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { suppressAddress } from '../../../shared/audience/suppressed.ts';
import { createTag } from '../../../shared/audience/tags.ts';
import {
  type BatchMessage,
  deliverBatch,
} from '../../../shared/campaigns/deliver.ts';
import {
  type DispatchMessage,
  dispatchCampaign,
} from '../../../shared/campaigns/dispatch.ts';
import { keys } from '../../../shared/db/keys.ts';
import { recordSesEvent } from '../../../shared/delivery/events.ts';
import type { Deps } from '../../../shared/deps.ts';
import {
  setSendingAllowed,
  setSendingEnabled,
} from '../../../shared/organizations/organizations.ts';
import type {
  Mailer,
  OutgoingMessage,
  QueueSender,
} from '../../../shared/ports.ts';
import type { ScheduledMessage } from '../../../shared/scheduling/ports.ts';
import { CreateSegmentBody } from '../../../shared/segments/segment.schema.ts';
import { createSegment } from '../../../shared/segments/segments.ts';
import {
  createSeries,
  deleteSeries,
  updateSeries,
} from '../../../shared/sequences/heads.ts';
import { addNode, updateNode } from '../../../shared/sequences/nodes.ts';
import { publishVersion } from '../../../shared/sequences/publish.ts';
import { STEPS_QUEUE } from '../../../shared/sequences/queue.ts';
import {
  CreateNodeBody,
  CreateSeriesBody,
  UpdateNodeBody,
} from '../../../shared/sequences/sequence.schema.ts';
import {
  cancelSeriesSteps,
  type SeriesStepMessage,
  scheduleSeriesSteps,
  seriesStepScheduleName,
} from '../../../shared/sequences/series-schedule.ts';
import {
  fireSeriesStep,
  SERIES_HOLD_RETRY_MS,
  SERIES_HOLD_WINDOW_MS,
} from '../../../shared/sequences/series-steps.ts';
import { seriesCalendar } from '../../../shared/sequences/timing.ts';
import { openVersion } from '../../../shared/sequences/versions.ts';
import { createTopic, optOutOfTopic } from '../../../shared/topics/topics.ts';
import { parse } from '../../../shared/validation.ts';
import {
  createApiClient,
  createOrganizationWithKeys,
} from '../../support/api-client.ts';
import { uniqueEmail } from '../../support/audience.ts';
import { fixedClock, testEngineClient } from '../../support/dynamo.ts';

/** Before day 1: the series can be published. */
const BEFORE = '2026-10-29T12:00:00.000Z';
/** Day 1: Friday 30 October 2026, 09:00 in New York (EDT, UTC−4). */
const DAY_1 = '2026-10-30T13:00:00.000Z';
/**
 * Day 4: Monday 2 November 2026, 09:00 in New York, after the change to
 * EST (UTC−5) on Sunday 1 November: 14:00 UTC, not 13:00.
 */
const DAY_4 = '2026-11-02T14:00:00.000Z';
/** Day 5, 09:00 in New York (EST). */
const DAY_5 = '2026-11-03T14:00:00.000Z';

const CONTENT =
  '<p>Hello {{firstName}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

/** The deps of the whole pipeline, its queues and scheduler captured. */
type StackDeps = Deps & {
  queues: { dispatch: QueueSender; send: QueueSender };
};

/**
 * A client over a fresh table on a clock the test moves, an organization
 * in New York with one list, and deps whose scheduler keeps its schedules
 * by name (a schedule again replaces; a cancel deletes) and whose queues
 * and mailer record.
 */
const stack = async () => {
  const clock = fixedClock(BEFORE);
  const client = await createApiClient({ clock });
  const org = await createOrganizationWithKeys(client, 'Series Co');
  const schedules = new Map<string, ScheduledMessage>();
  const dispatched: DispatchMessage[] = [];
  const batches: BatchMessage[] = [];
  const accepted: OutgoingMessage[] = [];
  let dispatchFailures = 0;
  const mailer: Mailer = {
    send: async (message) => {
      accepted.push(message);
      return { messageId: `msg-${accepted.length}` };
    },
  };
  const deps: StackDeps = {
    ...client.deps,
    clock,
    mailer,
    scheduler: {
      schedule: async (s) => void schedules.set(s.name, s),
      cancel: async (name) => void schedules.delete(name),
    },
    queues: {
      dispatch: {
        send: async (m) => {
          if (dispatchFailures-- > 0) throw new Error('the queue is down');
          dispatched.push(m as DispatchMessage);
        },
      },
      send: { send: async (m) => void batches.push(m as BatchMessage) },
    },
  };
  const { orgId } = org;
  await deps.organizations.setTimezone(orgId, 'America/New_York');
  const list = await createList(deps, orgId, { name: 'Readers' });
  return {
    client,
    clock,
    deps,
    orgId,
    key: org.ownerKey,
    listId: list.id,
    schedules,
    dispatched,
    accepted,
    /** The next sends to the dispatcher's queue fail. */
    failDispatch: (times: number) => {
      dispatchFailures = times;
    },
    /** Runs the dispatcher and the senders until their queues are empty. */
    drain: async () => {
      for (;;) {
        const message = dispatched.shift();
        if (message) {
          await dispatchCampaign(deps, message);
          continue;
        }
        const batch = batches.shift();
        if (!batch) return;
        await deliverBatch(deps, batch);
      }
    },
    /** Adds a subscribed contact; returns its id. */
    contact: async (email: string, tags: string[] = []) =>
      (
        await addContact(deps, orgId, list.id, {
          email,
          doubleOptIn: false,
          tags,
        })
      ).contact.id,
    /** Who got mail, sorted. */
    recipients: () => accepted.map((m) => m.to).sort(),
  };
};
type Stack = Awaited<ReturnType<typeof stack>>;

/** A node of a series to build: an email (at a minute of the day) or a wait. */
type NodeSpec = { send: number | null; subject: string } | { wait: number };

/**
 * A series of the stack's list starting on day 1, with these nodes,
 * published (its version 1) and, unless `paused`, active.
 */
const publishedSeries = async (
  s: Stack,
  nodes: NodeSpec[],
  options: {
    name?: string;
    segmentId?: string;
    tagId?: string;
    topicId?: string;
    paused?: boolean;
  } = {},
) => {
  const { deps, orgId } = s;
  const created = await createSeries(
    deps,
    orgId,
    parse(CreateSeriesBody, {
      name: options.name ?? 'Autumn course',
      listId: s.listId,
      startsAt: DAY_1,
      ...(options.segmentId ? { audienceSegmentId: options.segmentId } : {}),
      ...(options.tagId ? { audienceTagId: options.tagId } : {}),
      ...(options.topicId ? { topicId: options.topicId } : {}),
    }),
  );
  const versionId = created.draftVersionId as string;
  for (const spec of nodes) {
    if ('wait' in spec) {
      await addNode(
        deps,
        orgId,
        created.id,
        versionId,
        parse(CreateNodeBody, { type: 'wait', waitHours: spec.wait }),
      );
      continue;
    }
    const node = await addNode(
      deps,
      orgId,
      created.id,
      versionId,
      parse(CreateNodeBody, { type: 'send_email' }),
    );
    await updateNode(
      deps,
      orgId,
      created.id,
      versionId,
      node.id,
      parse(UpdateNodeBody, { subject: spec.subject, content: CONTENT }),
    );
    if (spec.send !== null) {
      await updateNode(
        deps,
        orgId,
        created.id,
        versionId,
        node.id,
        parse(UpdateNodeBody, { sendTimeMinutes: spec.send }),
      );
    }
  }
  await publishVersion(deps, orgId, created.id, versionId);
  if (!options.paused) {
    await updateSeries(deps, orgId, created.id, { status: 'active' });
  }
  const head = await deps.sequences.get(orgId, created.id);
  if (!head) throw new Error('no series');
  return { series: head, seriesId: created.id, versionId };
};

/** Three steps: 09:00 on day 1, 09:00 on day 4, day 5 when the waits end. */
const THREE_STEPS: NodeSpec[] = [
  { send: 9 * 60, subject: 'Welcome {{firstName}}' },
  { wait: 72 },
  { send: 9 * 60, subject: 'Lesson two' },
  { wait: 24 },
  { send: null, subject: 'Lesson three' },
];

/** One step at 09:00 on day 1. */
const ONE_STEP: NodeSpec[] = [{ send: 9 * 60, subject: 'The news' }];

const fireOf = (
  s: Stack,
  seriesId: string,
  versionId: string,
  step: number,
): SeriesStepMessage => ({
  kind: 'seriesStep',
  orgId: s.orgId,
  seriesId,
  versionId,
  step,
});

describe('schedules: one per series step, at its instant on the calendar', () => {
  it("startsAt is day 1, each wait moves the calendar and sendTimeMinutes sets the time of day, in the organization's time zone (across the end of daylight saving time in New York)", async () => {
    // Arrange
    const s = await stack();
    const { series, seriesId, versionId } = await publishedSeries(
      s,
      THREE_STEPS,
    );

    // Act
    const scheduled = await scheduleSeriesSteps(s.deps, s.orgId, series);

    // Assert
    expect(scheduled.map((step) => step.at.toISOString())).toEqual([
      DAY_1,
      DAY_4,
      DAY_5,
    ]);
    const found = await s.deps.sequences.getVersionWithNodes(
      s.orgId,
      seriesId,
      versionId,
    );
    expect(
      seriesCalendar(
        new Date(DAY_1),
        found?.nodes ?? [],
        'America/New_York',
      ).map((step) => step.at),
    ).toEqual(scheduled.map((step) => step.at));
    expect([...s.schedules.values()]).toEqual(
      [1, 2, 3].map((step) => ({
        name: seriesStepScheduleName(s.orgId, seriesId, versionId, step),
        at: scheduled[step - 1]?.at,
        queue: STEPS_QUEUE,
        message: fireOf(s, seriesId, versionId, step),
      })),
    );
  });

  it('publish names a step whose time of day is already past on its day (startsAt later today, the step earlier): it would never be sent', async () => {
    // Arrange: now is 08:00 in New York; day 1 starts at 10:00, and the
    // first step is at 07:00 that day, the second at 07:00 the next.
    const s = await stack();
    const created = await createSeries(
      s.deps,
      s.orgId,
      parse(CreateSeriesBody, {
        name: 'Too early',
        listId: s.listId,
        startsAt: '2026-10-29T14:00:00.000Z',
      }),
    );
    const versionId = created.draftVersionId as string;
    const ids: string[] = [];
    for (const type of ['send_email', 'wait', 'send_email'] as const) {
      const node = await addNode(
        s.deps,
        s.orgId,
        created.id,
        versionId,
        parse(
          CreateNodeBody,
          type === 'wait' ? { type, waitHours: 24 } : { type },
        ),
      );
      if (type === 'wait') continue;
      ids.push(node.id);
      await updateNode(
        s.deps,
        s.orgId,
        created.id,
        versionId,
        node.id,
        parse(UpdateNodeBody, { subject: 'Hi', content: CONTENT }),
      );
      await updateNode(
        s.deps,
        s.orgId,
        created.id,
        versionId,
        node.id,
        parse(UpdateNodeBody, { sendTimeMinutes: 7 * 60 }),
      );
    }

    // Act
    const refused = await publishVersion(
      s.deps,
      s.orgId,
      created.id,
      versionId,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );

    // Assert: only the first step is named; the version stays a draft.
    expect(refused).toMatchObject({
      code: 'sequence.publishInvalid',
      details: [
        {
          field: 'nodes.0.sendTimeMinutes',
          message: expect.stringContaining(
            `node ${ids[0]} would go out at 2026-10-29T11:00:00.000Z`,
          ),
        },
      ],
    });
    expect(
      (await s.deps.sequences.get(s.orgId, created.id))?.publishedVersionId,
    ).toBeNull();
  });

  it('schedules only the steps still to come: a step whose instant has passed is not sent', async () => {
    // Arrange: published before day 1, activated on day 2.
    const s = await stack();
    const { seriesId, versionId } = await publishedSeries(s, THREE_STEPS, {
      paused: true,
    });
    s.clock.set('2026-10-31T12:00:00.000Z');
    await updateSeries(s.deps, s.orgId, seriesId, { status: 'active' });
    const series = await s.deps.sequences.get(s.orgId, seriesId);
    if (!series) throw new Error('no series');

    // Act
    const scheduled = await scheduleSeriesSteps(s.deps, s.orgId, series);

    // Assert
    expect(scheduled).toEqual([
      { step: 2, at: new Date(DAY_4) },
      { step: 3, at: new Date(DAY_5) },
    ]);
    expect([...s.schedules.keys()]).toEqual([
      seriesStepScheduleName(s.orgId, seriesId, versionId, 2),
      seriesStepScheduleName(s.orgId, seriesId, versionId, 3),
    ]);
  });

  it('a paused series schedules nothing; scheduling again replaces the same schedules (one per step, never two)', async () => {
    // Arrange
    const s = await stack();
    const paused = await publishedSeries(s, THREE_STEPS, { paused: true });
    const active = await publishedSeries(s, THREE_STEPS, { name: 'Other' });

    // Act
    const none = await scheduleSeriesSteps(s.deps, s.orgId, paused.series);
    await scheduleSeriesSteps(s.deps, s.orgId, active.series);
    await scheduleSeriesSteps(s.deps, s.orgId, active.series);

    // Assert
    expect(none).toEqual([]);
    expect(s.schedules.size).toBe(3);
    expect(
      [...s.schedules.values()].every(
        (schedule) =>
          (schedule.message as SeriesStepMessage).seriesId === active.seriesId,
      ),
    ).toBe(true);
  });

  it("cancelling removes every schedule of the version by name, without reading it (the series deleted); another version's stay", async () => {
    // Arrange
    const s = await stack();
    const gone = await publishedSeries(s, THREE_STEPS);
    const kept = await publishedSeries(s, ONE_STEP, { name: 'Kept' });
    await scheduleSeriesSteps(s.deps, s.orgId, gone.series);
    await scheduleSeriesSteps(s.deps, s.orgId, kept.series);
    await deleteSeries(s.deps, s.orgId, gone.seriesId);

    // Act
    await cancelSeriesSteps(s.deps, s.orgId, gone.seriesId, gone.versionId);

    // Assert
    expect([...s.schedules.keys()]).toEqual([
      seriesStepScheduleName(s.orgId, kept.seriesId, kept.versionId, 1),
    ]);
  });
});

describe('a fire: the step becomes one campaign, sent to its audience as it is at that instant', () => {
  /**
   * A list where only some contacts are in the audience: the segment keeps
   * the domain keep.test, the tag is VIP, the topic is News.
   */
  const audience = async (s: Stack) => {
    const { deps, orgId } = s;
    const vip = await createTag(deps, orgId, { name: 'VIP' });
    const topic = await createTopic(deps, orgId, { name: 'News' });
    const segment = await createSegment(
      deps,
      orgId,
      parse(CreateSegmentBody, {
        name: 'Keepers',
        listId: s.listId,
        match: 'all',
        conditions: [
          { field: 'emailDomain', operator: 'is', value: 'keep.test' },
        ],
      }),
    );
    const email = (name: string, domain = 'keep.test') =>
      uniqueEmail(name).replace('example.test', domain);
    const ann = email('ann');
    const out = {
      ann,
      annId: await s.contact(ann, ['VIP']),
      otherDomain: email('bob', 'other.test'),
      untagged: email('cy'),
      leaving: email('dee'),
      bouncing: email('eve'),
      declining: email('fay'),
    };
    await s.contact(out.otherDomain, ['VIP']);
    await s.contact(out.untagged);
    const leavingId = await s.contact(out.leaving, ['VIP']);
    await s.contact(out.bouncing, ['VIP']);
    const decliningId = await s.contact(out.declining, ['VIP']);
    return {
      ...out,
      email,
      tagId: vip.id,
      topicId: topic.id,
      segmentId: segment.id,
      leavingId,
      decliningId,
    };
  };

  it('goes to list ∩ segment ∩ tag at the fire: a contact who joined after day 1 gets the steps still to come; an unsubscribed, suppressed or topic-opted-out one does not', async () => {
    // Arrange: step 1 goes out on day 1.
    const s = await stack();
    const a = await audience(s);
    const { seriesId, versionId } = await publishedSeries(s, THREE_STEPS, {
      segmentId: a.segmentId,
      tagId: a.tagId,
      topicId: a.topicId,
    });
    // A tag's send walks the tag index, which follows the change stream.
    await s.client.events.settle();
    s.clock.set(DAY_1);
    const first = await fireSeriesStep(
      s.deps,
      fireOf(s, seriesId, versionId, 1),
    );
    await s.drain();
    const day1 = s.recipients();
    s.accepted.length = 0;
    // Between the steps: one joins, one leaves, one bounces, one declines.
    const late = a.email('gus');
    await s.contact(late, ['VIP']);
    await unsubscribeContact(s.deps, s.orgId, a.leavingId);
    await suppressAddress(s.deps, s.orgId, {
      email: a.bouncing,
      reason: 'bounce',
      at: DAY_1,
      messageId: 'ses-bounced',
    });
    await optOutOfTopic(s.deps, s.orgId, a.topicId, a.decliningId);
    await s.client.events.settle();

    // Act
    s.clock.set(DAY_4);
    const second = await fireSeriesStep(
      s.deps,
      fireOf(s, seriesId, versionId, 2),
    );
    await s.drain();

    // Assert
    expect(day1).toEqual([a.ann, a.leaving, a.bouncing, a.declining].sort());
    expect(s.recipients()).toEqual([a.ann, late].sort());
    expect(s.accepted.map((m) => m.subject)).toEqual([
      'Lesson two',
      'Lesson two',
    ]);
    const campaign = await s.deps.campaigns.get(s.orgId, second as string);
    expect(second).not.toBe(first);
    expect(campaign).toMatchObject({
      name: 'Autumn course — step 2',
      subject: 'Lesson two',
      templateId: null,
      listId: s.listId,
      segmentId: a.segmentId,
      tagId: a.tagId,
      topicId: a.topicId,
      sendingIdentityId: null,
      origin: { seriesId, versionId, step: 2 },
      status: 'sent',
      progress: { total: 2, sent: 2, failed: 0, skipped: 0 },
    });
  });

  it('a duplicate fire and a redelivered fire make and send nothing more: one campaign per step, one email per recipient', async () => {
    // Arrange
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    await s.contact(uniqueEmail('bob'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    const fire = fireOf(s, seriesId, versionId, 1);
    s.clock.set(DAY_1);

    // Act: two fires at once, then the pipeline, then a late duplicate.
    const [one, two] = await Promise.all([
      fireSeriesStep(s.deps, fire),
      fireSeriesStep(s.deps, fire),
    ]);
    await s.drain();
    const again = await fireSeriesStep(s.deps, fire);

    // Assert
    expect(two).toBe(one);
    expect(again).toBe(one);
    expect(s.dispatched).toEqual([]);
    expect(s.accepted).toHaveLength(2);
    const page = await s.deps.campaigns.page(
      s.orgId,
      {},
      { page: 1, limit: 10 },
    );
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({ id: one, status: 'sent' });
  });

  it('a fire that stopped after making its campaign, before its send, is completed by the redelivery: the same campaign is sent, once', async () => {
    // Arrange: the dispatcher's queue fails once, so the fire fails.
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    const fire = fireOf(s, seriesId, versionId, 1);
    s.clock.set(DAY_1);
    s.failDispatch(1);
    const failed = await fireSeriesStep(s.deps, fire).then(
      () => undefined,
      (error: unknown) => error,
    );
    const page = await s.deps.campaigns.page(
      s.orgId,
      {},
      { page: 1, limit: 10 },
    );
    const made = page.items[0];

    // Act
    const redelivered = await fireSeriesStep(s.deps, fire);
    await s.drain();

    // Assert
    expect(failed).toBeInstanceOf(Error);
    expect(made).toMatchObject({ status: 'draft', lastHold: null });
    expect(redelivered).toBe(made?.id);
    expect(s.accepted).toHaveLength(1);
    expect(
      (await s.deps.campaigns.page(s.orgId, {}, { page: 1, limit: 10 })).total,
    ).toBe(1);
  });

  it('a fire for a paused series, a deleted series or a superseded version does nothing', async () => {
    // Arrange
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    const paused = await publishedSeries(s, ONE_STEP, { name: 'Paused' });
    await updateSeries(s.deps, s.orgId, paused.seriesId, { status: 'paused' });
    const deleted = await publishedSeries(s, ONE_STEP, { name: 'Deleted' });
    await deleteSeries(s.deps, s.orgId, deleted.seriesId);
    const renewed = await publishedSeries(s, ONE_STEP, { name: 'Renewed' });
    const draft = await openVersion(s.deps, s.orgId, renewed.seriesId);
    await publishVersion(s.deps, s.orgId, renewed.seriesId, draft.id);
    s.clock.set(DAY_1);

    // Act
    const outcomes = await Promise.all(
      [paused, deleted, renewed].map(({ seriesId, versionId }) =>
        fireSeriesStep(s.deps, fireOf(s, seriesId, versionId, 1)),
      ),
    );

    // Assert
    expect(outcomes).toEqual([undefined, undefined, undefined]);
    expect(s.dispatched).toEqual([]);
    expect(
      (await s.deps.campaigns.page(s.orgId, {}, { page: 1, limit: 10 })).total,
    ).toBe(0);
  });

  it('a fire whose segment was deleted meanwhile does nothing (the audience is never widened)', async () => {
    // Arrange: the segment's item removed under the series' feet.
    const s = await stack();
    const a = await audience(s);
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP, {
      segmentId: a.segmentId,
    });
    await testEngineClient().send(
      new DeleteCommand({
        TableName: s.client.tableName,
        Key: keys.segment(s.orgId, a.segmentId),
      }),
    );
    s.clock.set(DAY_1);

    // Act
    const outcome = await fireSeriesStep(
      s.deps,
      fireOf(s, seriesId, versionId, 1),
    );

    // Assert
    expect(outcome).toBeUndefined();
    expect(s.dispatched).toEqual([]);
    expect(
      (await s.deps.campaigns.page(s.orgId, {}, { page: 1, limit: 10 })).total,
    ).toBe(0);
  });

  it('a step held by the switch stays a draft saying why (lastHold) and is tried again an hour later (the same schedule name): once sending is back the retry sends it, once', async () => {
    // Arrange
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    await setSendingEnabled(s.deps, false);
    s.clock.set(DAY_1);
    const fire = fireOf(s, seriesId, versionId, 1);
    const name = seriesStepScheduleName(s.orgId, seriesId, versionId, 1);
    s.schedules.clear();

    // Act: the fire is held; its retry is scheduled an hour later.
    const id = await fireSeriesStep(s.deps, fire);
    const retry = s.schedules.get(name);

    // Assert
    expect(s.dispatched).toEqual([]);
    expect(await s.deps.campaigns.get(s.orgId, id as string)).toMatchObject({
      status: 'draft',
      lastHold: { reason: 'sending_disabled', at: DAY_1 },
    });
    expect(retry?.at.toISOString()).toBe(
      new Date(Date.parse(DAY_1) + SERIES_HOLD_RETRY_MS).toISOString(),
    );
    expect(retry?.message).toEqual(fire);

    // Act: sending is back; the retry fires (twice: a duplicate).
    await setSendingEnabled(s.deps, true);
    s.schedules.clear();
    s.clock.set(retry?.at.toISOString() as string);
    const again = await fireSeriesStep(s.deps, fire);
    const duplicate = await fireSeriesStep(s.deps, fire);
    await s.drain();

    // Assert: the same campaign, sent once; no further retry.
    expect(again).toBe(id);
    expect(duplicate).toBe(id);
    expect(s.accepted).toHaveLength(1);
    expect(s.schedules.size).toBe(0);
    expect(
      (await s.deps.campaigns.get(s.orgId, id as string))?.status,
    ).not.toBe('draft');
  });

  it('a step still held a day after its campaign was made is tried no more: the campaign stays a draft saying why, to be sent by hand', async () => {
    // Arrange
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    await setSendingEnabled(s.deps, false);
    s.clock.set(DAY_1);
    const fire = fireOf(s, seriesId, versionId, 1);
    const id = await fireSeriesStep(s.deps, fire);

    // Act: the retries come hourly while sending stays off.
    let retries = 0;
    for (;;) {
      const next = s.schedules.get(
        seriesStepScheduleName(s.orgId, seriesId, versionId, 1),
      );
      if (!next) break;
      s.schedules.clear();
      s.clock.set(next.at.toISOString());
      await fireSeriesStep(s.deps, fire);
      retries++;
      if (retries > 30) throw new Error('retried forever');
    }

    // Assert: tried hourly for a day (the last retry 24 hours after the
    // first fire), then left.
    expect(retries).toBe(SERIES_HOLD_WINDOW_MS / SERIES_HOLD_RETRY_MS);
    expect(s.dispatched).toEqual([]);
    expect(await s.deps.campaigns.get(s.orgId, id as string)).toMatchObject({
      status: 'draft',
      lastHold: { reason: 'sending_disabled' },
    });
  });

  it('a step of an organization that cannot send (readiness) stays a draft saying which blockers (lastHold blocked); nothing is queued', async () => {
    // Arrange
    const s = await stack();
    await s.contact(uniqueEmail('ann'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    await setSendingAllowed(s.deps, { orgId: s.orgId }, false);
    s.clock.set(DAY_1);

    // Act
    const id = await fireSeriesStep(s.deps, fireOf(s, seriesId, versionId, 1));

    // Assert
    expect(s.dispatched).toEqual([]);
    expect(await s.deps.campaigns.get(s.orgId, id as string)).toMatchObject({
      status: 'draft',
      lastHold: {
        reason: 'blocked',
        at: DAY_1,
        blockers: expect.arrayContaining(['organization_not_allowed']),
      },
    });
  });

  it('the campaign is read through GET /campaigns with its origin; its stats are the campaign’s; deleting the series leaves it (campaigns already sent by its steps remain)', async () => {
    // Arrange
    const s = await stack();
    const annId = await s.contact(uniqueEmail('ann'));
    await s.contact(uniqueEmail('bob'));
    const { seriesId, versionId } = await publishedSeries(s, ONE_STEP);
    s.clock.set(DAY_1);
    const id = (await fireSeriesStep(
      s.deps,
      fireOf(s, seriesId, versionId, 1),
    )) as string;
    await s.drain();
    const toAnn = s.accepted.findIndex((m) => m.tags?.contact === annId);
    const annMail = s.accepted[toAnn];
    if (!annMail) throw new Error('no mail to ann');
    // The step's campaign names its series and step, for the activity.
    expect(annMail.tags).toMatchObject({
      campaign: id,
      sequence: seriesId,
      step: '1',
    });
    await recordSesEvent(s.deps, {
      eventType: 'Delivery',
      mail: {
        messageId: `msg-${toAnn + 1}`,
        timestamp: DAY_1,
        destination: [annMail.to],
        tags: {
          org: [s.orgId],
          kind: ['campaign'],
          contact: [annId],
          campaign: [id],
        },
      },
      delivery: { timestamp: DAY_1, recipients: [annMail.to] },
    });
    await deleteSeries(s.deps, s.orgId, seriesId);

    // Act
    const list = await s.client.get('/campaigns', { key: s.key });
    const one = await s.client.get(`/campaigns/${id}`, { key: s.key });
    const stats = await s.client.get(`/campaigns/${id}/stats`, {
      key: s.key,
    });

    // Assert
    const origin = { seriesId, versionId, step: 1 };
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([
      expect.objectContaining({
        id,
        name: 'Autumn course — step 1',
        status: 'sent',
        origin,
        templateId: null,
      }),
    ]);
    expect(one.json.data).toMatchObject({
      origin,
      recipientCount: 2,
      progress: { total: 2, sent: 2 },
    });
    expect(stats.status).toBe(200);
    expect(stats.json.data).toMatchObject({
      campaignId: id,
      recipients: 2,
      sent: 2,
      delivered: 1,
    });
  });
});
