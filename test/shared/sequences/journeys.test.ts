/**
 * Journeys on the embedded engine: enrolment from the committed facts
 * (the table's stream, caught up by hand), each step run through the
 * `steps` consumer's own handler with the scheduler, the steps queue and
 * the mailer captured — and the failures the issue names injected: a
 * duplicate fire, a redelivered message, a crash mid-step.
 */
import { describe, expect, it } from 'vitest';
import { unsubscribeContact } from '../../../shared/audience/contacts.ts';
import { tagContact, untagContact } from '../../../shared/audience/tags.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { SendRefusedError } from '../../../shared/mail/refusal.ts';
import { setSendingEnabled } from '../../../shared/organizations/organizations.ts';
import { enrolFromEvents } from '../../../shared/sequences/enrolment.ts';
import {
  createSeries,
  deleteSequence,
  deleteSeries,
  updateSequence,
} from '../../../shared/sequences/heads.ts';
import { updateNode } from '../../../shared/sequences/nodes.ts';
import { publishVersion } from '../../../shared/sequences/publish.ts';
import { STEP_LEASE_MS } from '../../../shared/sequences/run-step.ts';
import { seriesStepScheduleName } from '../../../shared/sequences/series-schedule.ts';
import {
  type StepMessage,
  stepScheduleName,
} from '../../../shared/sequences/step-schedule.ts';
import { openVersion } from '../../../shared/sequences/versions.ts';
import { updateSendingSettings } from '../../../shared/settings/settings.ts';
import { createTopic, optOutOfTopic } from '../../../shared/topics/topics.ts';
import {
  activeSequence,
  fillDraft,
  join,
  journeyOf,
  subjects,
  journeyWorld as world,
} from '../../support/journeys.ts';

const HOUR = 3_600_000;

describe('enrolment (sequences rules: list_joined, tag_added)', () => {
  it('a single add enrols the contact in the list’s active sequence, on its published version, with its first step due', async () => {
    const w = await world();
    const { sequenceId, versionId } = await activeSequence(w);

    const contact = await join(w);

    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      status: 'active',
      versionId,
      position: 0,
      sent: 0,
    });
    // The first step has no wait: its message goes to the queue at once.
    expect(w.queued.filter((m) => (m as StepMessage).kind === 'step')).toEqual([
      {
        kind: 'step',
        orgId: w.orgId,
        sequenceId,
        contactId: contact.id,
        position: 0,
      },
    ]);
  });

  it('a repeated fact is a no-op: one journey, one first step', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const event = w.events.published.find(
      (e) => e.type === 'contact.joinedList' && e.contactId === contact.id,
    );
    if (!event) throw new Error('no event');

    const created = await enrolFromEvents(w.deps as never, [event, event]);
    await w.run();

    expect(created).toBe(0);
    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey?.sent).toBe(1);
  });

  it('a paused sequence enrols nobody', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    await updateSequence(w.deps, w.orgId, sequenceId, { status: 'paused' });

    const contact = await join(w);

    expect(await journeyOf(w, sequenceId, contact.id)).toBeUndefined();
  });

  it('a tag enrols in the tag_added sequence; a second tagging after the journey ended does not restart it', async () => {
    const w = await world();
    const contact = await join(w);
    const tagged = await tagContact(w.deps, w.orgId, contact.id, {
      name: 'vip',
    });
    const tagId = tagged.tag.id;
    const { sequenceId } = await activeSequence(w, { tagId, steps: 1 });
    await untagContact(w.deps, w.orgId, contact.id, tagId);
    await w.events.settle();

    await tagContact(w.deps, w.orgId, contact.id, { name: 'vip' });
    await w.events.settle();
    await w.run();
    await untagContact(w.deps, w.orgId, contact.id, tagId);
    await tagContact(w.deps, w.orgId, contact.id, { name: 'vip' });
    await w.events.settle();
    await w.run();

    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({ status: 'completed', sent: 1 });
  });
});

describe('steps (each sent once, on time, to the right people)', () => {
  it('runs a journey through: each step once, the next scheduled after its wait, then completed', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w, { hours: 48 });
    const contact = await join(w);

    await w.run();
    const name = stepScheduleName(w.orgId, sequenceId, contact.id, 2);
    const next = w.schedules.get(name);
    expect(subjects(w)).toEqual(['Step 1']);
    expect(next?.at.getTime()).toBe(w.now().getTime() + 48 * HOUR);
    expect(next?.message).toMatchObject({ kind: 'step', position: 2 });

    w.advance(48 * HOUR);
    await w.run();
    w.advance(48 * HOUR);
    await w.run();

    expect(subjects(w)).toEqual(['Step 1', 'Step 2', 'Step 3']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({ status: 'completed', sent: 3 });
    expect(w.mail.accepted[0]?.tags).toMatchObject({
      org: w.orgId,
      kind: 'sequence',
      contact: contact.id,
      sequence: sequenceId,
      step: '1',
    });
    // Each step names its number, as the contact's activity shows it.
    expect(w.mail.accepted.map((m) => m.tags?.step)).toEqual(['1', '2', '3']);
    expect(w.mail.accepted[0]?.html).toContain('unsubscribe');
  });

  it('a duplicate fire sends once: the second finds the position moved on', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued[0] as StepMessage;

    await w.handle(fire);
    await w.handle(fire);

    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey?.position).toBe(2);
  });

  it('two fires at once send once: the claim lets one through, the other is retried and finds the step done', async () => {
    const w = await world();
    await activeSequence(w);
    await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;

    const outcomes = await Promise.allSettled([w.handle(fire), w.handle(fire)]);
    const retried = outcomes.filter((o) => o.status === 'rejected').length;
    for (let i = 0; i < retried; i++) await w.handle(fire);

    expect(subjects(w)).toEqual(['Step 1']);
  });

  it('a crash while the provider is called never sends the step again: after the claim expires it is recorded uncertain and the journey goes on', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;
    // SES took the message, and the answer never came back.
    w.mail.onCall((call) => (call === 1 ? new Error('socket hang up') : 'ok'));

    await expect(w.handle(fire)).rejects.toThrow();
    // Redelivered while the claim is held: tried again later.
    await expect(w.handle(fire)).rejects.toThrow(/being sent/);
    w.advance(STEP_LEASE_MS + 1000);
    await w.handle(fire);

    expect(w.mail.accepted).toHaveLength(0);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      position: 2,
      lastStep: { position: 0, outcome: 'uncertain' },
    });
    expect(
      w.schedules.has(stepScheduleName(w.orgId, sequenceId, contact.id, 2)),
    ).toBe(true);
  });

  it('a failure after the claim, before the provider is called (the pacer contended), lets the claim go: the redelivery sends the step', async () => {
    // Arrange
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;
    const reserve = w.deps.pacer.reserve.bind(w.deps.pacer);
    let reserves = 0;
    w.deps.pacer.reserve = async (...args) => {
      if (++reserves === 1) {
        throw new ConflictError(
          'write.contended',
          'The send pacer moved meanwhile',
        );
      }
      return reserve(...args);
    };

    // Act
    await expect(w.handle(fire)).rejects.toThrow('pacer moved');
    await w.handle(fire);

    // Assert
    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      position: 2,
      lastStep: { position: 0, outcome: 'sent' },
    });
  });

  it('a crash after the send, before the journey moved on, sends nothing more on redelivery', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;
    const update = w.deps.enrolments.update.bind(w.deps.enrolments);
    let updates = 0;
    w.deps.enrolments.update = async (...args) => {
      // The claim is the first write; the second (moving on) dies.
      if (++updates === 2) throw new Error('the consumer died');
      return update(...args);
    };

    await expect(w.handle(fire)).rejects.toThrow('the consumer died');
    w.deps.enrolments.update = update;
    w.advance(STEP_LEASE_MS + 1000);
    await w.handle(fire);

    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey?.position).toBe(2);
  });

  it('a claim written on the first attempt but answered as a failed condition (a retried write) is recognised as ours: the step is sent once', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;
    const update = w.deps.enrolments.update.bind(w.deps.enrolments);
    let updates = 0;
    w.deps.enrolments.update = async (...args) => {
      await update(...args);
      // The claim went through; its answer was lost, the retry refused.
      if (++updates === 1) {
        throw new ConflictError('sequence.changed', 'retried write refused');
      }
    };

    await w.handle(fire);

    expect(subjects(w)).toEqual(['Step 1']);
    expect((await journeyOf(w, sequenceId, contact.id))?.position).toBe(2);
  });

  it('a crash after the journey moved on, before its next step was scheduled: the redelivered message schedules it, and sends nothing', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const fire = w.queued.splice(0)[0] as StepMessage;
    w.failNextSchedules(1);

    await expect(w.handle(fire)).rejects.toThrow('the scheduler is down');
    await w.handle(fire);

    expect(subjects(w)).toEqual(['Step 1']);
    expect(
      w.schedules.has(stepScheduleName(w.orgId, sequenceId, contact.id, 2)),
    ).toBe(true);
  });

  it('the contact is read again at each step: unsubscribed ends the journey with its reason, and nothing more is sent', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    await w.run();

    await unsubscribeContact(w.deps, w.orgId, contact.id);
    w.advance(24 * HOUR);
    await w.run();

    expect(subjects(w)).toEqual(['Step 1']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      status: 'exited',
      exitReason: 'unsubscribed',
    });
  });

  it('a suppressed address ends the journey (suppressed)', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    await w.deps.delivery.suppress(w.orgId, [
      {
        email: contact.email,
        reason: 'bounce',
        at: w.now().toISOString(),
        messageId: 'earlier',
      },
    ]);

    await w.run();

    expect(w.mail.accepted).toHaveLength(0);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey?.exitReason).toBe('suppressed');
  });

  it('a topic opt-out skips that step and the journey goes on', async () => {
    const w = await world();
    const topic = await createTopic(w.deps, w.orgId, { name: 'Tips' });
    const { sequenceId } = await activeSequence(w, { topicId: topic.id });
    const contact = await join(w);
    await optOutOfTopic(w.deps, w.orgId, topic.id, contact.id);

    await w.run();

    expect(w.mail.accepted).toHaveLength(0);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      status: 'active',
      position: 2,
      skipped: 1,
      lastStep: { position: 0, outcome: 'skipped' },
    });
  });

  it('a step that cannot go out (sending off application-wide) waits an hour and is tried again; nothing is lost', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    await setSendingEnabled(w.deps, false);
    try {
      await w.run();
      const held = await journeyOf(w, sequenceId, contact.id);
      expect(w.mail.accepted).toHaveLength(0);
      expect(held).toMatchObject({
        position: 0,
        lastHold: { reason: 'sending_disabled' },
      });

      await setSendingEnabled(w.deps, true);
      w.advance(HOUR);
      await w.run();

      expect(subjects(w)).toEqual(['Step 1']);
    } finally {
      await setSendingEnabled(w.deps, true);
    }
  });

  it('a step of an organization the reputation guardrail paused waits (held, blocked) and goes out once the operator lifts it (issue 33 §2)', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const window = {
      sends: 1_000,
      hardBounces: 50,
      complaints: 0,
      hours: 24,
      bounceRate: 0.05,
      complaintRate: 0,
    };
    await w.deps.organizations.setGuardrail(w.orgId, {
      cause: 'bounces',
      at: w.deps.clock.now().toISOString(),
      window,
      threshold: 0.04,
    });

    await w.run();
    const held = await journeyOf(w, sequenceId, contact.id);
    await w.deps.organizations.clearGuardrail(w.orgId);
    w.advance(HOUR);
    await w.run();

    expect(held).toMatchObject({
      status: 'active',
      position: 0,
      lastHold: { reason: 'blocked' },
    });
    expect(subjects(w)).toEqual(['Step 1']);
  });

  it('a refusal of the provider for this address fails the step, and the journey goes on', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    w.mail.onCall(() => new SendRefusedError('rejected', 'MessageRejected'));

    await w.run();

    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(journey).toMatchObject({
      position: 2,
      lastStep: { outcome: 'failed' },
    });
  });

  it('sendTimeMinutes waits for that minute in the organization’s time zone', async () => {
    const w = await world();
    await updateSendingSettings(w.deps, w.orgId, {
      timezone: 'America/New_York',
    } as never);
    const { sequenceId } = await activeSequence(w, {
      steps: 1,
      sendTimeMinutes: 9 * 60,
    });

    const contact = await join(w);

    const journey = await journeyOf(w, sequenceId, contact.id);
    const due = new Date(journey?.dueAt as string);
    const local = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(due);
    expect(local).toBe('09:00');
    expect(due.getTime()).toBeGreaterThanOrEqual(w.now().getTime() - 1000);
    expect(due.getTime() - w.now().getTime()).toBeLessThanOrEqual(24 * HOUR);
  });
});

describe('versions, pause and delete (sequence status rules)', () => {
  it('a journey stays on the version it entered; new journeys take the latest published version', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const first = await join(w, 'early');
    await w.run();
    const draft = await openVersion(w.deps, w.orgId, sequenceId);
    const head = await w.deps.sequences.get(w.orgId, sequenceId);
    const nodes = (
      await w.deps.sequences.getVersionWithNodes(w.orgId, sequenceId, draft.id)
    )?.nodes;
    for (const node of nodes ?? []) {
      if (node.type === 'send_email') {
        await updateNode(w.deps, w.orgId, sequenceId, draft.id, node.id, {
          subject: `New ${node.subject}`,
        });
      }
    }
    await publishVersion(w.deps, w.orgId, sequenceId, draft.id);
    expect(head?.draftVersionId).toBe(draft.id);

    const second = await join(w, 'late');
    await w.run();
    w.advance(24 * HOUR);
    await w.run();

    const byContact = (id: string) =>
      w.mail.accepted
        .filter((m) => m.tags?.contact === id)
        .map((m) => m.subject);
    expect(byContact(first.id)).toEqual(['Step 1', 'Step 2']);
    expect(byContact(second.id)).toEqual(['New Step 1', 'New Step 2']);
  });

  it('paused: a step that falls due waits; on resume it is sent once, then the next at normal spacing (no pile-up)', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    await w.run();
    await updateSequence(w.deps, w.orgId, sequenceId, { status: 'paused' });
    await w.events.settle();

    // Steps 2 and 3 would both have come due during a long pause.
    w.advance(24 * HOUR);
    await w.run();
    w.advance(72 * HOUR);
    await w.run();
    expect(subjects(w)).toEqual(['Step 1']);
    expect((await journeyOf(w, sequenceId, contact.id))?.waiting).toBe(true);

    await updateSequence(w.deps, w.orgId, sequenceId, { status: 'active' });
    await w.events.settle();
    await w.run();
    await w.run();

    expect(subjects(w)).toEqual(['Step 1', 'Step 2']);
    const journey = await journeyOf(w, sequenceId, contact.id);
    expect(new Date(journey?.dueAt as string).getTime()).toBe(
      w.now().getTime() + 24 * HOUR,
    );
    w.advance(24 * HOUR);
    await w.run();
    expect(subjects(w)).toEqual(['Step 1', 'Step 2', 'Step 3']);
  });

  it('deleted: no step is sent once DELETE answered; the cleanup cancels each schedule and removes the journeys', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    await w.run();
    const pending = stepScheduleName(w.orgId, sequenceId, contact.id, 2);
    const fire = w.schedules.get(pending)?.message;

    await deleteSequence(w.deps, w.orgId, sequenceId);
    // A fire already on its way when the delete answered.
    await w.handle(fire);
    await w.events.settle();
    await w.run();

    expect(subjects(w)).toEqual(['Step 1']);
    expect(w.cancelled).toContain(pending);
    expect(w.schedules.has(pending)).toBe(false);
    expect(await journeyOf(w, sequenceId, contact.id)).toBeUndefined();
  });

  it('deleted while a step is under way (its claim taken, the provider not called yet): the step is withdrawn, nothing is sent', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const reserve = w.deps.pacer.reserve.bind(w.deps.pacer);
    let deleted = false;
    w.deps.pacer.reserve = async (...args) => {
      // The DELETE commits while this step waits for its instant.
      if (!deleted) {
        deleted = true;
        await deleteSequence(w.deps, w.orgId, sequenceId);
      }
      return reserve(...args);
    };
    await w.run();

    expect(deleted).toBe(true);
    expect(subjects(w)).toEqual([]);
    await w.events.settle();
    await w.run();
    expect(subjects(w)).toEqual([]);
    expect(await journeyOf(w, sequenceId, contact.id)).toBeUndefined();
  });

  it('paused while a step is under way: the step is withdrawn and waits; on resume it is sent once', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const contact = await join(w);
    const reserve = w.deps.pacer.reserve.bind(w.deps.pacer);
    let paused = false;
    w.deps.pacer.reserve = async (...args) => {
      if (!paused) {
        paused = true;
        await updateSequence(w.deps, w.orgId, sequenceId, {
          status: 'paused',
        });
      }
      return reserve(...args);
    };
    await w.run();

    expect(subjects(w)).toEqual([]);
    const waiting = await journeyOf(w, sequenceId, contact.id);
    expect(waiting).toMatchObject({ waiting: true, claim: null, sent: 0 });
    expect(waiting?.position).toBe(0);

    await updateSequence(w.deps, w.orgId, sequenceId, { status: 'active' });
    await w.events.settle();
    await w.run();
    await w.run();
    expect(subjects(w)).toEqual(['Step 1']);
  });

  it('deleted between finding the sequence and writing the journey: no journey stays, no step is scheduled', async () => {
    const w = await world();
    const { sequenceId } = await activeSequence(w);
    const create = w.deps.enrolments.create.bind(w.deps.enrolments);
    w.deps.enrolments.create = async (orgId, enrolment) => {
      await deleteSequence(w.deps, orgId, enrolment.sequenceId);
      return create(orgId, enrolment);
    };
    const contact = await join(w);

    expect(await journeyOf(w, sequenceId, contact.id)).toBeUndefined();
    expect(
      w.schedules.has(stepScheduleName(w.orgId, sequenceId, contact.id, 0)),
    ).toBe(false);
    expect(w.queued.filter((m) => (m as StepMessage).kind === 'step')).toEqual(
      [],
    );
    await w.run();
    expect(subjects(w)).toEqual([]);
  });
});

describe('series schedules follow the head (Series, Sequence and series status)', () => {
  it('activating schedules each step on the calendar; pausing cancels them; a fire makes the step’s one campaign and starts its send', async () => {
    const w = await world();
    const startsAt = new Date(w.now().getTime() + 2 * 24 * HOUR);
    const series = await createSeries(w.deps, w.orgId, {
      name: 'Course',
      listId: w.listId,
      startsAt: startsAt.toISOString(),
      audienceSegmentId: null,
      audienceTagId: null,
      topicId: null,
    });
    const head = await w.deps.sequences.get(w.orgId, series.id);
    const versionId = head?.draftVersionId as string;
    await fillDraft(w.deps, w.orgId, series.id, versionId, 'Lesson', {
      steps: 2,
    });
    await publishVersion(w.deps, w.orgId, series.id, versionId);
    const names = [1, 2].map((step) =>
      seriesStepScheduleName(w.orgId, series.id, versionId, step),
    );

    await updateSequence(w.deps, w.orgId, series.id, { status: 'active' });
    await w.events.settle();
    expect(names.map((name) => w.schedules.get(name)?.at.getTime())).toEqual([
      startsAt.getTime(),
      startsAt.getTime() + 24 * HOUR,
    ]);

    await updateSequence(w.deps, w.orgId, series.id, { status: 'paused' });
    await w.events.settle();
    expect(names.filter((name) => w.schedules.has(name))).toEqual([]);
    expect(w.cancelled).toEqual(expect.arrayContaining(names));

    await updateSequence(w.deps, w.orgId, series.id, { status: 'active' });
    await w.events.settle();
    await join(w);
    const fire = w.schedules.get(names[0] as string)?.message;
    w.advance(2 * 24 * HOUR);
    await w.handle(fire);
    await w.handle(fire);

    const campaignId = await w.deps.campaigns.ofSeriesStep(w.orgId, {
      seriesId: series.id,
      versionId,
      step: 1,
    });
    const campaign = await w.deps.campaigns.get(w.orgId, campaignId ?? '');
    expect(campaign).toMatchObject({
      name: 'Course — step 1',
      subject: 'Lesson 1',
      listId: w.listId,
      status: 'sending',
    });
    expect(w.dispatched).toHaveLength(1);
  });

  it('deleting an active series cancels its schedules; a late fire does nothing', async () => {
    const w = await world();
    const startsAt = new Date(w.now().getTime() + 24 * HOUR);
    const series = await createSeries(w.deps, w.orgId, {
      name: 'Gone',
      listId: w.listId,
      startsAt: startsAt.toISOString(),
      audienceSegmentId: null,
      audienceTagId: null,
      topicId: null,
    });
    const versionId = (await w.deps.sequences.get(w.orgId, series.id))
      ?.draftVersionId as string;
    await fillDraft(w.deps, w.orgId, series.id, versionId, 'Day', {
      steps: 1,
    });
    await publishVersion(w.deps, w.orgId, series.id, versionId);
    await updateSequence(w.deps, w.orgId, series.id, { status: 'active' });
    await w.events.settle();
    const name = seriesStepScheduleName(w.orgId, series.id, versionId, 1);
    const fire = w.schedules.get(name)?.message;

    await deleteSeries(w.deps, w.orgId, series.id);
    await w.events.settle();
    w.advance(24 * HOUR);
    await w.handle(fire);

    expect(w.schedules.has(name)).toBe(false);
    expect(w.dispatched).toHaveLength(0);
  });
});
