/**
 * Issue 11, "Done when": the asynchronous half in process, as the local
 * stack runs it — the consumer queues on the embedded SQS engine, a
 * Lambda-like poller per group, the simulated SES events of the mailbox
 * simulator addresses, and the local scheduler on the stack's clock.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import { readSentLog } from '../../shared/adapters/local/simulated-ses-events.ts';
import { addContact, getContact } from '../../shared/audience/contacts.ts';
import { createList } from '../../shared/audience/lists.ts';
import type { Deps } from '../../shared/deps.ts';
import { updateOptinSettings } from '../../shared/settings/optin-settings.ts';
import { orgWithList } from '../support/audience.ts';
import { createTestDeps } from '../support/dynamo.ts';

const started: LocalAsync[] = [];
afterAll(async () => {
  await Promise.all(started.map((half) => half.stop()));
});

/** A stack's asynchronous half over a fresh table, its pollers running. */
const stack = async () => {
  const scratch = inject('scratchDir');
  const id = randomUUID().slice(0, 8);
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  const sentLogFile = join(scratch, `sent-${id}.jsonl`);
  const asyncHalf = await prepareLocalAsync({
    sqsEndpoint: inject('sqsEndpoint'),
    sentLogFile,
    schedulesFile: join(scratch, `schedules-${id}.json`),
    clock,
    queuePrefix: `t${id}-`,
  });
  const { deps: base } = await createTestDeps({ clock, asyncHalf });
  const deps: Deps = asyncHalf.scheduler
    ? { ...base, scheduler: asyncHalf.scheduler }
    : base;
  asyncHalf.start(deps);
  started.push(asyncHalf);
  const { orgId, listId } = await orgWithList(deps);
  await updateOptinSettings(deps, orgId, { required: true });
  return {
    deps,
    orgId,
    listId,
    sentLogFile,
    asyncHalf,
    advanceMinutes: (minutes: number) => {
      offset += minutes * 60_000;
    },
  };
};

/** Waits until `check` holds, polling; fails after `ms`. */
const eventually = async <T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 10_000,
): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('the asynchronous half (issue 11, done when)', () => {
  it('a confirmation to bounce@simulator.amazonses.com leaves the contact bounced within seconds, with exact counters, and nothing more is sent to it', async () => {
    // Arrange
    const { deps, orgId, listId, sentLogFile } = await stack();
    const second = await createList(deps, orgId, { name: 'Second' });
    const email = `bounce+${randomUUID().slice(0, 8)}@simulator.amazonses.com`;

    // Act: the add sends the confirmation; SES (simulated) bounces it.
    const added = await addContact(deps, orgId, listId, { email });
    const bounced = await eventually(
      () => getContact(deps, orgId, added.contact.id),
      (contact) => contact.status === 'bounced',
    );

    // Assert
    expect(added.confirmation).toEqual({ status: 'sent' });
    expect(bounced.status).toBe('bounced');
    const list = await deps.lists.get(orgId, listId);
    expect(list).toMatchObject({
      contactCount: 1,
      statusCounts: { pending: 0, subscribed: 0, bounced: 1 },
    });
    // Nothing more goes to it, on this list or another.
    const again = await addContact(deps, orgId, listId, { email });
    const elsewhere = await addContact(deps, orgId, second.id, { email });
    expect(again.contact.status).toBe('bounced');
    expect(elsewhere.contact.status).toBe('bounced');
    const sent = await readSentLog(sentLogFile);
    expect(sent.filter((message) => message.to === email)).toHaveLength(1);
  });

  it('a complaint leaves the contact complained; a delivery changes nothing', async () => {
    // Arrange
    const { deps, orgId, listId } = await stack();
    const complainer = `complaint+${randomUUID().slice(0, 8)}@simulator.amazonses.com`;
    const reader = `success+${randomUUID().slice(0, 8)}@simulator.amazonses.com`;

    // Act
    const complained = await addContact(deps, orgId, listId, {
      email: complainer,
    });
    const delivered = await addContact(deps, orgId, listId, { email: reader });
    const after = await eventually(
      () => getContact(deps, orgId, complained.contact.id),
      (contact) => contact.status === 'complained',
    );

    // Assert
    expect(after.status).toBe('complained');
    expect((await getContact(deps, orgId, delivered.contact.id)).status).toBe(
      'pending',
    );
  });

  it('a schedule fires to its queue once the clock reaches it, and not before', async () => {
    // Arrange: a bounce scheduled for later, as SES would send it.
    const { deps, orgId, listId, advanceMinutes } = await stack();
    const email = `late-${randomUUID().slice(0, 8)}@example.test`;
    const added = await addContact(deps, orgId, listId, { email });
    const at = new Date(deps.clock.now().getTime() + 10 * 60_000);
    await deps.scheduler.schedule({
      name: `test-${randomUUID().slice(0, 8)}`,
      at,
      queue: 'events',
      message: {
        eventType: 'Bounce',
        mail: {
          messageId: 'm-late',
          timestamp: at.toISOString(),
          destination: [email],
          tags: { org: [orgId] },
        },
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: [{ emailAddress: email }],
          timestamp: at.toISOString(),
        },
      },
    });

    // Act / Assert: not yet…
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await getContact(deps, orgId, added.contact.id)).status).toBe(
      'pending',
    );
    // …then the clock moves past it, and it fires at once.
    advanceMinutes(11);
    const after = await eventually(
      () => getContact(deps, orgId, added.contact.id),
      (contact) => contact.status === 'bounced',
    );
    expect(after.status).toBe('bounced');
  });
});
