/**
 * Journeys end to end, on a local stack started as a user starts it: the
 * API writes, the table's stream enrols, the steps consumer sends, the
 * mail lands in the mailbox, and the local clock moves time for the waits.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from '../support/local-stack.ts';
import {
  confirmationLinkOf,
  mailTo,
  type StoredEmail,
} from '../support/mailbox.ts';

/** Polls the mailbox until `address` holds `count` emails (or 30 s pass). */
const waitForMail = async (
  stack: RunningStack,
  address: string,
  count: number,
): Promise<StoredEmail[]> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mails = await mailTo(address, stack.info.mailbox);
    if (mails.length >= count || Date.now() > deadline) return mails;
    await new Promise((r) => setTimeout(r, 250));
  }
};

/**
 * Local midnight of the first day, at least two days after `nowIso`, whose
 * next day starts with clocks sprung forward in `zone`.
 */
const dayBeforeSpringForward = (nowIso: string, zone: string): DateTime => {
  let day = DateTime.fromISO(nowIso, { zone }).startOf('day').plus({ days: 2 });
  for (let i = 0; i < 800; i++, day = day.plus({ days: 1 })) {
    if (day.plus({ days: 1 }).endOf('day').offset > day.offset) return day;
  }
  throw new Error(`${zone} springs forward in no day of two years`);
};

const address = (name: string) =>
  `${name}-${Math.random().toString(36).slice(2, 8)}@example.test`;

describe('journeys on the local stack (end to end, mail in the mailbox)', () => {
  let stack: RunningStack;
  let key: string;

  beforeAll(async () => {
    stack = await startStack();
    key = stack.demoKey;
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const call = (
    path: string,
    options: { method?: string; body?: unknown } = {},
  ) => stack.call(path, { key, ...options });

  /** An active sequence of two steps a day apart, with this trigger. */
  const activeSequence = async (
    name: string,
    triggerType: 'list_joined' | 'tag_added',
    triggerTargetId: string,
  ) => {
    const created = await call('/sequences', {
      method: 'POST',
      body: { name, triggerType, triggerTargetId },
    });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    const versionId = created.json.data.draftVersionId as string;
    const nodes = `/sequences/${id}/versions/${versionId}/nodes`;
    for (const [i, node] of [
      { type: 'send_email' },
      { type: 'wait', waitHours: 24 },
      { type: 'send_email' },
    ].entries()) {
      const added = await call(nodes, { method: 'POST', body: node });
      expect(added.status).toBe(201);
      if (node.type === 'send_email') {
        const step = i === 0 ? 1 : 2;
        const patched = await call(`${nodes}/${added.json.data.id}`, {
          method: 'PATCH',
          body: { subject: `${name} ${step}` },
        });
        expect(patched.status).toBe(200);
      }
    }
    expect(
      (
        await call(`/sequences/${id}/versions/${versionId}/publish`, {
          method: 'POST',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(`/sequences/${id}`, {
          method: 'PATCH',
          body: { status: 'active' },
        })
      ).status,
    ).toBe(200);
    return id;
  };

  const newList = async (name: string) => {
    const list = await call('/lists', { method: 'POST', body: { name } });
    expect(list.status).toBe(201);
    return list.json.data.id as string;
  };

  const advanceOneDay = () =>
    stack.admin('local', 'clock', 'advance', '--minutes', '1440');

  it('a single add enrols: step 1 at once, step 2 when the local clock has moved a day', async () => {
    const listId = await newList(`Welcome list ${Date.now()}`);
    await activeSequence('Welcome', 'list_joined', listId);
    const email = address('joined');

    const added = await call(`/lists/${listId}/contacts`, {
      method: 'POST',
      body: { email, doubleOptIn: false },
    });
    expect(added.status).toBe(201);
    const first = await waitForMail(stack, email, 1);
    expect(first.map((m) => m.subject)).toEqual(['Welcome 1']);

    await advanceOneDay();
    const both = await waitForMail(stack, email, 2);

    expect(both.map((m) => m.subject)).toEqual(['Welcome 1', 'Welcome 2']);
    expect(both[0]?.body.html).toContain('/public/unsubscribe');
  }, 90_000);

  it('a tag enrols in the tag_added sequence', async () => {
    const listId = await newList(`Tag list ${Date.now()}`);
    const tag = await call('/tags', {
      method: 'POST',
      body: { name: `vip-${Date.now()}` },
    });
    expect(tag.status).toBe(201);
    await activeSequence('VIP', 'tag_added', tag.json.data.id);
    const email = address('tagged');
    const added = await call(`/lists/${listId}/contacts`, {
      method: 'POST',
      body: { email, doubleOptIn: false },
    });

    const tagged = await call(`/contacts/${added.json.data.id}/tags`, {
      method: 'POST',
      body: { name: tag.json.data.name },
    });
    expect(tagged.status).toBe(201);

    const mails = await waitForMail(stack, email, 1);
    expect(mails.map((m) => m.subject)).toEqual(['VIP 1']);
  }, 90_000);

  it('a confirmed double opt-in enrols; the pending contact received only its confirmation', async () => {
    const listId = await newList(`Opt-in list ${Date.now()}`);
    await activeSequence('Confirmed', 'list_joined', listId);
    const email = address('optin');
    await call(`/lists/${listId}/contacts`, {
      method: 'POST',
      body: { email, doubleOptIn: true },
    });
    const [confirmation] = await waitForMail(stack, email, 1);

    const confirmed = await fetch(confirmationLinkOf(confirmation));
    expect(confirmed.status).toBe(200);

    const mails = await waitForMail(stack, email, 2);
    expect(mails.map((m) => m.subject).slice(1)).toEqual(['Confirmed 1']);
  }, 90_000);

  it('a series with two steps across a daylight-saving change: 9:00 in New York on both days, an hour apart in UTC', async () => {
    // Arrange: the organization in New York; day 1 is the next day before
    // clocks spring forward there (found from the stack's clock, so the
    // test never dates itself).
    const { now } = await stack.admin('local', 'clock', 'show');
    const day1 = dayBeforeSpringForward(now as string, 'America/New_York');
    const nineOn = (day: DateTime) =>
      day.set({ hour: 9 }).toUTC().toISO({ suppressMilliseconds: true });
    const [first, second] = [nineOn(day1), nineOn(day1.plus({ days: 1 }))];
    expect(Date.parse(second as string) - Date.parse(first as string)).toBe(
      23 * 3_600_000,
    );
    expect(
      (
        await call('/settings/sending', {
          method: 'PATCH',
          body: { timezone: 'America/New_York' },
        })
      ).status,
    ).toBe(200);
    const listId = await newList(`Series list ${Date.now()}`);
    const email = address('series');
    await call(`/lists/${listId}/contacts`, {
      method: 'POST',
      body: { email, doubleOptIn: false },
    });
    const created = await call('/series', {
      method: 'POST',
      body: {
        name: 'Spring course',
        listId,
        startsAt: day1.toISO(),
      },
    });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    const versionId = created.json.data.draftVersionId as string;
    const nodes = `/sequences/${id}/versions/${versionId}/nodes`;
    for (const [i, node] of [
      { type: 'send_email' },
      { type: 'wait', waitHours: 24 },
      { type: 'send_email' },
    ].entries()) {
      const added = await call(nodes, { method: 'POST', body: node });
      if (node.type !== 'send_email') continue;
      const step = `${nodes}/${added.json.data.id}`;
      await call(step, {
        method: 'PATCH',
        body: { subject: `Lesson ${i === 0 ? 1 : 2}` },
      });
      await call(step, { method: 'PATCH', body: { sendTimeMinutes: 9 * 60 } });
    }
    expect(
      (
        await call(`/sequences/${id}/versions/${versionId}/publish`, {
          method: 'POST',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(`/series/${id}`, {
          method: 'PATCH',
          body: { status: 'active' },
        })
      ).status,
    ).toBe(200);
    /** Moves the stack's clock to one minute past `iso`. */
    const clockTo = async (iso: string) => {
      const { now } = await stack.admin('local', 'clock', 'show');
      const minutes = Math.ceil(
        (Date.parse(iso) - Date.parse(now as string)) / 60_000 + 1,
      );
      await stack.admin('local', 'clock', 'advance', '--minutes', `${minutes}`);
    };
    // The activation reaches the schedules through the table's stream.
    await new Promise((r) => setTimeout(r, 3000));

    // Act + assert: 9:00 EST is 14:00 UTC, 9:00 EDT is 13:00 UTC.
    await clockTo(first as string);
    expect((await waitForMail(stack, email, 1)).map((m) => m.subject)).toEqual([
      'Lesson 1',
    ]);
    await clockTo(second as string);
    expect((await waitForMail(stack, email, 2)).map((m) => m.subject)).toEqual([
      'Lesson 1',
      'Lesson 2',
    ]);
    const campaigns = await call('/campaigns');
    const ofSeries = (
      campaigns.json.data as { name: string; status: string }[]
    ).filter((c) => c.name.startsWith('Spring course'));
    expect(ofSeries.map((c) => c.name).sort()).toEqual([
      'Spring course — step 1',
      'Spring course — step 2',
    ]);
    // The demo organization back in UTC for whatever runs next.
    await call('/settings/sending', {
      method: 'PATCH',
      body: { timezone: null },
    });
  }, 120_000);
});
