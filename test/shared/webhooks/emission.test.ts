/**
 * Issue 32, §1: webhook events are taken from committed facts — the
 * `contacts` and `journeys` stream consumers and the `events` consumer —
 * on the embedded engine with the journeys' world. Every event published
 * matches its type's body in the OpenAPI document (payloads.ts), names the
 * resource as the API shows it, and is published again with the same id
 * when its fact is read again. An organization no endpoint listens to
 * costs no message and no read beyond the sink's question.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  type EventsDeps,
  eventsConsumer,
} from '../../../functions/events/consumer.ts';
import type { Caller } from '../../../shared/access/model.ts';
import {
  addContact,
  unsubscribeContact,
} from '../../../shared/audience/contacts.ts';
import { tagContact } from '../../../shared/audience/tags.ts';
import { createCampaign } from '../../../shared/campaigns/campaigns.ts';
import { requestSend } from '../../../shared/campaigns/send.ts';
import type { SesEvent } from '../../../shared/delivery/ses-event.ts';
import { addSuppressions } from '../../../shared/delivery/suppressions.ts';
import { erasePerson } from '../../../shared/privacy/erase.ts';
import { createTemplate } from '../../../shared/templates/templates.ts';
import type {
  WebhookEvent,
  WebhookEventType,
} from '../../../shared/webhooks/events.ts';
import {
  payloadOf,
  WEBHOOK_EVENT_TYPES,
} from '../../../shared/webhooks/events.ts';
import { webhookPayloadSchema } from '../../../shared/webhooks/payloads.ts';
import type { WebhookEventSink } from '../../../shared/webhooks/ports.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import {
  activeSequence,
  journeyWorld,
  type World,
} from '../../support/journeys.ts';

/** A sink that records what it is given, wanting every type of `orgIds`. */
const recordingSink = (orgIds: string[]) => {
  const published: WebhookEvent[] = [];
  const asked: string[] = [];
  const sink: WebhookEventSink = {
    wanted: async (orgId) => {
      asked.push(orgId);
      return new Set<WebhookEventType>(
        orgIds.includes(orgId) ? WEBHOOK_EVENT_TYPES : [],
      );
    },
    publish: async (events) => {
      published.push(...events);
    },
  };
  return { sink, published, asked };
};

const listening = (w: World, orgIds = [w.orgId]) => {
  const recorded = recordingSink(orgIds);
  (w.deps as unknown as { webhookEvents: WebhookEventSink }).webhookEvents =
    recorded.sink;
  return recorded;
};

/** Holds every event to its type's documented body. */
const expectDocumented = (events: WebhookEvent[]) => {
  for (const event of events) {
    const parsed = v.safeParse(
      webhookPayloadSchema(event.type),
      payloadOf(event),
    );
    expect(
      parsed.success
        ? []
        : parsed.issues.map(
            (i) => `${event.type}: ${v.getDotPath(i)} ${i.message}`,
          ),
    ).toEqual([]);
    expect(parsed.output).toEqual(payloadOf(event));
  }
};

const ownerOf = (orgId: string): Caller => ({
  orgId,
  keyId: randomUUID(),
  userId: randomUUID(),
  role: 'owner',
});

describe('webhook events from committed facts (issue 32 §1)', () => {
  it("a contact's writes: created, subscribed, tagged (named), unsubscribed with how — each the contact as the API shows it", async () => {
    // Arrange
    const w = await journeyWorld();
    const { published } = listening(w);
    // Act
    const { contact } = await addContact(w.deps, w.orgId, w.listId, {
      email: uniqueEmail('ada'),
      doubleOptIn: false,
    });
    await tagContact(w.deps, w.orgId, contact.id, { name: 'vip' });
    await unsubscribeContact(w.deps, w.orgId, contact.id);
    await w.events.settle();
    // Assert
    expect(published.map((e) => e.type)).toEqual([
      'contact.created',
      'contact.subscribed',
      'contact.tagged',
      'contact.unsubscribed',
    ]);
    expectDocumented(published);
    expect(published[2]?.data.tag).toMatchObject({ name: 'vip' });
    expect(published[3]?.data).toMatchObject({
      via: 'api',
      contact: {
        id: contact.id,
        status: 'unsubscribed',
        tags: [{ name: 'vip' }],
      },
    });
  });

  it('an organization no endpoint listens to: nothing published, no tag read — only the question', async () => {
    // Arrange
    const w = await journeyWorld();
    const other = await orgWithList(w.deps);
    const { published, asked } = listening(w, []);
    // Act
    const { contact } = await addContact(w.deps, other.orgId, other.listId, {
      email: uniqueEmail('quiet'),
      doubleOptIn: false,
    });
    await tagContact(w.deps, other.orgId, contact.id, { name: 'vip' });
    await w.events.settle();
    // Assert
    expect(published).toEqual([]);
    expect(asked).toContain(other.orgId);
  });

  it('a campaign: sending then sent with its progress; a journey: enrolled then completed; an erasure: contact.deleted and contact.erased with ids only', async () => {
    // Arrange
    const w = await journeyWorld();
    const { published } = listening(w);
    const sequence = await activeSequence(w, { steps: 1 });
    const email = uniqueEmail('grace');
    const { contact } = await addContact(w.deps, w.orgId, w.listId, {
      email,
      doubleOptIn: false,
    });
    await w.events.settle();
    await w.run();
    await w.events.settle();
    const template = await createTemplate(w.deps, w.orgId, {
      name: 'News',
      defaultSubject: 'News',
      content: '<p>Hi</p><a href="{{unsubscribeUrl}}">stop</a>',
    });
    const campaign = await createCampaign(w.deps, w.orgId, {
      name: 'November',
      templateId: template.id,
      listId: w.listId,
      segmentId: null,
      tagId: null,
      topicId: null,
      sendingIdentityId: null,
    });
    // Act
    await requestSend(w.deps as never, w.orgId, campaign.id, {});
    await w.drain();
    await w.events.settle();
    await erasePerson(w.deps, ownerOf(w.orgId), { email });
    await w.events.settle();
    // Assert
    const types = published.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'sequence.enrolled',
        'sequence.completed',
        'campaign.sending',
        'campaign.sent',
        'contact.deleted',
        'contact.erased',
      ]),
    );
    expectDocumented(published);
    const sent = published.find((e) => e.type === 'campaign.sent');
    expect(sent?.data.campaign).toMatchObject({
      id: campaign.id,
      status: 'sent',
      progress: { sent: 1 },
    });
    const journey = published.find((e) => e.type === 'sequence.completed');
    expect(journey?.data.journey).toMatchObject({
      sequenceId: sequence.sequenceId,
      contactId: contact.id,
      status: 'completed',
    });
    const erased = published.find((e) => e.type === 'contact.erased');
    expect(erased?.data.contactIds).toEqual([contact.id]);
    const afterErasure = published.slice(types.indexOf('contact.deleted'));
    expect(JSON.stringify(afterErasure)).not.toContain(email);
  });

  it("SES's events: mail.delivered and mail.clicked per recipient, published once per batch; the same event again has the same id", async () => {
    // Arrange
    const w = await journeyWorld();
    const { published } = listening(w);
    const { contact } = await addContact(w.deps, w.orgId, w.listId, {
      email: uniqueEmail('mae'),
      doubleOptIn: false,
    });
    const mail: SesEvent['mail'] = {
      messageId: 'ses-1',
      timestamp: w.now().toISOString(),
      destination: [contact.email],
      tags: { org: [w.orgId], kind: ['confirmation'], contact: [contact.id] },
    };
    const delivered = {
      eventType: 'Delivery',
      mail,
      delivery: {
        timestamp: w.now().toISOString(),
        recipients: [contact.email],
      },
    } as SesEvent;
    const clicked = {
      eventType: 'Click',
      mail,
      click: {
        timestamp: w.now().toISOString(),
        link: 'https://shop.example/x',
      },
    } as SesEvent;
    const closes: (() => Promise<void>)[] = [];
    const batch = {
      share: <T>(
        key: string,
        open: () => T,
        close: (value: T) => Promise<void>,
      ) => {
        const shared = (batch as unknown as { values: Map<string, T> }).values;
        if (!shared.has(key)) {
          const value = open();
          shared.set(key, value);
          closes.push(() => close(value));
        }
        return shared.get(key) as T;
      },
      values: new Map(),
    };
    const delivery = { messageId: 'm', receiveCount: 1, batch };
    const deps = w.deps as unknown as EventsDeps;
    // Act
    await eventsConsumer.handle(deps, delivered as never, delivery as never);
    await eventsConsumer.handle(deps, clicked as never, delivery as never);
    const beforeClose = published.length;
    for (const close of closes) await close();
    await eventsConsumer.handle(deps, delivered as never, {
      messageId: 'm2',
      receiveCount: 2,
    });
    // Assert
    expect(beforeClose).toBe(0);
    const mailEvents = published.filter((e) => e.type.startsWith('mail.'));
    expect(mailEvents.map((e) => e.type)).toEqual([
      'mail.delivered',
      'mail.clicked',
      'mail.delivered',
    ]);
    expect(mailEvents[2]?.id).toBe(mailEvents[0]?.id);
    expectDocumented(mailEvents);
  });

  it("SES's events after an erasure: none of the erased person's address, whatever its suppression's reason; one read of a batch's addresses, none when nobody listens", async () => {
    // Arrange: two people erased (one suppressed by hand before), one not.
    const w = await journeyWorld();
    const { published } = listening(w);
    const [erased, suppressedThenErased, kept] = await Promise.all(
      ['ida', 'ona', 'kim'].map(async (name) => {
        const { contact } = await addContact(w.deps, w.orgId, w.listId, {
          email: uniqueEmail(name),
          doubleOptIn: false,
        });
        return contact;
      }),
    );
    if (!erased || !suppressedThenErased || !kept) throw new Error('setup');
    await addSuppressions(w.deps, w.orgId, {
      addresses: [{ email: suppressedThenErased.email, reason: 'manual' }],
    });
    await w.events.settle();
    for (const { email } of [erased, suppressedThenErased]) {
      await erasePerson(w.deps, ownerOf(w.orgId), { email });
    }
    await w.events.settle();
    published.length = 0;
    const eventsOf = (contact: typeof kept, n: number): SesEvent[] => {
      const mail: SesEvent['mail'] = {
        messageId: `ses-${n}`,
        timestamp: w.now().toISOString(),
        destination: [contact.email],
        tags: {
          org: [w.orgId],
          kind: ['confirmation'],
          contact: [contact.id],
        },
      };
      const at = w.now().toISOString();
      return [
        { eventType: 'Open', mail, open: { timestamp: at } },
        {
          eventType: 'Click',
          mail,
          click: { timestamp: at, link: 'https://shop.example/x' },
        },
      ] as SesEvent[];
    };
    const ses = [
      ...eventsOf(erased, 1),
      ...eventsOf(suppressedThenErased, 2),
      ...eventsOf(kept, 3),
    ];
    const deps = w.deps as unknown as EventsDeps;
    const reads: string[][] = [];
    const { suppressions } = deps.delivery;
    deps.delivery.suppressions = (orgId, emails, options) => {
      reads.push([...emails]);
      return suppressions.call(deps.delivery, orgId, emails, options);
    };
    const handleBatch = async () => {
      const closes: (() => Promise<void>)[] = [];
      const values = new Map<string, unknown>();
      const batch = {
        share: <T>(
          key: string,
          open: () => T,
          close: (value: T) => Promise<void>,
        ) => {
          if (!values.has(key)) {
            const value = open();
            values.set(key, value);
            closes.push(() => close(value));
          }
          return values.get(key) as T;
        },
      };
      for (const [n, event] of ses.entries()) {
        await eventsConsumer.handle(
          deps,
          event as never,
          {
            messageId: `m${n}`,
            receiveCount: 1,
            batch,
          } as never,
        );
      }
      for (const close of closes) await close();
    };

    // Act
    await handleBatch();
    const readsWhenListened = reads.splice(0);
    (w.deps as unknown as { webhookEvents: WebhookEventSink }).webhookEvents =
      recordingSink([]).sink;
    await handleBatch();

    // Assert
    expect(published.map((e) => [e.type, e.data.email])).toEqual([
      ['mail.opened', kept.email],
      ['mail.clicked', kept.email],
    ]);
    expect(JSON.stringify(published)).not.toContain(erased.email);
    expect(JSON.stringify(published)).not.toContain(suppressedThenErased.email);
    // Its suppression kept its reason; only the lost address tells.
    const found = await suppressions.call(deps.delivery, w.orgId, [
      suppressedThenErased.email,
    ]);
    expect(found.get(suppressedThenErased.email)).toMatchObject({
      reason: 'manual',
      erased: true,
    });
    expect(readsWhenListened).toEqual([
      [erased.email, suppressedThenErased.email, kept.email],
    ]);
    expect(reads).toEqual([]);
  });
});
