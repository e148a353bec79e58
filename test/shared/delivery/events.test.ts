/**
 * Issue 11, §5: SES events → suppression and contact status, on the
 * embedded engine. A permanent bounce or a complaint suppresses the address
 * for the organization at once: the contact becomes bounced or complained
 * in every list, counters exact; nothing is sent to it again.
 */
import { describe, expect, it } from 'vitest';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import { addContact, getContact } from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { suppressAddress } from '../../../shared/audience/suppressed.ts';
import { listTags } from '../../../shared/audience/tags.ts';
import {
  KnownOrganizations,
  recordSesEvent,
} from '../../../shared/delivery/events.ts';
import type { SesEvent } from '../../../shared/delivery/ses-event.ts';
import type { Deps } from '../../../shared/deps.ts';
import type { Mailer, OutgoingMessage } from '../../../shared/ports.ts';
import { updateOptinSettings } from '../../../shared/settings/optin-settings.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import { createTestDeps, scanTable } from '../../support/dynamo.ts';

const AT = '2026-11-22T10:00:00.000Z';

const mail = (
  orgId: string | undefined,
  to: string,
  messageId = 'm-1',
): SesEvent['mail'] => ({
  messageId,
  timestamp: AT,
  destination: [to],
  tags: orgId ? { org: [orgId], kind: ['confirmation'] } : {},
});

const bounce = (
  orgId: string | undefined,
  to: string,
  bounceType: 'Permanent' | 'Transient' = 'Permanent',
): SesEvent => ({
  eventType: 'Bounce',
  mail: mail(orgId, to),
  bounce: {
    bounceType,
    bounceSubType: 'General',
    bouncedRecipients: [{ emailAddress: to }],
    timestamp: '2026-11-22T10:00:02.000Z',
  },
});

const complaint = (orgId: string, to: string): SesEvent => ({
  eventType: 'Complaint',
  mail: mail(orgId, to, 'm-2'),
  complaint: {
    complainedRecipients: [{ emailAddress: to }],
    timestamp: '2026-11-22T10:05:00.000Z',
  },
});

/** A mailer that records what it was asked to send. */
const recordingMailer = () => {
  const sent: OutgoingMessage[] = [];
  const mailer: Mailer = {
    send: async (message) => {
      sent.push(message);
      return { messageId: `local-${sent.length}` };
    },
  };
  return { sent, mailer };
};

/** An organization with two lists holding the same address, tagged. */
const setup = async () => {
  const test = await createTestDeps();
  const recorded = recordingMailer();
  const deps: Deps = { ...test.deps, mailer: recorded.mailer };
  const { orgId, listId } = await orgWithList(deps);
  const second = await createList(deps, orgId, { name: 'Second' });
  const email = uniqueEmail('bouncing');
  await addContact(deps, orgId, listId, { email, tags: ['vip'] });
  await addContact(deps, orgId, second.id, { email });
  await addContact(deps, orgId, listId, { email: uniqueEmail('other') });
  return {
    ...test,
    deps,
    ...recorded,
    orgId,
    listId,
    secondId: second.id,
    email,
  };
};

/** The list's counters as stored (total and per status). */
const countsOf = async (deps: Deps, orgId: string, listId: string) => {
  const list = await deps.lists.get(orgId, listId);
  if (!list) throw new Error(`no list ${listId}`);
  return { total: list.contactCount, ...list.statusCounts };
};

describe('SES events: suppression and contact status (issue 11, §5)', () => {
  it('a permanent bounce makes the contact bounced in every list of the organization, with exact list and tag counters', async () => {
    // Arrange
    const { deps, orgId, listId, secondId, email } = await setup();
    const before = await countsOf(deps, orgId, listId);

    // Act
    const result = await recordSesEvent(deps, bounce(orgId, email));

    // Assert
    expect(result).toEqual({ recorded: 1, suppressed: [email] });
    expect(await countsOf(deps, orgId, listId)).toEqual({
      ...before,
      subscribed: before.subscribed - 1,
      bounced: 1,
    });
    expect(await countsOf(deps, orgId, secondId)).toMatchObject({
      total: 1,
      subscribed: 0,
      bounced: 1,
    });
    const page = await deps.contacts.page(
      orgId,
      listId,
      { status: 'bounced' },
      { page: 1, limit: 10 },
    );
    expect(page.items.map((c) => c.email)).toEqual([email]);
    // The tag's carrier counter is unchanged: the contact still carries it.
    const tags = await listTags(deps, orgId, { page: 1, limit: 10 });
    expect(tags.items.find((t) => t.name === 'vip')).toMatchObject({
      contactCount: 1,
    });
  });

  it('a complaint makes the contact complained; a later bounce keeps the first reason', async () => {
    // Arrange
    const { deps, orgId, listId, email } = await setup();

    // Act
    await recordSesEvent(deps, complaint(orgId, email));
    await recordSesEvent(deps, bounce(orgId, email));

    // Assert
    expect(await countsOf(deps, orgId, listId)).toMatchObject({
      complained: 1,
      bounced: 0,
    });
  });

  it('a duplicate event, and a replay after a crash between the steps, change nothing more', async () => {
    // Arrange: the crash left the suppression stored, no contact changed.
    const { deps, orgId, listId, email, tableName } = await setup();
    await deps.delivery.suppress(orgId, [
      {
        email,
        reason: 'bounce',
        at: AT,
        messageId: 'm-1',
      },
    ]);

    // Act: the redelivery completes what the first delivery began…
    const first = await recordSesEvent(deps, bounce(orgId, email));
    const afterFirst = await scanTable(tableName);
    // …and a duplicate changes nothing at all.
    const second = await recordSesEvent(deps, bounce(orgId, email));

    // Assert
    expect(first.recorded).toBe(1);
    expect(second.recorded).toBe(0);
    expect(await scanTable(tableName)).toEqual(afterFirst);
    expect(await countsOf(deps, orgId, listId)).toMatchObject({ bounced: 1 });
  });

  it('a transient bounce, a delivery or an open only count', async () => {
    // Arrange
    const { deps, orgId, listId, email } = await setup();
    const before = await countsOf(deps, orgId, listId);

    // Act
    const result = await recordSesEvent(
      deps,
      bounce(orgId, email, 'Transient'),
    );
    await recordSesEvent(deps, {
      eventType: 'Open',
      mail: mail(orgId, email),
      open: { timestamp: AT },
    });

    // Assert
    expect(result).toEqual({ recorded: 1, suppressed: [] });
    expect(await countsOf(deps, orgId, listId)).toEqual(before);
    expect((await deps.delivery.suppressions(orgId, [email])).size).toBe(0);
  });

  it('an event without our organization tag, or of an organization that is gone, is refused for good', async () => {
    // Arrange
    const { deps, email } = await setup();

    // Act / Assert
    await expect(
      recordSesEvent(deps, bounce(undefined, email)),
    ).rejects.toMatchObject({
      code: 'event.unattributed',
    });
    await expect(
      recordSesEvent(
        deps,
        bounce('01a20000-0000-7000-8000-00000000dead', email),
      ),
    ).rejects.toMatchObject({ code: 'organization.notFound' });
  });

  it('reads an organization once for all its events within five minutes, a missing one every time', async () => {
    // Arrange: a clock to move, and the organization reads counted.
    const { deps, orgId, email } = await setup();
    let now = Date.parse(AT);
    let reads = 0;
    const counted: Deps = {
      ...deps,
      clock: { now: () => new Date(now) },
      organizations: {
        ...deps.organizations,
        get: (id: string) => {
          reads++;
          return deps.organizations.get(id);
        },
      },
    };
    const known = new KnownOrganizations();
    const transient = bounce(orgId, email, 'Transient');
    const gone = bounce('01a20000-0000-7000-8000-00000000dead', email);

    // Act / Assert
    await recordSesEvent(counted, transient, known);
    await recordSesEvent(counted, transient, known);
    expect(reads).toBe(1);
    now += 5 * 60_000 + 1;
    await recordSesEvent(counted, transient, known);
    expect(reads).toBe(2);
    for (let i = 0; i < 2; i++) {
      await expect(recordSesEvent(counted, gone, known)).rejects.toMatchObject({
        code: 'organization.notFound',
      });
    }
    expect(reads).toBe(4);
  });

  it('suppression stays within its organization', async () => {
    // Arrange: another organization holds the same address.
    const { deps, orgId, email } = await setup();
    const other = await orgWithList(deps);
    await addContact(deps, other.orgId, other.listId, { email });

    // Act
    await recordSesEvent(deps, bounce(orgId, email));

    // Assert
    expect(await countsOf(deps, other.orgId, other.listId)).toMatchObject({
      subscribed: 1,
      bounced: 0,
    });
    expect((await deps.delivery.suppressions(other.orgId, [email])).size).toBe(
      0,
    );
  });

  it('nothing is sent to a suppressed address again: an add stores it bounced and sends no confirmation; an import creates it bounced', async () => {
    // Arrange
    const { deps, orgId, sent } = await setup();
    await updateOptinSettings(deps, orgId, { required: true });
    const email = uniqueEmail('gone');
    await suppressAddress(deps, orgId, {
      email,
      reason: 'bounce',
      at: AT,
      messageId: 'm-9',
    });
    const third = await createList(deps, orgId, { name: 'Third' });
    const fourth = await createList(deps, orgId, { name: 'Fourth' });

    // Act
    const added = await addContact(deps, orgId, third.id, { email });
    const report = await importContacts(deps, orgId, fourth.id, [{ email }]);

    // Assert
    expect(added.contact.status).toBe('bounced');
    expect(added.confirmation).toEqual({ status: 'not_required' });
    expect(sent.filter((m) => m.to === email)).toEqual([]);
    expect(report.created).toBe(1);
    expect(await countsOf(deps, orgId, fourth.id)).toMatchObject({
      bounced: 1,
      subscribed: 0,
    });
    const stored = await getContact(deps, orgId, added.contact.id);
    expect(stored.status).toBe('bounced');
  });

  it('the confirmation email carries the EmailTags that attribute its events', async () => {
    // Arrange
    const { deps, orgId, listId, sent } = await setup();
    await updateOptinSettings(deps, orgId, { required: true });
    const email = uniqueEmail('tagged');

    // Act
    const added = await addContact(deps, orgId, listId, { email });

    // Assert
    expect(added.confirmation).toEqual({ status: 'sent' });
    expect(sent.find((m) => m.to === email)?.tags).toEqual({
      org: orgId,
      kind: 'confirmation',
      contact: added.contact.id,
    });
  });
});
