/**
 * Erasure of a person (issue 31 §2), on the embedded engine with the
 * journeys' world: the address is gone from every item of the table (a
 * full scan proves it), every counter is exact, journeys end with their
 * schedules, and what must survive survives without the address.
 */
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../../shared/access/model.ts';
import { addContact, getContact } from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { suppressAddresses } from '../../../shared/audience/suppressed.ts';
import { tagContact } from '../../../shared/audience/tags.ts';
import { createCampaign } from '../../../shared/campaigns/campaigns.ts';
import { requestSend } from '../../../shared/campaigns/send.ts';
import { recordSesEvent } from '../../../shared/delivery/events.ts';
import { createField } from '../../../shared/fields/fields.ts';
import { erasePerson } from '../../../shared/privacy/erase.ts';
import { stepScheduleName } from '../../../shared/sequences/step-schedule.ts';
import { addressCounter } from '../../../shared/signup/model.ts';
import { createTemplate } from '../../../shared/templates/templates.ts';
import { createTopic, optOutOfTopic } from '../../../shared/topics/topics.ts';
import { uniqueEmail } from '../../support/audience.ts';
import { scanTable } from '../../support/dynamo.ts';
import {
  activeSequence,
  journeyOf,
  journeyWorld,
  type World,
} from '../../support/journeys.ts';

const ownerOf = (orgId: string): Caller => ({
  orgId,
  keyId: 'key-1',
  userId: 'user-1',
  role: 'owner',
});

/**
 * A person known everywhere: in two lists (one tagged), with names and a
 * field, enrolled in a sequence with a step pending, opted out of a topic,
 * sent a campaign, counted by the sign-up form; and a neighbour who stays.
 */
const personEverywhere = async (w: World) => {
  const { deps, orgId, listId } = w;
  const sequence = await activeSequence(w, { steps: 2, hours: 24 });
  const second = await createList(deps, orgId, { name: 'Second' });
  await createField(deps, orgId, { key: 'plan', label: 'Plan', type: 'text' });
  const email = uniqueEmail('zebulon');
  const person = {
    email,
    firstName: 'Zebulonius',
    lastName: 'Quixotelli',
    doubleOptIn: false,
    fields: { plan: 'Platinum-Zebulon' },
  };
  const first = (await addContact(deps, orgId, listId, person)).contact;
  const other = (await addContact(deps, orgId, second.id, person)).contact;
  const neighbour = (
    await addContact(deps, orgId, second.id, {
      email: uniqueEmail('neighbour'),
      doubleOptIn: false,
    })
  ).contact;
  await tagContact(deps, orgId, other.id, { name: 'vip' });
  await tagContact(deps, orgId, neighbour.id, { name: 'vip' });
  const topic = await createTopic(deps, orgId, { name: 'Offers' });
  await optOutOfTopic(deps, orgId, topic.id, first.id);
  await w.events.settle();
  await w.run();
  const template = await createTemplate(deps, orgId, {
    name: 'News',
    defaultSubject: 'News',
    content: '<p>Hi {{firstName}}</p><a href="{{unsubscribeUrl}}">stop</a>',
  });
  const campaign = await createCampaign(deps, orgId, {
    name: 'November',
    templateId: template.id,
    listId,
    segmentId: null,
    tagId: null,
    topicId: null,
    sendingIdentityId: null,
  });
  await requestSend(deps as never, orgId, campaign.id, {});
  await w.drain();
  await deps.signupLimits.take(addressCounter(orgId, email), 0, 3600, 5);
  // A third list under double opt-in: a confirmation goes out, and SES's
  // delivery of it is recorded under its message, naming the recipient.
  const third = await createList(deps, orgId, { name: 'Third' });
  const pending = (
    await addContact(deps, orgId, third.id, { ...person, doubleOptIn: true })
  ).contact;
  const confirmation = w.mail.accepted.at(-1);
  if (confirmation?.to !== email) throw new Error('no confirmation sent');
  await recordSesEvent(deps, {
    eventType: 'Delivery',
    mail: {
      messageId: `msg-${w.mail.accepted.length}`,
      timestamp: w.now().toISOString(),
      destination: [email],
      tags: {
        org: [orgId],
        kind: ['confirmation'],
        contact: [pending.id],
      },
    },
    delivery: {
      timestamp: w.now().toISOString(),
      recipients: [email],
    },
  });
  return {
    email,
    first,
    other,
    neighbour,
    second,
    thirdId: third.id,
    topic,
    sequence,
    campaign,
  };
};

/** Every item of the table that mentions any of these texts. */
const itemsMentioning = async (tableName: string, texts: string[]) =>
  (await scanTable(tableName)).filter((item) => {
    const json = JSON.stringify(item, (_, value) =>
      value instanceof Set ? [...value] : value,
    ).toLowerCase();
    return texts.some((text) => json.includes(text.toLowerCase()));
  });

describe('erasing a person (issue 31 §2)', () => {
  it('by contact id: no item of the table holds the address or the names afterwards (full scan); counters stay exact; the journey ends with its schedule', async () => {
    // Arrange
    const w = await journeyWorld();
    const p = await personEverywhere(w);
    const traces = [p.email, 'Zebulonius', 'Quixotelli', 'Platinum-Zebulon'];
    const before = await itemsMentioning(w.tableName, traces);
    expect(before.length).toBeGreaterThan(8);
    // The confirmation's delivery is recorded under its message.
    expect(before.some((item) => String(item.PK).includes('#MESSAGE#'))).toBe(
      true,
    );
    const journey = await journeyOf(w, p.sequence.sequenceId, p.first.id);
    expect(journey?.status).toBe('active');

    // Act
    const erasure = await erasePerson(w.deps, ownerOf(w.orgId), {
      contactId: p.first.id,
    });
    await w.events.settle();

    // Assert: nothing left but what the scan shows.
    expect(await itemsMentioning(w.tableName, traces)).toEqual([]);
    expect(erasure).toMatchObject({
      target: 'contact',
      contacts: 3,
      journeys: 1,
      topicOptOuts: 1,
      erasedBy: { keyId: 'key-1', userId: 'user-1' },
    });
    expect(erasure.items).toBeGreaterThanOrEqual(8);
    // The contacts are gone, the neighbour stays.
    await expect(getContact(w.deps, w.orgId, p.first.id)).rejects.toMatchObject(
      { code: 'contact.notFound' },
    );
    expect((await getContact(w.deps, w.orgId, p.neighbour.id)).email).toBe(
      p.neighbour.email,
    );
    // Counters: each list, the tag, the topic count what remains.
    const lists = await Promise.all(
      [w.listId, p.second.id].map((id) => w.deps.lists.get(w.orgId, id)),
    );
    expect(lists.map((l) => l?.contactCount)).toEqual([0, 1]);
    expect(lists.map((l) => l?.statusCounts.subscribed)).toEqual([0, 1]);
    expect((await w.deps.lists.get(w.orgId, p.thirdId))?.contactCount).toBe(0);
    const [tag] = (await w.deps.tags.page(w.orgId, { page: 1, limit: 10 }))
      .items;
    expect(tag?.contactCount).toBe(1);
    expect((await w.deps.topics.get(w.orgId, p.topic.id))?.optOutCount).toBe(0);
    // The journey and its pending step are gone.
    expect(
      await journeyOf(w, p.sequence.sequenceId, p.first.id),
    ).toBeUndefined();
    const pending = stepScheduleName(
      w.orgId,
      p.sequence.sequenceId,
      p.first.id,
      journey?.position ?? -1,
    );
    expect(w.cancelled).toContain(pending);
    expect(w.schedules.has(pending)).toBe(false);
    // The campaign keeps its figures.
    expect(await w.deps.campaigns.get(w.orgId, p.campaign.id)).toMatchObject({
      status: 'sent',
      progress: { sent: 1 },
    });
    // The address stays suppressed, by its key alone: adding it again
    // stores it unsubscribed, never subscribed.
    const kept = await w.deps.delivery.suppressions(w.orgId, [p.email]);
    expect(kept.get(p.email)).toMatchObject({ reason: 'erased' });
    const again = await addContact(w.deps, w.orgId, w.listId, {
      email: p.email,
      doubleOptIn: false,
    });
    expect(again.contact.status).toBe('unsubscribed');
    // The audit record is kept, without the person.
    const recorded = await w.deps.erasures.page(w.orgId, {
      page: 1,
      limit: 10,
    });
    expect(recorded.items).toEqual([erasure]);
  });

  it('is idempotent (the kept suppression still names the address); an address never held is 404 person.notFound, writing nothing', async () => {
    // Arrange
    const w = await journeyWorld();
    const p = await personEverywhere(w);
    await erasePerson(w.deps, ownerOf(w.orgId), { email: p.email });

    // Act
    const again = await erasePerson(w.deps, ownerOf(w.orgId), {
      email: p.email.toUpperCase(),
    });
    const before = await scanTable(w.tableName);
    const never = erasePerson(w.deps, ownerOf(w.orgId), {
      email: uniqueEmail('never'),
    });

    // Assert
    expect(again).toMatchObject({
      target: 'email',
      contacts: 0,
      journeys: 0,
      topicOptOuts: 0,
    });
    await expect(never).rejects.toMatchObject({ code: 'person.notFound' });
    expect(await scanTable(w.tableName)).toEqual(before);
  });

  it('a suppression the address had keeps its reason, without the address in it, its log entry or a lift', async () => {
    // Arrange: bounced once, lifted, then complained.
    const w = await journeyWorld();
    const email = uniqueEmail('bounced');
    await addContact(w.deps, w.orgId, w.listId, { email, doubleOptIn: false });
    const at = w.now().toISOString();
    await suppressAddresses(w.deps, w.orgId, [
      { email, reason: 'bounce', at, source: 'api' },
    ]);
    const [bounce] = (
      await w.deps.delivery.suppressions(w.orgId, [email])
    ).values();
    if (!bounce) throw new Error('not suppressed');
    await w.deps.delivery.lift(w.orgId, bounce, {
      at,
      by: 'key-1',
      forced: false,
    });
    w.advance(1000);
    await suppressAddresses(w.deps, w.orgId, [
      { email, reason: 'complaint', at: w.now().toISOString(), source: 'api' },
    ]);

    // Act
    await erasePerson(w.deps, ownerOf(w.orgId), { email });
    await w.events.settle();

    // Assert
    expect(await itemsMentioning(w.tableName, [email])).toEqual([]);
    const kept = await w.deps.delivery.suppressions(w.orgId, [email]);
    expect(kept.get(email)).toMatchObject({ reason: 'complaint' });
    const log = await w.deps.delivery.suppressionLog(w.orgId, {
      page: 1,
      limit: 10,
    });
    expect(log.items.map((entry) => [entry.reason, entry.email])).toEqual([
      ['complaint', undefined],
    ]);
  });

  it('a lift of an erased address whose suppression kept its reason writes the address nowhere', async () => {
    // Arrange: suppressed by hand, then erased.
    const w = await journeyWorld();
    const email = uniqueEmail('manual');
    await addContact(w.deps, w.orgId, w.listId, { email, doubleOptIn: false });
    await suppressAddresses(w.deps, w.orgId, [
      { email, reason: 'manual', at: w.now().toISOString(), source: 'api' },
    ]);
    await erasePerson(w.deps, ownerOf(w.orgId), { email });
    await w.events.settle();
    const [kept] = (
      await w.deps.delivery.suppressions(w.orgId, [email])
    ).values();
    if (!kept) throw new Error('not kept');

    // Act
    const lift = await w.deps.delivery.lift(w.orgId, kept, {
      at: w.now().toISOString(),
      by: 'key-1',
      forced: false,
    });

    // Assert
    expect(lift).toMatchObject({ reason: 'manual' });
    expect(lift.email).toBeUndefined();
    expect(await itemsMentioning(w.tableName, [email])).toEqual([]);
  });

  it('adds racing an erasure end as if one came after it: no contact of the address is left subscribed, and each list counts what it holds', async () => {
    const w = await journeyWorld();
    const second = await createList(w.deps, w.orgId, { name: 'Second' });
    for (let round = 0; round < 10; round++) {
      // Arrange
      const email = uniqueEmail(`race${round}`);
      await addContact(w.deps, w.orgId, w.listId, {
        email,
        doubleOptIn: false,
      });
      const add = (listId: string) =>
        addContact(w.deps, w.orgId, listId, {
          email,
          firstName: 'Racer',
          doubleOptIn: false,
        }).catch(() => undefined);

      // Act
      const [erased] = await Promise.allSettled([
        erasePerson(w.deps, ownerOf(w.orgId), { email }),
        add(w.listId),
        add(second.id),
        add(w.listId),
        add(second.id),
      ]);

      // Assert
      if (erased.status !== 'fulfilled') continue;
      const left = await w.deps.contacts.ofAddress(w.orgId, email);
      expect(left.filter((c) => c.status === 'subscribed')).toEqual([]);
    }
    for (const listId of [w.listId, second.id]) {
      const list = await w.deps.lists.get(w.orgId, listId);
      const all = await w.deps.contacts.page(
        w.orgId,
        listId,
        {},
        { page: 1, limit: 100 },
      );
      expect(list?.contactCount).toBe(all.total);
    }
  });

  it('a contact id of another organization is unknown (404), and nothing of that organization changes', async () => {
    // Arrange
    const w = await journeyWorld();
    const p = await personEverywhere(w);
    const before = await scanTable(w.tableName);

    // Act
    const erasing = erasePerson(w.deps, ownerOf('another-org'), {
      contactId: p.first.id,
    });

    // Assert
    await expect(erasing).rejects.toMatchObject({ code: 'contact.notFound' });
    expect(await scanTable(w.tableName)).toEqual(before);
  });
});
