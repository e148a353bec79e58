/**
 * Big lists, on the embedded engine: what a campaign would reach comes from
 * kept counters (subscribed per list × tag, subscribed decliners per list ×
 * topic) equal to a brute-force count; a tagged send walks the tag index,
 * reading about twice its carriers whatever the list's size; the sender
 * re-reads exactly its recipients, honouring what changed after the batch
 * was made.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoAudienceReader } from '../../../shared/adapters/aws/dynamo-audience-reader.ts';
import { DynamoContactRepository } from '../../../shared/adapters/aws/dynamo-contact-repository.ts';
import { DynamoListRepository } from '../../../shared/adapters/aws/dynamo-list-repository.ts';
import { DynamoTopicRepository } from '../../../shared/adapters/aws/dynamo-topic-repository.ts';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import {
  addContact,
  unsubscribeContact,
} from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { tagContact, untagContact } from '../../../shared/audience/tags.ts';
import {
  createCampaign,
  recipientCountOf,
} from '../../../shared/campaigns/campaigns.ts';
import {
  type BatchMessage,
  deliverBatch,
} from '../../../shared/campaigns/deliver.ts';
import {
  type DispatchMessage,
  dispatchCampaign,
} from '../../../shared/campaigns/dispatch.ts';
import { requestSend } from '../../../shared/campaigns/send.ts';
import { keys } from '../../../shared/db/keys.ts';
import type { Deps } from '../../../shared/deps.ts';
import type { OutgoingMessage, QueueSender } from '../../../shared/ports.ts';
import { createTemplate } from '../../../shared/templates/templates.ts';
import {
  createTopic,
  optOutOfTopic,
  undoTopicOptOut,
} from '../../../shared/topics/topics.ts';
import { type DynamoCall, meterDynamo } from '../../bench/dynamo-meter.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';

type PipelineDeps = Deps & {
  queues: { dispatch: QueueSender; send: QueueSender };
};

/**
 * An organization with a list of `size` contacts (every `rare`-th tagged
 * "rare", every third "common", every fifth unsubscribed), a topic, a
 * template, and the pipeline's queues and mailer captured.
 */
const world = async (size: number, rare: number) => {
  const { deps: base, tableName, events } = await createTestDeps();
  const dispatched: DispatchMessage[] = [];
  const batches: BatchMessage[] = [];
  const accepted: OutgoingMessage[] = [];
  const deps: PipelineDeps = {
    ...base,
    mailer: {
      send: async (message) => {
        accepted.push(message);
        return { messageId: `msg-${accepted.length}` };
      },
    },
    queues: {
      dispatch: { send: async (m) => void dispatched.push(m as never) },
      send: { send: async (m) => void batches.push(m as never) },
    },
  };
  const { orgId, listId } = await orgWithList(deps);
  const lines = Array.from({ length: size }, (_, i) => ({
    email: `c${String(i).padStart(5, '0')}@example.test`,
    ...(i % 5 === 4 ? { status: 'unsubscribed' } : {}),
    tags: [
      ...(i % rare === 0 ? ['rare'] : []),
      ...(i % 3 === 0 ? ['common'] : []),
    ],
  }));
  for (let i = 0; i < lines.length; i += 500) {
    await importContacts(deps, orgId, listId, lines.slice(i, i + 500));
  }
  await events.settle();
  const tags = await deps.tags.findByNames(orgId, ['rare', 'common']);
  const topic = await createTopic(deps, orgId, { name: 'News' });
  const template = await createTemplate(deps, orgId, {
    name: 'T',
    defaultSubject: 'Hello',
    content: '<a href="{{unsubscribeUrl}}">Unsubscribe</a>',
  });
  const dynamo = testEngineClient();
  /** Every contact of the list, read from the table. */
  const brute = async () => {
    const { PK, skPrefix } = keys.contactsOfList(orgId, listId);
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :p)',
          ExpressionAttributeValues: { ':pk': PK, ':p': skPrefix },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items.map((item) => ({
      id: String(item.id),
      email: String(item.email),
      status: String(item.status),
      tagIds: [...((item.tagIds as Set<string> | undefined) ?? [])],
    }));
  };
  /** Adapters on a metered client: what a call reads. */
  const metered = () => {
    const calls: DynamoCall[] = [];
    const client = testEngineClient();
    meterDynamo(client, calls);
    const table = { client, tableName };
    return {
      calls,
      audience: new DynamoAudienceReader(table),
      lists: new DynamoListRepository(table),
      contacts: new DynamoContactRepository(table),
      topics: new DynamoTopicRepository(table),
    };
  };
  const campaign = async (target: { tagId?: string; topicId?: string }) =>
    createCampaign(deps, orgId, {
      name: 'C',
      templateId: template.id,
      listId,
      tagId: target.tagId ?? null,
      topicId: target.topicId ?? null,
      sendingIdentityId: null,
    });
  return {
    deps,
    events,
    orgId,
    listId,
    rareId: tags.get('rare')?.id as string,
    commonId: tags.get('common')?.id as string,
    topicId: topic.id,
    dispatched,
    batches,
    accepted,
    brute,
    metered,
    campaign,
  };
};

describe('big lists', () => {
  it('recipientCount of a list, a tag, a topic and a tag with a topic equals a brute-force count; a list, a tag or a topic reads kept counters in at most 3 requests (a view estimates a tag with a topic, and says so)', async () => {
    // Arrange: 120 contacts; one in seven declines the topic.
    const w = await world(120, 30);
    const everyone = await w.brute();
    const decliners = everyone.filter((_, i) => i % 7 === 0);
    for (const contact of decliners) {
      await optOutOfTopic(w.deps, w.orgId, w.topicId, contact.id);
    }
    const declined = new Set(decliners.map((c) => c.email));
    const expected = (tagId?: string, topic?: boolean) =>
      everyone.filter(
        (c) =>
          c.status === 'subscribed' &&
          (!tagId || c.tagIds.includes(tagId)) &&
          (!topic || !declined.has(c.email)),
      ).length;
    const targets = [
      {},
      { tagId: w.commonId },
      { tagId: w.rareId },
      { topicId: w.topicId },
      { tagId: w.commonId, topicId: w.topicId },
    ];

    // Act
    const counted = [];
    for (const target of targets) {
      const m = w.metered();
      const campaign = await w.campaign(target);
      const count = await recipientCountOf(
        { ...w.deps, ...m },
        w.orgId,
        campaign,
        { exact: true },
      );
      counted.push({ count, requests: m.calls.length });
    }

    // Assert
    expect(counted.map((c) => c.count)).toEqual([
      { count: expected(), exact: true },
      { count: expected(w.commonId), exact: true },
      { count: expected(w.rareId), exact: true },
      { count: expected(undefined, true), exact: true },
      { count: expected(w.commonId, true), exact: true },
    ]);
    for (const { requests } of counted.slice(0, 4)) {
      expect(requests).toBeLessThanOrEqual(3);
    }
    const shown = await recipientCountOf(
      w.deps,
      w.orgId,
      await w.campaign(targets[4] ?? {}),
    );
    expect(shown.exact).toBe(false);
  }, 300_000);

  it('a send to a rare tag hands out its carriers from the tag index, reading about twice its carriers, never the rest of the list', async () => {
    // Arrange: 600 contacts, one in 200 tagged rare (3, all subscribed).
    const w = await world(600, 200);
    const carriers = (await w.brute()).filter(
      (c) => c.status === 'subscribed' && c.tagIds.includes(w.rareId),
    );
    const campaign = await w.campaign({ tagId: w.rareId });
    await requestSend(w.deps, w.orgId, campaign.id, {});
    const m = w.metered();
    const message = w.dispatched.shift();
    if (!message) throw new Error('no dispatch message');

    // Act
    await dispatchCampaign(
      { ...w.deps, audience: m.audience },
      message as DispatchMessage,
    );

    // Assert
    expect(w.batches).toHaveLength(1);
    expect(w.batches[0]?.recipients.map((r) => r.email)).toEqual(
      carriers.map((c) => c.email),
    );
    const items = m.calls.reduce((sum, call) => sum + call.items, 0);
    expect(items).toBeLessThanOrEqual(2 * carriers.length);
    expect(m.calls.length).toBeLessThanOrEqual(2);
  }, 300_000);

  it('a sender honours an untag and a topic opt-out that landed after its batch was made: both skipped, never sent', async () => {
    // Arrange
    const w = await world(40, 1);
    const campaign = await w.campaign({
      tagId: w.rareId,
      topicId: w.topicId,
    });
    await requestSend(w.deps, w.orgId, campaign.id, {});
    const message = w.dispatched.shift();
    if (!message) throw new Error('no dispatch message');
    await dispatchCampaign(w.deps, message as DispatchMessage);
    const [batch] = w.batches;
    const [untagged, declining, unsubscribed] = batch?.recipients ?? [];
    if (!batch || !untagged || !declining || !unsubscribed) {
      throw new Error('no batch');
    }
    await untagContact(w.deps, w.orgId, untagged.contactId, w.rareId);
    await optOutOfTopic(w.deps, w.orgId, w.topicId, declining.contactId);
    await unsubscribeContact(w.deps, w.orgId, unsubscribed.contactId);

    // Act
    await deliverBatch(w.deps, batch);

    // Assert
    const sent = w.accepted.map((mail) => mail.to);
    expect(sent).not.toContain(untagged.email);
    expect(sent).not.toContain(declining.email);
    expect(sent).not.toContain(unsubscribed.email);
    expect(sent).toHaveLength(batch.recipients.length - 3);
    const state = await w.deps.sends.get(w.orgId, campaign.id);
    expect(state?.progress).toMatchObject({ skipped: 3 });
  }, 300_000);

  it('keeps the counters exact when a tag, an unsubscribe, an opt-out and an opt-in of the same contacts race, and when an opt-out races an add of its address to another list', async () => {
    // Arrange
    const w = await world(12, 1);
    const other = await createList(w.deps, w.orgId, { name: 'Other' });
    const contacts = await w.brute();

    // Act: every operation on every contact at once.
    await Promise.allSettled(
      contacts.flatMap((c, i) => [
        tagContact(w.deps, w.orgId, c.id, { name: 'late' }),
        unsubscribeContact(w.deps, w.orgId, c.id),
        optOutOfTopic(w.deps, w.orgId, w.topicId, c.id),
        ...(i % 2 ? [undoTopicOptOut(w.deps, w.orgId, w.topicId, c.id)] : []),
        addContact(w.deps, w.orgId, other.id, {
          email: c.email,
          doubleOptIn: false,
          tags: ['late'],
        }),
      ]),
    );

    // Assert: each counter equals what the items say.
    const late = (await w.deps.tags.findByNames(w.orgId, ['late'])).get('late');
    const optedOut = await w.deps.topics.optedOut(
      w.orgId,
      w.topicId,
      contacts.map((c) => c.email),
    );
    for (const listId of [w.listId, other.id]) {
      const { items } = await w.deps.contacts.page(
        w.orgId,
        listId,
        {},
        { page: 1, limit: 100 },
        undefined,
      );
      const subscribed = items.filter((c) => c.status === 'subscribed');
      expect(
        await w.deps.audience.countSubscribedWithTag(
          w.orgId,
          listId,
          late?.id as string,
        ),
      ).toBe(
        subscribed.filter((c) => c.tagIds.includes(late?.id ?? '')).length,
      );
      expect(
        await w.deps.audience.countDeclinedInList(w.orgId, w.topicId, listId),
      ).toBe(subscribed.filter((c) => optedOut.has(c.email)).length);
    }
  }, 300_000);
});
