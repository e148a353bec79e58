/**
 * Journeys on the embedded engine, the rules the first journey tests left
 * out: every reason a journey exits at its step (README "Journeys": "an
 * unsubscribed, bounced or complained contact, a suppressed address or a
 * contact gone from the list ends the journey with that exitReason"), who
 * signs a sequence's and a series' mail (address book rule 5), and that a
 * bulk import starts no sequence (bulk import rule 1). Enrolment comes from
 * the table's stream, caught up by `events.settle()`; steps run through the
 * `steps` consumer's handler; the scheduler, the queues and the mailer are
 * captured.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import {
  addContact,
  updateContact,
} from '../../../shared/audience/contacts.ts';
import { createTag, tagContact } from '../../../shared/audience/tags.ts';
import { keys } from '../../../shared/db/keys.ts';
import {
  declareDomain,
  verifyDomain,
} from '../../../shared/sending/domains.ts';
import { createIdentity } from '../../../shared/sending/identities.ts';
import {
  createSeries,
  updateSequence,
} from '../../../shared/sequences/heads.ts';
import { publishVersion } from '../../../shared/sequences/publish.ts';
import { seriesStepScheduleName } from '../../../shared/sequences/series-schedule.ts';
import { updateSendingSettings } from '../../../shared/settings/settings.ts';
import { uniqueEmail } from '../../support/audience.ts';
import { publishDns, testEngineClient } from '../../support/dynamo.ts';
import {
  activeSequence,
  fillDraft,
  join,
  journeyOf,
  subjects,
  type World,
  journeyWorld as world,
} from '../../support/journeys.ts';

const HOUR = 3_600_000;

describe('journey exits: the contact is read again at each step (README "Journeys")', () => {
  it.each([{ status: 'bounced' }, { status: 'complained' }] as const)(
    'a contact $status before its second step ends the journey with exitReason $status; that step is not sent',
    async ({ status }) => {
      // Arrange
      const w = await world();
      const { sequenceId } = await activeSequence(w, { steps: 2 });
      const contact = await join(w);
      await w.run();
      expect(subjects(w)).toEqual(['Step 1']);

      // Act
      await updateContact(w.deps, w.orgId, contact.id, { status });
      w.advance(24 * HOUR);
      await w.run();

      // Assert
      expect(subjects(w)).toEqual(['Step 1']);
      expect(await journeyOf(w, sequenceId, contact.id)).toMatchObject({
        status: 'exited',
        exitReason: status,
        dueAt: null,
        sent: 1,
        endedAt: w.now().toISOString(),
      });
    },
  );

  it('a contact bounced before its first step ends the journey (bounced) and receives nothing', async () => {
    // Arrange
    const w = await world();
    const { sequenceId } = await activeSequence(w, { steps: 2 });
    const contact = await join(w);

    // Act
    await updateContact(w.deps, w.orgId, contact.id, { status: 'bounced' });
    await w.run();

    // Assert
    expect(w.mail.accepted).toEqual([]);
    expect(await journeyOf(w, sequenceId, contact.id)).toMatchObject({
      status: 'exited',
      exitReason: 'bounced',
      sent: 0,
    });
  });

  it('a contact gone from the list (no route removes one: its item deleted by hand) ends the journey with exitReason removed', async () => {
    // Arrange
    const w = await world();
    const { sequenceId } = await activeSequence(w, { steps: 2 });
    const contact = await join(w);
    await w.run();
    await testEngineClient().send(
      new DeleteCommand({
        TableName: w.tableName,
        Key: keys.contact(w.orgId, w.listId, contact.email),
      }),
    );

    // Act
    w.advance(24 * HOUR);
    await w.run();

    // Assert
    expect(subjects(w)).toEqual(['Step 1']);
    expect(await journeyOf(w, sequenceId, contact.id)).toMatchObject({
      status: 'exited',
      exitReason: 'removed',
      sent: 1,
    });
  });

  it('the address now belongs to another contact of the list (the first removed, the address added again) ends the first journey with exitReason removed; the new contact starts its own', async () => {
    // Arrange
    const w = await world();
    const { sequenceId } = await activeSequence(w, { steps: 2 });
    const first = await join(w);
    await w.run();
    await testEngineClient().send(
      new DeleteCommand({
        TableName: w.tableName,
        Key: keys.contact(w.orgId, w.listId, first.email),
      }),
    );
    const { contact: second } = await addContact(w.deps, w.orgId, w.listId, {
      email: first.email,
      doubleOptIn: false,
    });
    await w.events.settle();

    // Act
    w.advance(24 * HOUR);
    await w.run();

    // Assert
    expect(second.id).not.toBe(first.id);
    expect(await journeyOf(w, sequenceId, first.id)).toMatchObject({
      status: 'exited',
      exitReason: 'removed',
      sent: 1,
    });
    expect(
      w.mail.accepted
        .filter((m) => m.tags?.contact === first.id)
        .map((m) => m.subject),
    ).toEqual(['Step 1']);
    expect(
      w.mail.accepted
        .filter((m) => m.tags?.contact === second.id)
        .map((m) => m.subject),
    ).toEqual(['Step 1']);
  });
});

/** Declares a domain for the organization and verifies it. */
const verifiedDomain = async (w: World) => {
  const domain = `${randomUUID().slice(0, 8)}.example.test`;
  const declared = await declareDomain(w.deps, w.orgId, { domain });
  for (const record of declared.dnsRecords.filter(
    (r) => r.type !== 'TXT' || r.purpose === 'ownership',
  )) {
    await publishDns({
      name: record.name,
      type: record.type,
      value: record.value,
      ...(record.priority ? { priority: record.priority } : {}),
    });
  }
  expect((await verifyDomain(w.deps, w.orgId, declared.id)).verified).toBe(
    true,
  );
  return domain;
};

/**
 * The organization signs with a verified domain: a default address and a
 * second one in the book that is not the default.
 */
const addressBook = async (w: World) => {
  const domain = await verifiedDomain(w);
  await updateSendingSettings(w.deps, w.orgId, {
    senderEmail: `news@${domain}`,
    senderName: 'Acme News',
  });
  await createIdentity(w.deps, w.orgId, {
    senderEmail: `sales@${domain}`,
    senderName: 'Acme Sales',
  });
  return domain;
};

describe('address book rule 5: sequences are signed by the default address', () => {
  it("a sequence step's mail goes out From the organization's default identity, not another address of the book", async () => {
    // Arrange
    const w = await world();
    const domain = await addressBook(w);
    await activeSequence(w, { steps: 1 });

    // Act
    await join(w);
    await w.run();

    // Assert
    expect(w.mail.accepted.map((m) => [m.subject, m.from])).toEqual([
      ['Step 1', `"Acme News" <news@${domain}>`],
    ]);
    expect(w.mail.accepted[0]?.replyTo).toBeUndefined();
  });

  it("a series step's campaign mail goes out From the organization's default identity", async () => {
    // Arrange
    const w = await world();
    const domain = await addressBook(w);
    const contact = await join(w);
    const startsAt = new Date(w.now().getTime() + 24 * HOUR);
    const series = await createSeries(w.deps, w.orgId, {
      name: 'Course',
      listId: w.listId,
      startsAt: startsAt.toISOString(),
      audienceSegmentId: null,
      audienceTagId: null,
      topicId: null,
    });
    const versionId = series.draftVersionId as string;
    await fillDraft(w.deps, w.orgId, series.id, versionId, 'Step', {
      steps: 1,
    });
    await publishVersion(w.deps, w.orgId, series.id, versionId);
    await updateSequence(w.deps, w.orgId, series.id, { status: 'active' });
    await w.events.settle();
    const fire = w.schedules.get(
      seriesStepScheduleName(w.orgId, series.id, versionId, 1),
    )?.message;

    // Act
    w.advance(24 * HOUR);
    await w.handle(fire);
    await w.drain();

    // Assert
    expect(w.mail.accepted.map((m) => [m.to, m.subject, m.from])).toEqual([
      [contact.email, 'Step 1', `"Acme News" <news@${domain}>`],
    ]);
  });
});

describe('bulk import rule 1: an import starts no sequence', () => {
  it('an import of subscribed lines into the list of an active list_joined sequence creates no journey and sends nothing; a single add enrols', async () => {
    // Arrange
    const w = await world();
    const { sequenceId } = await activeSequence(w, { steps: 2 });
    const email = uniqueEmail('imported');

    // Act
    const report = await importContacts(w.deps, w.orgId, w.listId, [
      { email, status: 'subscribed' },
    ]);
    await w.events.settle();
    await w.run();

    // Assert
    expect(report).toMatchObject({ created: 1, rejected: 0 });
    const imported = await w.deps.contacts.get(w.orgId, w.listId, email);
    expect(imported?.status).toBe('subscribed');
    expect(
      await journeyOf(w, sequenceId, imported?.id as string),
    ).toBeUndefined();
    expect(w.queued).toEqual([]);
    expect(w.mail.accepted).toEqual([]);

    // The contrast: the same sequence enrols a contact added singly.
    const single = await join(w, 'single');
    await w.run();
    expect(await journeyOf(w, sequenceId, single.id)).toMatchObject({
      status: 'active',
      sent: 1,
    });
    expect(w.mail.accepted.map((m) => m.to)).toEqual([single.email]);
  });

  it('an import carrying the tag of an active tag_added sequence creates no journey and sends nothing, for a new contact and for an existing one; tagging singly enrols', async () => {
    // Arrange
    const w = await world();
    const tag = await createTag(w.deps, w.orgId, { name: 'vip' });
    const { sequenceId } = await activeSequence(w, {
      tagId: tag.id,
      steps: 2,
    });
    const existing = await join(w, 'existing');
    const fresh = uniqueEmail('fresh');

    // Act
    const report = await importContacts(w.deps, w.orgId, w.listId, [
      { email: fresh, status: 'subscribed', tags: ['vip'] },
      { email: existing.email, tags: ['vip'] },
    ]);
    await w.events.settle();
    await w.run();

    // Assert
    expect(report).toMatchObject({ created: 1, updated: 1, rejected: 0 });
    const imported = await w.deps.contacts.get(w.orgId, w.listId, fresh);
    expect(imported?.tagIds).toEqual([tag.id]);
    expect(
      (await w.deps.contacts.get(w.orgId, w.listId, existing.email))?.tagIds,
    ).toEqual([tag.id]);
    expect(
      await journeyOf(w, sequenceId, imported?.id as string),
    ).toBeUndefined();
    expect(await journeyOf(w, sequenceId, existing.id)).toBeUndefined();
    expect(w.queued).toEqual([]);
    expect(w.mail.accepted).toEqual([]);

    // The contrast: the tag given singly enrols.
    const single = await join(w, 'single');
    await tagContact(w.deps, w.orgId, single.id, { name: 'vip' });
    await w.events.settle();
    await w.run();
    expect(await journeyOf(w, sequenceId, single.id)).toMatchObject({
      status: 'active',
      sent: 1,
    });
    expect(w.mail.accepted.map((m) => m.to)).toEqual([single.email]);
  });
});
