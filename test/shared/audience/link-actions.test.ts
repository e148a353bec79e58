import { describe, expect, it } from 'vitest';
import { addContact, getContact } from '../../../shared/audience/contacts.ts';
import {
  optOutByLink,
  readTopicOptOutLink,
  readUnsubscribeLink,
  unsubscribeByLink,
} from '../../../shared/audience/link-actions.ts';
import { ExpiredLinkError, InvalidLinkError } from '../../../shared/errors.ts';
import { LINK_PURPOSES } from '../../../shared/links/public-links.ts';
import { composeMessage } from '../../../shared/mail/compose.ts';
import {
  createTopic,
  recipientsWhoDeclined,
} from '../../../shared/topics/topics.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import { createTestDeps, fixedClock } from '../../support/dynamo.ts';

const HTML =
  '<a href="{{unsubscribeUrl}}">Unsubscribe</a> <a href="{{topicOptOutUrl}}">Fewer offers</a>';

/** A contact and the links of a real message composed for it. */
const setup = async (options: { test?: boolean } = {}) => {
  const clock = fixedClock();
  const { deps } = await createTestDeps({ clock });
  const { orgId, listId } = await orgWithList(deps);
  const topic = await createTopic(deps, orgId, { name: 'Offers' });
  const { contact } = await addContact(deps, orgId, listId, {
    email: uniqueEmail(),
  });
  const message = await composeMessage(deps, {
    orgId,
    contact: { id: contact.id, email: contact.email },
    subject: 's',
    html: HTML,
    from: 'a@b.test',
    topicId: topic.id,
    ...(options.test ? { test: true } : {}),
  });
  const [unsubscribe, topicOptOut] = [
    ...message.html.matchAll(/href="([^"]+)"/g),
  ].map(
    (m) =>
      new URL(m[1]?.replaceAll('&amp;', '&') ?? '').searchParams.get('token') ??
      '',
  );
  return {
    deps,
    clock,
    orgId,
    topic,
    contact,
    unsubscribe: unsubscribe ?? '',
    topicOptOut: topicOptOut ?? '',
  };
};

describe('unsubscribe links', () => {
  it('never unsubscribes on a read (GET): mail scanners do no harm', async () => {
    const { deps, orgId, contact, unsubscribe } = await setup();
    const target = await readUnsubscribeLink(deps, unsubscribe);
    const again = await readUnsubscribeLink(deps, unsubscribe);
    expect(target).toMatchObject({
      kind: 'contact',
      email: contact.email,
      done: false,
    });
    expect(again).toEqual(target);
    expect((await getContact(deps, orgId, contact.id)).status).toBe(
      'subscribed',
    );
  });

  it('unsubscribes on POST (one-click), and a replay changes nothing more', async () => {
    const { deps, orgId, contact, unsubscribe } = await setup();
    const first = await unsubscribeByLink(deps, unsubscribe);
    const unsubscribedAt = (await getContact(deps, orgId, contact.id))
      .unsubscribedAt;
    const replay = await unsubscribeByLink(deps, unsubscribe);
    expect(first).toMatchObject({ kind: 'contact', done: false });
    expect(replay).toMatchObject({ kind: 'contact', done: true });
    expect(await getContact(deps, orgId, contact.id)).toMatchObject({
      status: 'unsubscribed',
      unsubscribedAt,
    });
    expect(await readUnsubscribeLink(deps, unsubscribe)).toMatchObject({
      done: true,
    });
  });

  it('refuses a tampered link, or a link of another purpose', async () => {
    const { deps, unsubscribe, topicOptOut } = await setup();
    const [header, payload, signature] = unsubscribe.split('.');
    const claims = JSON.parse(
      Buffer.from(payload ?? '', 'base64url').toString(),
    );
    const forged = [
      header,
      Buffer.from(JSON.stringify({ ...claims, c: 'someone-else' })).toString(
        'base64url',
      ),
      signature,
    ].join('.');
    await expect(unsubscribeByLink(deps, forged)).rejects.toThrow(
      InvalidLinkError,
    );
    await expect(unsubscribeByLink(deps, topicOptOut)).rejects.toThrow(
      InvalidLinkError,
    );
    await expect(readUnsubscribeLink(deps, 'nonsense')).rejects.toThrow(
      InvalidLinkError,
    );
  });

  it('works for a year, then expires', async () => {
    const { deps, clock, unsubscribe } = await setup();
    clock.advance(364 * 24 * 3600 * 1000);
    await expect(readUnsubscribeLink(deps, unsubscribe)).resolves.toMatchObject(
      { kind: 'contact' },
    );
    clock.advance(2 * 24 * 3600 * 1000);
    await expect(readUnsubscribeLink(deps, unsubscribe)).rejects.toThrow(
      ExpiredLinkError,
    );
  });

  it('changes nothing for the links of a test email', async () => {
    const { deps, orgId, contact, unsubscribe, topicOptOut } = await setup({
      test: true,
    });
    expect(await unsubscribeByLink(deps, unsubscribe)).toEqual({
      kind: 'test',
    });
    expect(await optOutByLink(deps, topicOptOut)).toEqual({ kind: 'test' });
    expect((await getContact(deps, orgId, contact.id)).status).toBe(
      'subscribed',
    );
  });

  it('signs the contact and each purpose into its link; the unsubscribe link unsubscribes that contact', async () => {
    // Arrange
    const { deps, orgId, topic, contact, unsubscribe, topicOptOut } =
      await setup();
    const organization = await deps.organizations.get(orgId);
    // Act
    const unsubscribeClaims = await deps.links.verify(
      LINK_PURPOSES.unsubscribe,
      unsubscribe,
    );
    const topicClaims = await deps.links.verify(
      LINK_PURPOSES.topicOptOut,
      topicOptOut,
    );
    const target = await unsubscribeByLink(deps, unsubscribe);
    // Assert
    expect(unsubscribeClaims).toMatchObject({
      pur: LINK_PURPOSES.unsubscribe,
      o: orgId,
      c: contact.id,
    });
    expect(unsubscribeClaims).not.toHaveProperty('t');
    expect(topicClaims).toMatchObject({
      pur: LINK_PURPOSES.topicOptOut,
      o: orgId,
      c: contact.id,
      t: topic.id,
    });
    expect(target).toEqual({
      kind: 'contact',
      email: contact.email,
      organizationName: organization?.name,
      done: false,
    });
    expect(await getContact(deps, orgId, contact.id)).toMatchObject({
      id: contact.id,
      status: 'unsubscribed',
      unsubscribedAt: expect.any(String),
    });
  });
});

describe('topic opt-out links', () => {
  it('reads without changing, then records the opt-out on POST, once', async () => {
    const { deps, orgId, topic, contact, topicOptOut } = await setup();
    expect(await readTopicOptOutLink(deps, topicOptOut)).toMatchObject({
      kind: 'contact',
      topicName: 'Offers',
      done: false,
    });
    expect(
      (await recipientsWhoDeclined(deps, orgId, topic.id, [contact.email]))
        .size,
    ).toBe(0);
    expect(await optOutByLink(deps, topicOptOut)).toMatchObject({
      done: false,
    });
    expect(await optOutByLink(deps, topicOptOut)).toMatchObject({ done: true });
    expect([
      ...(await recipientsWhoDeclined(deps, orgId, topic.id, [contact.email])),
    ]).toEqual([contact.email]);
    // The reader stays subscribed to everything else.
    expect((await getContact(deps, orgId, contact.id)).status).toBe(
      'subscribed',
    );
  });
});
