import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { confirmSubscription } from '../../../shared/audience/confirmation.ts';
import {
  addContact,
  getContact,
  listContacts,
  resubscribeContact,
  unsubscribeContact,
  updateContact,
} from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { tagContact, untagContact } from '../../../shared/audience/tags.ts';
import { keys } from '../../../shared/db/keys.ts';
import {
  ConflictError,
  ExpiredLinkError,
  InvalidLinkError,
  NotFoundError,
  RuleViolationError,
} from '../../../shared/errors.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import {
  createTestDeps,
  fixedClock,
  scanTable,
  TEST_PUBLIC_API_URL,
  testEngineClient,
} from '../../support/dynamo.ts';
import { confirmationLinkOf, mailTo, tokenOf } from '../../support/mailbox.ts';

const setup = async (options: { allowed?: boolean } = {}) => {
  const clock = fixedClock();
  const test = await createTestDeps({ clock });
  const { orgId, listId } = await orgWithList(test.deps, options.allowed);
  return { ...test, clock, orgId, listId };
};

const requireOptin = async (tableName: string, orgId: string) =>
  testEngineClient().send(
    new PutCommand({
      TableName: tableName,
      Item: { ...keys.optinSettings(orgId), required: true },
    }),
  );

describe('adding one contact (POST /lists/{listId}/contacts)', () => {
  it('loses nothing to a write between its read and its save: it reads again and merges', async () => {
    // Arrange: the first save of the add is preceded by another add of the
    // same address, which the add did not see.
    const { deps, orgId, listId } = await setup();
    const email = uniqueEmail();
    let interleaved = false;
    const contacts = new Proxy(deps.contacts, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (name !== 'save') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: Parameters<typeof target.save>) => {
          if (!interleaved) {
            interleaved = true;
            await addContact(deps, orgId, listId, {
              email,
              firstName: 'Ann',
              tags: ['first'],
              doubleOptIn: false,
            });
          }
          return target.save(...args);
        };
      },
    });
    // Act
    const added = await addContact({ ...deps, contacts }, orgId, listId, {
      email,
      lastName: 'Lee',
      tags: ['second'],
      doubleOptIn: false,
    });
    // Assert
    expect(interleaved).toBe(true);
    expect(added.created).toBe(false);
    const stored = await getContact(deps, orgId, added.contact.id);
    expect(stored).toMatchObject({
      email,
      firstName: 'Ann',
      lastName: 'Lee',
      status: 'subscribed',
    });
    expect(stored.tags.map((tag) => tag.name).sort()).toEqual([
      'first',
      'second',
    ]);
  });

  it('subscribes at once without double opt-in, and fires list-joined once', async () => {
    // Arrange
    const { deps, events, orgId, listId } = await setup();
    const email = uniqueEmail();
    // Act
    const first = await addContact(deps, orgId, listId, {
      email,
      firstName: 'Ann',
    });
    const again = await addContact(deps, orgId, listId, {
      email,
      lastName: 'Lee',
    });
    // Assert
    expect(first).toMatchObject({
      created: true,
      contact: { email, status: 'subscribed', firstName: 'Ann' },
      confirmation: { status: 'not_required' },
    });
    expect(again).toMatchObject({
      created: false,
      contact: { firstName: 'Ann', lastName: 'Lee', status: 'subscribed' },
    });
    expect(
      (await events.settle()).filter((e) => e.type === 'contact.joinedList'),
    ).toEqual([
      expect.objectContaining({ orgId, listId, contactId: first.contact.id }),
    ]);
    expect(await mailTo(email)).toEqual([]);
  });

  it('fires contact-tagged once per real new tagging', async () => {
    const { deps, events, orgId, listId } = await setup();
    const email = uniqueEmail();
    await addContact(deps, orgId, listId, { email, tags: ['VIP'] });
    await addContact(deps, orgId, listId, { email, tags: ['vip', 'news'] });
    const tagged = (await events.settle()).filter(
      (e) => e.type === 'contact.tagged',
    );
    expect(tagged).toHaveLength(2);
  });

  it('with double opt-in, keeps the contact pending and mails a confirmation link', async () => {
    // Arrange
    const { deps, events, orgId, listId } = await setup();
    const email = uniqueEmail();
    // Act
    const result = await addContact(deps, orgId, listId, {
      email,
      firstName: '<b>Bo</b>',
      doubleOptIn: true,
      optinIp: '203.0.113.9',
    });
    // Assert
    expect(result).toMatchObject({
      created: true,
      contact: { status: 'pending', optinIp: '203.0.113.9' },
      confirmation: { status: 'sent' },
    });
    const [mail] = await mailTo(email);
    expect(mail?.subject).toBe('Please confirm your subscription');
    expect(mail?.from).toBe('no-reply@mail.localhost.test');
    expect(mail?.body.html).toContain('&lt;b&gt;Bo&lt;/b&gt;');
    expect(mail?.body.text).toContain('subscribe me');
    expect(confirmationLinkOf(mail)).toMatch(
      new RegExp(`^${TEST_PUBLIC_API_URL}/public/confirm\\?token=`),
    );
    expect(
      (await events.settle()).filter((e) => e.type === 'contact.joinedList'),
    ).toEqual([]);
  });

  it('forces double opt-in when the organization requires it, whatever doubleOptIn says', async () => {
    const { deps, tableName, orgId, listId } = await setup();
    await requireOptin(tableName, orgId);
    const email = uniqueEmail();
    const result = await addContact(deps, orgId, listId, {
      email,
      doubleOptIn: false,
    });
    expect(result.contact.status).toBe('pending');
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('sends no confirmation while the organization cannot send, and keeps the contact pending', async () => {
    const { deps, orgId, listId } = await setup({ allowed: false });
    const email = uniqueEmail();
    const result = await addContact(deps, orgId, listId, {
      email,
      doubleOptIn: true,
    });
    expect(result.confirmation).toEqual({
      status: 'blocked',
      blockers: ['organization_not_allowed', 'no_sender_identity'],
    });
    expect(result.contact.status).toBe('pending');
    expect(await mailTo(email)).toEqual([]);
  });

  it('answers 404 for another organization’s list', async () => {
    const { deps, orgId } = await setup();
    const other = await orgWithList(deps);
    await expect(
      addContact(deps, orgId, other.listId, { email: uniqueEmail() }),
    ).rejects.toThrow(NotFoundError);
  });
});

describe('confirming a subscription (double opt-in link)', () => {
  const pendingContact = async () => {
    const context = await setup();
    const email = uniqueEmail();
    const added = await addContact(
      context.deps,
      context.orgId,
      context.listId,
      {
        email,
        doubleOptIn: true,
      },
    );
    const [mail] = await mailTo(email);
    return {
      ...context,
      email,
      added,
      token: tokenOf(confirmationLinkOf(mail)),
    };
  };

  it('confirms once: records confirmedAt and confirmedIp, and the contact joins the list once', async () => {
    // Arrange
    const { deps, events, orgId, added, token, clock } = await pendingContact();
    clock.advance(60_000);
    // Act
    const first = await confirmSubscription(deps, token, '198.51.100.4');
    const second = await confirmSubscription(deps, token, '198.51.100.5');
    // Assert
    expect(first.result).toBe('confirmed');
    expect(second.result).toBe('already_confirmed');
    expect(await getContact(deps, orgId, added.contact.id)).toMatchObject({
      status: 'subscribed',
      confirmedAt: '2026-11-22T10:01:10.000Z',
      confirmedIp: '198.51.100.4',
      joinedAt: '2026-11-22T10:01:10.000Z',
    });
    expect(
      (await events.settle()).filter((e) => e.type === 'contact.joinedList'),
    ).toHaveLength(1);
  });

  it('refuses a tampered link', async () => {
    const { deps, token } = await pendingContact();
    // A reader edits the claims (another contact) and keeps the signature.
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(
      Buffer.from(payload ?? '', 'base64url').toString(),
    );
    const edited = Buffer.from(
      JSON.stringify({ ...claims, c: '01a20000-0000-7000-8000-000000000000' }),
    ).toString('base64url');
    await expect(
      confirmSubscription(
        deps,
        [header, edited, signature].join('.'),
        undefined,
      ),
    ).rejects.toThrow(InvalidLinkError);
    const otherFirst = signature?.startsWith('A') ? 'B' : 'A';
    await expect(
      confirmSubscription(
        deps,
        [header, payload, `${otherFirst}${signature?.slice(1)}`].join('.'),
        undefined,
      ),
    ).rejects.toThrow(InvalidLinkError);
    await expect(
      confirmSubscription(deps, 'garbage', undefined),
    ).rejects.toThrow(InvalidLinkError);
  });

  it('refuses a link older than a week', async () => {
    const { deps, token, clock } = await pendingContact();
    clock.advance(7 * 24 * 3600 * 1000 + 1000);
    await expect(confirmSubscription(deps, token, undefined)).rejects.toThrow(
      ExpiredLinkError,
    );
  });

  it('lets only the latest link confirm after a re-send', async () => {
    const { deps, orgId, listId, email, token } = await pendingContact();
    await addContact(deps, orgId, listId, { email, doubleOptIn: true });
    const mails = await mailTo(email);
    expect(mails).toHaveLength(2);
    expect((await confirmSubscription(deps, token, undefined)).result).toBe(
      'superseded',
    );
    const latest = tokenOf(confirmationLinkOf(mails[1]));
    expect((await confirmSubscription(deps, latest, undefined)).result).toBe(
      'confirmed',
    );
  });
});

describe('contact status and tags', () => {
  it('unsubscribes idempotently and resubscribes without a second join', async () => {
    const { deps, events, orgId, listId } = await setup();
    const { contact } = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
    });
    const out = await unsubscribeContact(deps, orgId, contact.id);
    const outAgain = await unsubscribeContact(deps, orgId, contact.id);
    const back = await resubscribeContact(deps, orgId, contact.id);
    expect(out.status).toBe('unsubscribed');
    expect(out.unsubscribedAt).not.toBeNull();
    expect(outAgain.updatedAt).toBe(out.updatedAt);
    expect(back.status).toBe('subscribed');
    expect(
      (await events.settle()).filter((e) => e.type === 'contact.joinedList'),
    ).toHaveLength(1);
  });

  it('refuses to resubscribe a pending, bounced or complained contact', async () => {
    const { deps, orgId, listId } = await setup();
    const pending = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
      doubleOptIn: true,
    });
    const bounced = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
    });
    await updateContact(deps, orgId, bounced.contact.id, { status: 'bounced' });
    await expect(
      resubscribeContact(deps, orgId, pending.contact.id),
    ).rejects.toThrow(ConflictError);
    await expect(
      resubscribeContact(deps, orgId, bounced.contact.id),
    ).rejects.toThrow(ConflictError);
  });

  it('a status of bounced or complained set by hand suppresses the address in the organization, as an SES report does', async () => {
    // Arrange: the address in two lists.
    const { deps, orgId, listId } = await setup();
    const other = await createList(deps, orgId, { name: 'Events' });
    const email = uniqueEmail('by-hand');
    const here = await addContact(deps, orgId, listId, {
      email,
      doubleOptIn: false,
    });
    await addContact(deps, orgId, other.id, { email, doubleOptIn: false });
    // Act
    await updateContact(deps, orgId, here.contact.id, {
      status: 'complained',
    });
    // Assert
    expect((await deps.contacts.get(orgId, other.id, email))?.status).toBe(
      'complained',
    );
    expect(
      (await deps.delivery.suppressions(orgId, [email])).get(email),
    ).toMatchObject({ reason: 'complaint', source: 'api' });
  });

  it('updates names (null clears) and refuses setting pending by hand', async () => {
    const { deps, orgId, listId } = await setup();
    const { contact } = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
      firstName: 'A',
      lastName: 'B',
    });
    const updated = await updateContact(deps, orgId, contact.id, {
      firstName: 'Alice',
      lastName: null,
    });
    expect(updated).toMatchObject({ firstName: 'Alice', lastName: null });
    await expect(
      updateContact(deps, orgId, contact.id, { status: 'pending' }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('tags by name (get-or-create) and untags, idempotently', async () => {
    const { deps, events, orgId, listId } = await setup();
    const { contact } = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
    });
    const first = await tagContact(deps, orgId, contact.id, { name: 'Fans' });
    const second = await tagContact(deps, orgId, contact.id, { name: 'fans' });
    const removed = await untagContact(deps, orgId, contact.id, first.tag.id);
    const removedAgain = await untagContact(
      deps,
      orgId,
      contact.id,
      first.tag.id,
    );
    expect([first.added, second.added]).toEqual([true, false]);
    expect([removed.removed, removedAgain.removed]).toEqual([true, false]);
    expect(
      (await events.settle()).filter((e) => e.type === 'contact.tagged'),
    ).toHaveLength(1);
  });

  it('answers 404 for another organization’s contact, and writes nothing then (no tag, no counter)', async () => {
    const { deps, orgId, tableName } = await setup();
    const other = await orgWithList(deps);
    const { contact } = await addContact(deps, other.orgId, other.listId, {
      email: uniqueEmail(),
    });
    const before = await scanTable(tableName);
    await expect(getContact(deps, orgId, contact.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(
      tagContact(deps, orgId, contact.id, { name: 'sneaky' }),
    ).rejects.toThrow(NotFoundError);
    await expect(unsubscribeContact(deps, orgId, contact.id)).rejects.toThrow(
      NotFoundError,
    );
    expect(await scanTable(tableName)).toEqual(before);
  });
});

describe('listing contacts (GET /contacts)', () => {
  it('filters by status, tag and search, with exact totals and pages', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const add = (email: string, extra = {}) =>
      addContact(deps, orgId, listId, { email, ...extra });
    const amy = await add('amy@example.test', {
      firstName: 'Amy',
      tags: ['gold'],
    });
    await add('bob@example.test', { lastName: 'Stone', tags: ['gold'] });
    await add('cyd@example.test', { doubleOptIn: true });
    const dan = await add('dan@example.test');
    await unsubscribeContact(deps, orgId, dan.contact.id);
    const gold = amy.contact.tags[0]?.id;
    const query = (extra: object) =>
      listContacts(deps, orgId, { listId, page: 1, limit: 10, ...extra });
    // Act & Assert
    const page1 = await query({ limit: 3 });
    expect(page1.total).toBe(4);
    expect(page1.items.map((c) => c.email)).toEqual([
      'amy@example.test',
      'bob@example.test',
      'cyd@example.test',
    ]);
    expect(
      (await query({ page: 2, limit: 3 })).items.map((c) => c.email),
    ).toEqual(['dan@example.test']);
    expect((await query({ status: 'subscribed' })).total).toBe(2);
    expect(
      (await query({ status: 'pending' })).items.map((c) => c.email),
    ).toEqual(['cyd@example.test']);
    expect((await query({ tagId: gold })).total).toBe(2);
    expect(
      (await query({ search: 'STONE' })).items.map((c) => c.email),
    ).toEqual(['bob@example.test']);
    expect((await query({ search: 'amy', status: 'unsubscribed' })).total).toBe(
      0,
    );
  });
});
