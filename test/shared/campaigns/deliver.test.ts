/**
 * The send pipeline step by step, on the embedded engine: the API's send,
 * the dispatcher and the senders called by hand with their queues captured,
 * and a mailer that records, refuses or crashes on cue. The regressions of
 * listmonk's most reported bugs are here: a resume that re-sends to
 * everyone, and a campaign marked finished with recipients never sent.
 */
import { describe, expect, it } from 'vitest';
import {
  addContact,
  unsubscribeContact,
} from '../../../shared/audience/contacts.ts';
import { createCampaign } from '../../../shared/campaigns/campaigns.ts';
import {
  type BatchMessage,
  deliverBatch,
} from '../../../shared/campaigns/deliver.ts';
import {
  batchSizeFor,
  type DispatchMessage,
  delayFor,
  dispatchCampaign,
  expectedEnd,
  lastRoundSize,
} from '../../../shared/campaigns/dispatch.ts';
import { requestSend } from '../../../shared/campaigns/send.ts';
import type { Deps } from '../../../shared/deps.ts';
import { parallelSendsFor, ratePlan } from '../../../shared/mail/pacing.ts';
import { SendRefusedError } from '../../../shared/mail/refusal.ts';
import { setSendingAllowed } from '../../../shared/organizations/organizations.ts';
import type {
  Mailer,
  OutgoingMessage,
  QueueSender,
} from '../../../shared/ports.ts';
import type { ScheduledMessage } from '../../../shared/scheduling/ports.ts';
import { createTemplate } from '../../../shared/templates/templates.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import { createTestDeps } from '../../support/dynamo.ts';

/** The deps of the whole pipeline: every campaign queue. */
type PipelineDeps = Deps & {
  queues: { dispatch: QueueSender; send: QueueSender };
};

/** A mailer that records what it accepts and acts on cue per call. */
const scriptedMailer = (
  script: (call: number, message: OutgoingMessage) => 'ok' | Error = () => 'ok',
) => {
  const accepted: OutgoingMessage[] = [];
  let calls = 0;
  const mailer: Mailer = {
    send: async (message) => {
      const cue = script(++calls, message);
      if (cue instanceof Error) throw cue;
      accepted.push(message);
      return { messageId: `msg-${calls}` };
    },
  };
  return { mailer, accepted, calls: () => calls };
};

/** A campaign to `size` subscribed contacts, its send requested. */
const pipeline = async (
  size: number,
  script?: Parameters<typeof scriptedMailer>[0],
  options: {
    /** Sends to the batch queue that fail first (a queue or a process lost). */
    lostBatchSends?: number;
    /** Schedule it at this instant instead of sending now. */
    scheduledAt?: string;
  } = {},
) => {
  const { deps: base } = await createTestDeps();
  const dispatched: DispatchMessage[] = [];
  const batches: BatchMessage[] = [];
  /** The delay each batch was queued with, in seconds (0 for none). */
  const delays: number[] = [];
  const schedules: ScheduledMessage[] = [];
  const mail = scriptedMailer(script);
  let lost = options.lostBatchSends ?? 0;
  const deps: PipelineDeps = {
    ...base,
    mailer: mail.mailer,
    scheduler: {
      schedule: async (s) => void schedules.push(s),
      cancel: async () => {},
    },
    queues: {
      dispatch: { send: async (m) => void dispatched.push(m as never) },
      send: {
        send: async (m, o) => {
          if (lost-- > 0) throw new Error('the dispatcher died');
          batches.push(m as never);
          delays.push(o?.delaySeconds ?? 0);
        },
      },
    },
  };
  const { orgId, listId } = await orgWithList(deps);
  const emails = Array.from({ length: size }, (_, i) => uniqueEmail(`r${i}`));
  // Twenty at a time: a list of 142 added one by one took most of the
  // test's time on a busy machine.
  for (let from = 0; from < size; from += 20) {
    await Promise.all(
      emails
        .slice(from, from + 20)
        .map((email) =>
          addContact(deps, orgId, listId, { email, doubleOptIn: false }),
        ),
    );
  }
  const template = await createTemplate(deps, orgId, {
    name: 'T',
    defaultSubject: 'Hello',
    content: '<a href="{{unsubscribeUrl}}">Unsubscribe</a>',
  });
  const campaign = await createCampaign(deps, orgId, {
    name: 'C',
    templateId: template.id,
    listId,
    tagId: null,
    topicId: null,
    sendingIdentityId: null,
  });
  if (options.scheduledAt) {
    await requestSend(deps, orgId, campaign.id, {
      scheduledAt: options.scheduledAt,
    });
    const fire = schedules[0]?.message as DispatchMessage | undefined;
    if (!fire) throw new Error('no schedule');
    return {
      deps,
      orgId,
      campaign,
      dispatched,
      batches,
      delays,
      mail,
      emails,
      fire,
    };
  }
  await requestSend(deps, orgId, campaign.id, {});
  const start = dispatched.shift();
  if (!start) throw new Error('no start message');
  const startError = await dispatchCampaign(deps, start).then(
    () => undefined,
    (error: unknown) => error,
  );
  return {
    deps,
    orgId,
    campaign,
    dispatched,
    batches,
    delays,
    mail,
    emails,
    start,
    startError,
  };
};

/** A deps whose clock runs `ms` ahead. */
const later = (deps: PipelineDeps, ms: number): PipelineDeps => ({
  ...deps,
  clock: { now: () => new Date(Date.now() + ms) },
});

/** The next whole minute at least ten minutes away, with an offset. */
const inTenMinutes = () => {
  const at = new Date(Date.now() + 11 * 60_000);
  at.setUTCSeconds(0, 0);
  return at.toISOString().replace('Z', '+00:00');
};

describe('the senders (never twice, resumable)', () => {
  it('a batch delivered twice sends once: the second finds the batch done (a resume never re-sends to everyone)', async () => {
    const { deps, batches, mail, orgId, campaign } = await pipeline(3);
    const [batch] = batches;
    if (!batch) throw new Error('no batch');

    await deliverBatch(deps, batch);
    await deliverBatch(deps, batch);

    expect(mail.accepted).toHaveLength(3);
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 3, failed: 0, skipped: 0 });
  });

  it('an unsubscribe that lands after the batch was handed out, before its send, is honoured: skipped, never sent', async () => {
    // Arrange: the batch is queued; then the second recipient leaves.
    const { deps, batches, mail, orgId, campaign, emails } = await pipeline(3);
    const [batch] = batches;
    const leaving = batch?.recipients[1];
    if (!batch || !leaving) throw new Error('no batch');
    await unsubscribeContact(deps, orgId, leaving.contactId);

    // Act
    await deliverBatch(deps, batch);

    // Assert
    expect(mail.accepted.map((m) => m.to)).not.toContain(leaving.email);
    expect(mail.accepted).toHaveLength(2);
    expect(emails).toContain(leaving.email);
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 2, skipped: 1 });
  });

  it('a batch of the whole list reads its range again with one strongly consistent Query (by the kilobyte), not each contact by key', async () => {
    // Arrange: the batch is queued; then the second recipient leaves.
    const { deps, batches, mail, orgId } = await pipeline(3);
    const [batch] = batches;
    const leaving = batch?.recipients[1];
    if (!batch || !leaving) throw new Error('no batch');
    await unsubscribeContact(deps, orgId, leaving.contactId);
    const reads: string[] = [];
    const spied = {
      ...deps,
      audience: {
        ...deps.audience,
        range: (...args: Parameters<typeof deps.audience.range>) => {
          reads.push(`range consistent=${args[2].consistent}`);
          return deps.audience.range(...args);
        },
      },
      contacts: {
        ...deps.contacts,
        getMany: (...args: Parameters<typeof deps.contacts.getMany>) => {
          reads.push('by key');
          return deps.contacts.getMany(...args);
        },
      },
    } as typeof deps;

    // Act
    await deliverBatch(spied, batch);

    // Assert
    expect(reads).toEqual(['range consistent=true']);
    expect(mail.accepted.map((m) => m.to)).not.toContain(leaving.email);
    expect(mail.accepted).toHaveLength(2);
  });

  it('a suppression that lands before a recipient’s send is honoured, even in the seconds before its contacts change (the suppression item alone)', async () => {
    // Arrange: as if the events consumer died between its two steps.
    const { deps, batches, mail, orgId, campaign } = await pipeline(3);
    const [batch] = batches;
    const bounced = batch?.recipients[0];
    if (!batch || !bounced) throw new Error('no batch');
    await deps.delivery.suppress(orgId, [
      {
        email: bounced.email,
        reason: 'bounce',
        at: new Date().toISOString(),
        messageId: 'ses-bounced',
      },
    ]);

    // Act
    await deliverBatch(deps, batch);

    // Assert
    expect(mail.accepted.map((m) => m.to)).not.toContain(bounced.email);
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 2, skipped: 1 });
  });

  it('a batch names its range of the list; without it (a message queued before ranges) its recipients are read again by key', async () => {
    // Arrange
    const { deps, batches, mail, orgId, campaign, emails } = await pipeline(3);
    const [batch] = batches;
    if (!batch) throw new Error('no batch');
    const sorted = [...emails].sort();

    // Act
    await deliverBatch(deps, { ...batch, range: undefined });

    // Assert
    expect(batch.range).toEqual({ after: null, last: sorted.at(-1) });
    expect(mail.accepted.map((m) => m.to).sort()).toEqual(sorted);
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 3, skipped: 0 });
  });

  it('the campaign is sent only once every batch is done, never with recipients left (listmonk’s finished-too-early bug)', async () => {
    const { deps, batches, dispatched, orgId, campaign } = await pipeline(3);
    const read = () => deps.campaigns.get(orgId, campaign.id);
    expect((await read())?.status).toBe('sending');

    const [batch] = batches;
    if (!batch) throw new Error('no batch');
    await deliverBatch(deps, batch);
    expect((await read())?.status).toBe('sending');
    const next = dispatched.shift();
    if (!next) throw new Error('no continue message');
    await dispatchCampaign(deps, next);

    expect(await read()).toMatchObject({
      status: 'sent',
      progress: { total: 3, sent: 3, failed: 0, skipped: 0 },
    });
  });

  it('a crash mid-batch after SES accepted some messages: the retry waits for the evidence, then sends only the rest', async () => {
    // Arrange: the process "dies" at the third claim: from then on nothing
    // of it reaches the store (no outcome is recorded on the way out).
    const { deps, batches, mail, orgId, campaign } = await pipeline(4);
    const [batch] = batches;
    if (!batch) throw new Error('no batch');
    let claims = 0;
    let dead = false;
    const dying = <A extends unknown[], R>(call: (...args: A) => R) => {
      return (...args: A): R => {
        if (dead) throw new Error('the process died');
        return call(...args);
      };
    };
    const crashing: PipelineDeps = {
      ...deps,
      sends: {
        ...deps.sends,
        start: deps.sends.start.bind(deps.sends),
        get: deps.sends.get.bind(deps.sends),
        save: deps.sends.save.bind(deps.sends),
        leaseBatch: deps.sends.leaseBatch.bind(deps.sends),
        completeBatch: dying(deps.sends.completeBatch.bind(deps.sends)),
        recordOutcomes: dying(deps.sends.recordOutcomes.bind(deps.sends)),
        claim: (...args) => {
          claims++;
          if (claims === 3) dead = true;
          return dying(deps.sends.claim.bind(deps.sends))(...args);
        },
      },
    };
    await expect(deliverBatch(crashing, batch)).rejects.toThrow('died');
    // The sends already under way when it died went out.
    expect(mail.accepted.length).toBeGreaterThanOrEqual(1);
    expect(mail.accepted.length).toBeLessThan(4);

    // Act 1: a retry while the dead attempt's leases run cannot decide.
    await expect(deliverBatch(later(deps, 61_000), batch)).rejects.toThrow(
      'to try again',
    );

    // Act 2: SES's events of the two messages arrive (their message ids).
    for (const [index, message] of mail.accepted.entries()) {
      const contactId = batch.recipients.find((r) => r.email === message.to)
        ?.contactId as string;
      await deps.campaignStats.recordEvent(orgId, {
        messageId: `msg-${index + 1}`,
        type: 'Send',
        recipient: message.to,
        at: new Date().toISOString(),
        kind: 'campaign',
        subject: { kind: 'campaign', campaignId: campaign.id },
        contactId,
        provider: 'other',
      });
    }
    await deliverBatch(later(deps, 130_000), batch);

    // Assert: four mails in all, each address once; progress exact.
    expect(mail.accepted.map((m) => m.to).sort()).toEqual(
      batch.recipients.map((r) => r.email).sort(),
    );
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 4, failed: 0, skipped: 0 });
  });

  it('throttling slows down and retries, never failing a recipient', async () => {
    const { deps, batches, mail, orgId, campaign } = await pipeline(
      2,
      (call) =>
        call <= 2 ? new SendRefusedError('throttled', 'slow down') : 'ok',
    );
    const [batch] = batches;
    if (!batch) throw new Error('no batch');

    await deliverBatch(deps, batch);

    expect(mail.calls()).toBe(4);
    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 2, failed: 0 });
  });

  it('a permanent refusal fails that recipient only', async () => {
    const { deps, batches, orgId, campaign } = await pipeline(3, (call) =>
      call === 2 ? new SendRefusedError('rejected', 'MessageRejected') : 'ok',
    );
    const [batch] = batches;
    if (!batch) throw new Error('no batch');

    await deliverBatch(deps, batch);

    const state = await deps.sends.get(orgId, campaign.id);
    expect(state?.progress).toMatchObject({ sent: 2, failed: 1, skipped: 0 });
  });

  it('an account-level refusal stops the campaign (failed: sending_paused) rather than burn through its recipients', async () => {
    const { deps, batches, mail, orgId, campaign } = await pipeline(
      12,
      (call) =>
        call === 2
          ? new SendRefusedError('paused', 'SendingPausedException')
          : 'ok',
    );
    const [batch] = batches;
    if (!batch) throw new Error('no batch');
    const parallel = parallelSendsFor(
      ratePlan((await deps.provider.getAccount()).maxSendRate).senderRate,
    );

    await deliverBatch(deps, batch);

    // Only the sends already under way beside the refused one went out.
    expect(mail.calls()).toBeLessThanOrEqual(2 + parallel - 1);
    expect(await deps.campaigns.get(orgId, campaign.id)).toMatchObject({
      status: 'failed',
      failure: { reason: 'sending_paused' },
      progress: { sent: mail.accepted.length },
    });
  });

  it('sending switched off application-wide mid-send fails the campaign (sending_disabled) and sends nothing more', async () => {
    const { deps, batches, mail, orgId, campaign } = await pipeline(2);
    const [batch] = batches;
    if (!batch) throw new Error('no batch');
    await deps.appSettings.setSendingEnabled(false);
    try {
      await deliverBatch(deps, batch);
    } finally {
      await deps.appSettings.setSendingEnabled(true);
    }
    expect(mail.calls()).toBe(0);
    expect(await deps.campaigns.get(orgId, campaign.id)).toMatchObject({
      status: 'failed',
      failure: { reason: 'sending_disabled' },
    });
  });
});

describe('the dispatcher (lost batches and schedule fires)', () => {
  // Its 142 contacts take 3 s alone and ~45 s beside the whole suite on two
  // cores: the limit guards against a hang, not against a busy machine.
  it('the second batch of a send waits in the queue until a second before the first should end: senders overlap by a second, not by a batch', async () => {
    // Arrange: at the local account's 14/s, one sender at 98 % of it, a
    // batch is 137 recipients.
    const rate = ratePlan(14).senderRate;
    const size = batchSizeFor(rate);
    const { deps, batches, delays, orgId, campaign } = await pipeline(size + 5);
    expect((await deps.provider.getAccount()).maxSendRate).toBe(14);

    // Assert: the first at once, ten seconds at the rate; the second
    // queued a second before the first should end (to the nearest second:
    // a few milliseconds passed between the two).
    expect(batches.map((b) => b.recipients.length)).toEqual([size, 5]);
    const state = await deps.sends.get(orgId, campaign.id);
    const first = state?.inFlight[0];
    const second = state?.inFlight[1];
    if (!first?.ends || !second?.ends) throw new Error('no ends recorded');
    expect(delays[0]).toBe(0);
    expect(Date.parse(first.ends) - Date.parse(first.at)).toBe(
      Math.trunc((size / rate) * 1000),
    );
    const handover = Date.parse(first.ends) - 1_000 - Date.parse(second.at);
    expect(handover).toBeGreaterThan(8_000);
    expect(delays[1]).toBe(Math.round(handover / 1000));
    expect(Date.parse(second.ends) - Date.parse(second.at)).toBe(
      (delays[1] ?? 0) * 1000 + Math.trunc((5 / rate) * 1000),
    );
  }, 240_000);

  it('a batch under way is expected to end later than planned: it shared the rate with the one before since it started', () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    // Planned 10 s from 4 s ago: half done at half the rate, so 8 s left.
    const underWay = {
      after: null,
      last: 'x',
      at: at(-13_000),
      starts: at(-4_000),
      ends: at(6_000),
      queued: true,
    };
    expect(expectedEnd(underWay, now)).toBe(now.getTime() + 8_000);
    // Not started yet: as planned.
    expect(
      expectedEnd({ ...underWay, starts: at(1_000), ends: at(11_000) }, now),
    ).toBe(now.getTime() + 11_000);
    // The next batch then starts a second before that end.
    expect(delayFor([underWay], 250, 25, now).delaySeconds).toBe(7);
  });

  it('a batch’s delay: none without a batch in flight or once theirs is past, their end less a tenth (at least a second), to the nearest second, at most 900 s', () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const inFlight = (endsInMs: number) => ({
      after: null,
      last: 'x',
      at: now.toISOString(),
      queued: true,
      ends: new Date(now.getTime() + endsInMs).toISOString(),
    });

    expect(delayFor([], 250, 25, now).delaySeconds).toBe(0);
    expect(delayFor([inFlight(-5_000)], 250, 25, now).delaySeconds).toBe(0);
    // Written before batches had ends: as if none were in flight.
    expect(
      delayFor([{ ...inFlight(0), ends: undefined }], 250, 25, now)
        .delaySeconds,
    ).toBe(0);
    // A 10 s batch hands over 1 s early; a 100 s one 10 s early.
    expect(delayFor([inFlight(9_400)], 250, 25, now).delaySeconds).toBe(8);
    expect(delayFor([inFlight(9_600)], 250, 25, now).delaySeconds).toBe(9);
    expect(delayFor([inFlight(100_000)], 250, 2.5, now)).toEqual({
      delaySeconds: 90,
      starts: new Date(now.getTime() + 90_000),
      ends: new Date(now.getTime() + 190_000),
    });
    // The latest end counts; SQS keeps a message at most 15 minutes.
    expect(
      delayFor([inFlight(3_000), inFlight(20_000)], 250, 25, now).delaySeconds,
    ).toBe(19);
    expect(delayFor([inFlight(3_600_000)], 250, 25, now).delaySeconds).toBe(
      900,
    );
  });

  it('a send’s last round of batches is shared evenly by its senders, so that they end together', () => {
    // 3,136 recipients, two senders, batches of 1,000: 1,000, 1,000, then
    // the 1,136 left in two of 568 (not 1,000 and 136).
    const sizes: number[] = [];
    for (let handed = 0; handed < 3_136; handed += sizes.at(-1) ?? 0) {
      sizes.push(
        Math.min(3_136 - handed, lastRoundSize(1_000, 3_136, handed, 2)),
      );
    }
    expect(sizes).toEqual([1_000, 1_000, 568, 568]);
    // Whole rounds: nothing to even out.
    expect(lastRoundSize(1_000, 10_000, 9_000, 5)).toBe(1_000);
    // Past an estimated total: the last round's size.
    expect(lastRoundSize(1_000, 7_840, 8_000, 5)).toBe(568);
    // Never below ten.
    expect(lastRoundSize(1_000, 5_003, 5_000, 5)).toBe(10);
  });

  it('a batch’s delay with several senders per send: none while a sender is free, else until the first of the busy ones should end', () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const inFlight = (endsInMs: number) => ({
      after: null,
      last: 'x',
      at: now.toISOString(),
      queued: true,
      ends: new Date(now.getTime() + endsInMs).toISOString(),
    });
    const three = [inFlight(4_000), inFlight(6_000), inFlight(8_000)];

    // Four senders, three batches: one is free.
    expect(delayFor(three, 1_000, 250, now, 4).delaySeconds).toBe(0);
    // Three senders, three batches: the first to end (4 s) less a second.
    expect(delayFor(three, 1_000, 250, now, 3).delaySeconds).toBe(3);
    // Four senders, five batches (one waiting already): the second end.
    expect(
      delayFor(
        [...three, inFlight(10_000), inFlight(12_000)],
        1_000,
        250,
        now,
        4,
      ).delaySeconds,
    ).toBe(5);
  });

  it('a send takes its block of the pacer’s lanes once, at its start: every batch carries it, a redelivered start and a batch queued again keep it', async () => {
    // Arrange: the send's first batch message is lost.
    const { deps, batches, orgId, campaign, start } = await pipeline(
      3,
      undefined,
      { lostBatchSends: 1 },
    );
    if (!start) throw new Error('no start message');
    const taken = (await deps.sends.get(orgId, campaign.id))?.laneBlock;

    // Act: the start message again, then 31 s later (the batch queued again).
    await dispatchCampaign(deps, start);
    await dispatchCampaign(later(deps, 31_000), start);

    // Assert: one block, the next send's is the next one.
    expect(taken).toBeTypeOf('number');
    expect((await deps.sends.get(orgId, campaign.id))?.laneBlock).toBe(taken);
    expect(batches.map((b) => b.laneBlock)).toEqual([taken]);
    expect(await deps.pacer.nextBlock()).toBe((taken ?? 0) + 1);
  });

  it('a crash between recording a batch and queueing it loses nobody: the batch is queued again once 30 s have passed, and sent once', async () => {
    // Arrange: the first send to the batch queue is lost.
    const {
      deps,
      batches,
      dispatched,
      mail,
      orgId,
      campaign,
      start,
      startError,
    } = await pipeline(3, undefined, { lostBatchSends: 1 });
    expect(String(startError)).toContain('died');
    expect(batches).toEqual([]);
    const recorded = await deps.sends.get(orgId, campaign.id);
    expect(recorded?.inFlight[0]?.queued).toBe(false);
    if (!start) throw new Error('no start message');

    // Act 1: the start message again at once: too early to call it lost.
    await dispatchCampaign(deps, start);
    expect(batches).toEqual([]);

    // Act 2: again 31 s later: queued, then sent, then the send ends.
    await dispatchCampaign(later(deps, 31_000), start);
    const [batch] = batches;
    if (!batch) throw new Error('the lost batch was not queued again');
    await deliverBatch(deps, batch);
    const next = dispatched.shift();
    if (!next) throw new Error('no continue message');
    await dispatchCampaign(deps, next);

    // Assert: every recipient once; the campaign sent with exact progress.
    expect(batches).toHaveLength(1);
    expect(mail.accepted).toHaveLength(3);
    expect(await deps.campaigns.get(orgId, campaign.id)).toMatchObject({
      status: 'sent',
      progress: { total: 3, sent: 3, failed: 0, skipped: 0 },
    });
  });

  it('a fire naming another send or another instant does nothing; the campaign stays scheduled until its own fire', async () => {
    // Arrange
    const { deps, batches, orgId, campaign, fire } = await pipeline(
      2,
      undefined,
      {
        scheduledAt: inTenMinutes(),
      },
    );
    if (fire?.kind !== 'fire') throw new Error('no fire message');

    // Act
    await dispatchCampaign(deps, { ...fire, sendId: 'stale-send-id' });
    await dispatchCampaign(deps, {
      ...fire,
      scheduledAt: new Date(
        Date.parse(fire.scheduledAt) + 60_000,
      ).toISOString(),
    });
    const untouched = await deps.campaigns.get(orgId, campaign.id);
    const state = await deps.sends.get(orgId, campaign.id);
    await dispatchCampaign(deps, fire);

    // Assert
    expect(untouched).toMatchObject({ status: 'scheduled' });
    expect(state).toBeUndefined();
    expect(await deps.campaigns.get(orgId, campaign.id)).toMatchObject({
      status: 'sending',
      progress: { total: 2 },
    });
    expect(batches).toHaveLength(1);
  });

  it('a fire finding the organization blocked holds the send: back to draft with lastHold blocked naming the blockers, nothing sent', async () => {
    // Arrange: taken off the allowlist after scheduling.
    const { deps, batches, mail, orgId, campaign, fire } = await pipeline(
      2,
      undefined,
      { scheduledAt: inTenMinutes() },
    );
    if (!fire) throw new Error('no fire message');
    await setSendingAllowed(deps, { orgId }, false);

    // Act
    await dispatchCampaign(deps, fire);

    // Assert
    const held = await deps.campaigns.get(orgId, campaign.id);
    expect(held).toMatchObject({
      status: 'draft',
      scheduledAt: null,
      sendId: null,
      lastHold: { reason: 'blocked', blockers: expect.any(Array) },
      progress: { total: 0 },
    });
    expect(held?.lastHold?.blockers?.length).toBeGreaterThan(0);
    expect(batches).toEqual([]);
    expect(mail.calls()).toBe(0);
  });

  it('a fire while mass sending is off application-wide holds the send: back to draft with lastHold sending_disabled', async () => {
    // Arrange
    const { deps, batches, orgId, campaign, fire } = await pipeline(
      2,
      undefined,
      {
        scheduledAt: inTenMinutes(),
      },
    );
    if (!fire) throw new Error('no fire message');
    await deps.appSettings.setSendingEnabled(false);

    // Act
    try {
      await dispatchCampaign(deps, fire);
    } finally {
      await deps.appSettings.setSendingEnabled(true);
    }

    // Assert
    expect(await deps.campaigns.get(orgId, campaign.id)).toMatchObject({
      status: 'draft',
      scheduledAt: null,
      lastHold: { reason: 'sending_disabled' },
    });
    expect(batches).toEqual([]);
  });
});
