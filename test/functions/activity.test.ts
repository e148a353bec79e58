/**
 * Issue 31, §4: each contact's activity through the pipeline (in process,
 * the table's change stream read by the real `contacts` consumer, SES's
 * events by the real service call): the writes of every path come out as
 * events newest first with how they came, mail events name their message,
 * the listing walks by cursor, members read it, another organization's
 * contact is unknown, a foreign or malformed cursor is a 400 naming
 * `cursor`, and no activity item holds an email address.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { JoseLinkSigner } from '../../shared/adapters/jose-link-signer.ts';
import { systemClock } from '../../shared/adapters/system.ts';
import { recordSesEvent } from '../../shared/delivery/events.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import {
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
  publicLinkUrl,
} from '../../shared/links/public-links.ts';
import {
  createInProcessStack,
  createOrganizationWithKeys,
  type InProcessStack,
} from '../support/api-client.ts';
import { TEST_LINK_SECRET } from '../support/dynamo.ts';

interface Event {
  id: string;
  type: string;
  via: string | null;
  tagId: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely and assert its shape
  [field: string]: any;
}

describe('a contact’s activity, through the pipeline', () => {
  let stack: InProcessStack;
  let key: string;
  let memberKey: string;
  let listId: string;

  beforeAll(async () => {
    stack = await createInProcessStack('Activity');
    key = stack.demoKey;
    await stack.admin(
      'member',
      'add',
      '--org',
      stack.orgId,
      '--email',
      'activity-reader@demo.test',
      '--role',
      'member',
    );
    memberKey =
      (
        await stack.admin(
          'key',
          'create',
          '--org',
          stack.orgId,
          '--email',
          'activity-reader@demo.test',
        )
      ).apiKey ?? '';
    listId = (
      await stack.call('/lists', {
        key,
        method: 'POST',
        body: { name: 'Activity' },
      })
    ).json.data.id;
    await stack.call('/fields', {
      key,
      method: 'POST',
      body: { key: 'plan', label: 'Plan', type: 'text' },
    });
  });

  const add = async (email: string, body: object = {}) =>
    (
      await stack.call(`/lists/${listId}/contacts`, {
        key,
        method: 'POST',
        body: { email, ...body },
      })
    ).json.data;

  /** Every event of a contact, page after page of `limit`. */
  const walk = async (contactId: string, limit: number) => {
    const pages: { data: Event[]; pagination: Record<string, unknown> }[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({
        limit: String(limit),
        ...(cursor ? { cursor } : {}),
      });
      const answer = await stack.call(
        `/contacts/${contactId}/activity?${query}`,
        { key: memberKey },
      );
      expect(answer.status).toBe(200);
      pages.push(answer.json);
      cursor = answer.json.pagination.nextCursor;
    } while (cursor);
    return pages;
  };

  const activityOf = async (contactId: string): Promise<Event[]> =>
    (await walk(contactId, 100)).flatMap((page) => page.data);

  it('turns every write of the API into its events, newest first, with how they came', async () => {
    // Arrange
    const email = `writes-${Date.now()}@demo.test`;
    const contact = await add(email, {
      tags: ['vip'],
      fields: { plan: 'free' },
    });
    const vip = contact.tags[0].id;
    // Act
    await stack.call(`/contacts/${contact.id}/tags`, {
      key,
      method: 'POST',
      body: { name: 'beta' },
    });
    await stack.call(`/contacts/${contact.id}/tags/${vip}`, {
      key,
      method: 'DELETE',
    });
    await stack.call(`/contacts/${contact.id}`, {
      key,
      method: 'PATCH',
      body: { fields: { plan: 'pro' } },
    });
    await stack.call(`/contacts/${contact.id}/unsubscribe`, {
      key,
      method: 'POST',
    });
    await stack.client.events.settle();
    const events = await activityOf(contact.id);
    // Assert
    expect(events.map((e) => [e.type, e.via])).toEqual([
      ['unsubscribed', 'api'],
      ['fields_changed', 'api'],
      ['untagged', 'api'],
      ['tagged', 'api'],
      ['tagged', 'api'],
      ['fields_changed', 'api'],
      ['subscribed', 'api'],
    ]);
    expect(events[2]?.tagId).toBe(vip);
    expect(events[1]?.changes).toEqual([
      { key: 'plan', from: 'free', to: 'pro' },
    ]);
    expect(events[0]).toMatchObject({
      status: null,
      consent: null,
      message: null,
      link: null,
      bounceType: null,
    });
    const ats = events.map((e) => e.at);
    expect([...ats].sort().reverse()).toEqual(ats);
  });

  it('walks the activity by cursor, each page costing itself, the last one exact', async () => {
    // Arrange: 7 events.
    const contact = await add(`pages-${Date.now()}@demo.test`, {
      tags: ['a1', 'a2', 'a3', 'a4', 'a5'],
      fields: { plan: 'team' },
    });
    await stack.client.events.settle();
    // Act
    const pages = await walk(contact.id, 3);
    const all = await activityOf(contact.id);
    // Assert
    expect(all).toHaveLength(7);
    expect(pages.map((p) => p.data.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((p) => p.data)).toEqual(all);
    expect(
      pages.map(({ pagination: { page, total, totalExact, nextCursor } }) => [
        page,
        total,
        totalExact,
        nextCursor === null,
      ]),
    ).toEqual([
      [1, 3, false, false],
      [2, 6, false, false],
      [3, 7, true, true],
    ]);
  });

  it('answers 400 naming cursor for a cursor it did not give, of another contact or another limit', async () => {
    // Arrange
    const first = await add(`cursor-a-${Date.now()}@demo.test`, {
      tags: ['c1', 'c2'],
    });
    const second = await add(`cursor-b-${Date.now()}@demo.test`);
    await stack.client.events.settle();
    const page = await stack.call(`/contacts/${first.id}/activity?limit=1`, {
      key,
    });
    const cursor = encodeURIComponent(page.json.pagination.nextCursor);
    // Act
    const answers = await Promise.all([
      stack.call(`/contacts/${first.id}/activity?cursor=garbage`, { key }),
      stack.call(`/contacts/${second.id}/activity?limit=1&cursor=${cursor}`, {
        key,
      }),
      stack.call(`/contacts/${first.id}/activity?limit=2&cursor=${cursor}`, {
        key,
      }),
      stack.call(`/contacts/${first.id}/activity?limit=0`, { key }),
    ]);
    // Assert
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400]);
    expect(answers.map((a) => a.json.details?.[0]?.field)).toEqual([
      'cursor',
      'cursor',
      'cursor',
      'limit',
    ]);
  });

  it('answers 404 for an unknown contact and for another organization’s, as the same', async () => {
    // Arrange
    const contact = await add(`tenancy-${Date.now()}@demo.test`);
    await stack.client.events.settle();
    const other = await createOrganizationWithKeys(stack.client, 'Other');
    // Act
    const foreign = await stack.call(`/contacts/${contact.id}/activity`, {
      key: other.memberKey,
    });
    const unknown = await stack.call(
      '/contacts/0191d3f0-0000-7000-8000-000000000000/activity',
      { key },
    );
    // Assert
    expect([foreign.status, foreign.json.code]).toEqual([
      404,
      'contact.notFound',
    ]);
    expect(unknown.json).toEqual({
      ...foreign.json,
      error: foreign.json.error.replace(
        contact.id,
        '0191d3f0-0000-7000-8000-000000000000',
      ),
    });
  });

  describe('with links and SES’s events', () => {
    const links = new JoseLinkSigner(async () => TEST_LINK_SECRET, systemClock);
    const unsubscribeLink = async (contactId: string) =>
      publicLinkUrl(
        stack.info.api,
        'unsubscribe',
        await links.sign(
          LINK_PURPOSES.unsubscribe,
          { o: stack.orgId, c: contactId },
          MESSAGE_LINK_TTL_SECONDS,
        ),
      );

    it('tells the unsubscribe page’s button (link) from a mail client’s one-click', async () => {
      // Arrange
      const byPage = await add(`page-${Date.now()}@demo.test`);
      const byClient = await add(`client-${Date.now()}@demo.test`);
      const pageUrl = await unsubscribeLink(byPage.id);
      // Act: the page, then its button, as a browser posts it.
      const shown = await (await stack.fetch(pageUrl)).text();
      const action = /<form method="post" action="([^"]+)">/
        .exec(shown)?.[1]
        ?.replaceAll('&amp;', '&');
      const pressed = await stack.fetch(new URL(action ?? '', pageUrl).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      const clicked = await stack.fetch(await unsubscribeLink(byClient.id), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      await stack.client.events.settle();
      // Assert
      expect([pressed.status, clicked.status]).toEqual([200, 200]);
      expect((await activityOf(byPage.id))[0]).toMatchObject({
        type: 'unsubscribed',
        via: 'link',
      });
      expect((await activityOf(byClient.id))[0]).toMatchObject({
        type: 'unsubscribed',
        via: 'one_click',
      });
    });

    it('names each mail event’s message by its tags, the clicked link without the address, and a permanent bounce suppresses', async () => {
      // Arrange: SES's instants a day ago, before the contact's own.
      const email = `mail-${Date.now()}@demo.test`;
      const contact = await add(email);
      const dayAgo = Date.now() - 86_400_000;
      const ago = (seconds: number) =>
        new Date(dayAgo + seconds * 1000).toISOString();
      const campaignId = '0191d3f0-0000-7000-8000-00000000c0de';
      const mail = (at: string): SesEvent['mail'] => ({
        messageId: `m-${contact.id}`,
        timestamp: at,
        destination: [email],
        tags: {
          org: [stack.orgId],
          kind: ['campaign'],
          contact: [contact.id],
          campaign: [campaignId],
        },
      });
      const events: SesEvent[] = [
        { eventType: 'Send', mail: mail(ago(0)) },
        {
          eventType: 'Delivery',
          mail: mail(ago(0)),
          delivery: {
            timestamp: ago(1),
            recipients: [email],
          },
        },
        {
          eventType: 'Click',
          mail: mail(ago(0)),
          click: {
            timestamp: ago(300),
            link: `https://shop.example/offer?who=${encodeURIComponent(email)}`,
          },
        },
        {
          eventType: 'Bounce',
          mail: mail(ago(0)),
          bounce: {
            bounceType: 'Permanent',
            bounceSubType: 'General',
            bouncedRecipients: [{ emailAddress: email }],
            timestamp: ago(360),
          },
        },
      ];
      // Act: each event, and each again (a redelivery).
      for (const event of [...events, ...events]) {
        await recordSesEvent(stack.client.deps, event);
      }
      await stack.client.events.settle();
      const activity = await activityOf(contact.id);
      // Assert
      expect(activity.map((e) => [e.type, e.via])).toEqual([
        // The suppression the bounce made is a write of the contact: now.
        ['suppressed', 'delivery'],
        ['subscribed', 'api'],
        ['bounced', null],
        ['clicked', null],
        ['delivered', null],
        ['sent', null],
      ]);
      const [, , bounced, clicked, delivered] = activity;
      expect(delivered?.message).toEqual({
        id: `m-${contact.id}`,
        kind: 'campaign',
        campaignId,
        sequenceId: null,
        step: null,
      });
      expect(delivered?.at).toBe(ago(1));
      expect(clicked?.link).toBe('https://shop.example/offer?who=[email]');
      expect(bounced?.bounceType).toBe('Permanent');
      expect(activity[0]?.status).toBe('bounced');
    });

    it('names a sequence step by its sequence and number, and writes nothing for a message of no contact', async () => {
      // Arrange
      const contact = await add(`step-${Date.now()}@demo.test`);
      await stack.client.events.settle();
      const sequenceId = '0191d3f0-0000-7000-8000-00000000beef';
      const inOneHour = new Date(Date.now() + 3_600_000).toISOString();
      const activityItems = async () =>
        (await stack.client.scan()).filter(
          (item) => item._type === 'ContactActivity',
        ).length;
      const before = await activityItems();
      // Act
      await recordSesEvent(stack.client.deps, {
        eventType: 'Open',
        mail: {
          messageId: 'm-step',
          timestamp: inOneHour,
          destination: ['x@demo.test'],
          tags: {
            org: [stack.orgId],
            kind: ['sequence'],
            contact: [contact.id],
            sequence: [sequenceId],
            step: ['2'],
          },
        },
        open: { timestamp: inOneHour },
      });
      const afterStep = await activityItems();
      await recordSesEvent(stack.client.deps, {
        eventType: 'Open',
        mail: {
          messageId: 'm-test',
          timestamp: inOneHour,
          destination: ['x@demo.test'],
          tags: { org: [stack.orgId], kind: ['test'] },
        },
        open: { timestamp: inOneHour },
      });
      const activity = await activityOf(contact.id);
      // Assert
      expect(activity[0]).toMatchObject({
        type: 'opened',
        message: {
          id: 'm-step',
          kind: 'sequence',
          campaignId: null,
          sequenceId,
          step: 2,
        },
      });
      expect(afterStep - before).toBe(1);
      // A test send's event is of no contact: no activity.
      expect(await activityItems()).toBe(afterStep);
    });
  });

  it('never stores an email address in an activity item, and each expires 400 days after its event (full scan)', async () => {
    // Arrange: the activity of every test above, and one more of each path.
    await stack.client.events.settle();
    // Act
    const items = (await stack.client.scan()).filter(
      (item) => item._type === 'ContactActivity',
    );
    // Assert
    expect(items.length).toBeGreaterThan(20);
    const text = JSON.stringify(items).toLowerCase();
    expect(text).not.toMatch(/@demo\.test/);
    expect(text).not.toContain('%40demo.test');
    for (const item of items) {
      expect(item.ttl).toBe(
        Math.floor((Date.parse(String(item.at)) + 400 * 86_400_000) / 1000),
      );
    }
  });
});
