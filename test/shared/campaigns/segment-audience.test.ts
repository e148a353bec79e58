/**
 * A campaign narrowed to a segment of its list, on the embedded engine:
 * counted, walked by the dispatcher and checked again by the senders with
 * the same evaluator (`matchesSegment`), as the segment and the contacts
 * are at each of those instants. The API's side (POST and PATCH with
 * `segmentId`, the views) goes through the in-process client.
 */
import { describe, expect, it } from 'vitest';
import {
  addContact,
  updateContact,
} from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { createTag } from '../../../shared/audience/tags.ts';
import { createCampaign } from '../../../shared/campaigns/campaigns.ts';
import {
  type BatchMessage,
  deliverBatch,
} from '../../../shared/campaigns/deliver.ts';
import {
  type DispatchMessage,
  dispatchCampaign,
} from '../../../shared/campaigns/dispatch.ts';
import { requestSend } from '../../../shared/campaigns/send.ts';
import type { Deps } from '../../../shared/deps.ts';
import { createField } from '../../../shared/fields/fields.ts';
import type { OutgoingMessage, QueueSender } from '../../../shared/ports.ts';
import { CreateSegmentBody } from '../../../shared/segments/segment.schema.ts';
import {
  createSegment,
  deleteSegment,
} from '../../../shared/segments/segments.ts';
import { createTemplate } from '../../../shared/templates/templates.ts';
import { createTopic, optOutOfTopic } from '../../../shared/topics/topics.ts';
import { parse } from '../../../shared/validation.ts';
import {
  createApiClient,
  createOrganizationWithKeys,
} from '../../support/api-client.ts';
import { uniqueEmail } from '../../support/audience.ts';

const CONTENT = '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

/**
 * An organization with a list whose contacts named Keeper… the segment
 * "Keepers" matches, a template, the pipeline's queues and mailer
 * captured.
 */
const stack = async () => {
  const client = await createApiClient();
  const org = await createOrganizationWithKeys(client, 'Segment Co');
  const dispatched: DispatchMessage[] = [];
  const batches: BatchMessage[] = [];
  const accepted: OutgoingMessage[] = [];
  const deps: Deps & { queues: { dispatch: QueueSender; send: QueueSender } } =
    {
      ...client.deps,
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
  const { orgId } = org;
  const list = await createList(deps, orgId, { name: 'Readers' });
  const segmentOf = async (listId: string) =>
    (
      await createSegment(
        deps,
        orgId,
        parse(CreateSegmentBody, {
          name: `Keepers ${listId.slice(-4)}`,
          listId,
          match: 'all',
          conditions: [{ field: 'name', operator: 'contains', value: 'keep' }],
        }),
      )
    ).id;
  const template = await createTemplate(deps, orgId, {
    name: 'T',
    defaultSubject: 'Hello',
    content: CONTENT,
  });
  return {
    client,
    deps,
    orgId,
    key: org.ownerKey,
    listId: list.id,
    segmentId: await segmentOf(list.id),
    segmentOf,
    templateId: template.id,
    dispatched,
    batches,
    accepted,
    contact: async (firstName: string, tags: string[] = []) => {
      const email = uniqueEmail(firstName.toLowerCase());
      const { contact } = await addContact(deps, orgId, list.id, {
        email,
        firstName,
        doubleOptIn: false,
        tags,
      });
      return { id: contact.id, email };
    },
    drain: async () => {
      for (;;) {
        const message = dispatched.shift();
        if (message) {
          await dispatchCampaign(deps, message);
          continue;
        }
        const batch = batches.shift();
        if (!batch) return;
        await deliverBatch(deps, batch);
      }
    },
  };
};

describe('a campaign narrowed to a segment of its list', () => {
  it('recipientCount counts the subscribed contacts of list ∩ segment ∩ tag minus topic opt-outs; the views show segmentId (null for a campaign without one) and origin null', async () => {
    // Arrange
    const s = await stack();
    const vip = await createTag(s.deps, s.orgId, { name: 'VIP' });
    const topic = await createTopic(s.deps, s.orgId, { name: 'News' });
    await s.contact('Keeper One', ['VIP']);
    await s.contact('Keeper Two', ['VIP']);
    await s.contact('Keeper Three');
    await s.contact('Other', ['VIP']);
    const declining = await s.contact('Keeper Four', ['VIP']);
    await optOutOfTopic(s.deps, s.orgId, topic.id, declining.id);
    // A tag's walk reads the tag index, which follows the change stream.
    await s.client.events.settle();

    // Act
    const narrowed = await s.client.post('/campaigns', {
      key: s.key,
      body: {
        name: 'Narrowed',
        templateId: s.templateId,
        listId: s.listId,
        segmentId: s.segmentId,
        tagId: vip.id,
        topicId: topic.id,
      },
    });
    const whole = await s.client.post('/campaigns', {
      key: s.key,
      body: { name: 'Whole', templateId: s.templateId, listId: s.listId },
    });
    const rows = await s.client.get('/campaigns', { key: s.key });

    // Assert
    expect(narrowed.status).toBe(201);
    expect(narrowed.json.data).toMatchObject({
      segmentId: s.segmentId,
      origin: null,
      recipientCount: 2,
    });
    expect(whole.json.data).toMatchObject({
      segmentId: null,
      origin: null,
      recipientCount: 5,
    });
    expect(
      rows.json.data.map((row: { segmentId: string | null }) => row.segmentId),
    ).toEqual([null, s.segmentId]);
  });

  it('a segment of another list is refused: POST 400 segment.listMismatch naming segmentId, nothing created; PATCH moving the list away from its segment too', async () => {
    // Arrange
    const s = await stack();
    const other = await createList(s.deps, s.orgId, { name: 'Other' });
    const foreignSegment = await s.segmentOf(other.id);
    const body = {
      name: 'C',
      templateId: s.templateId,
      listId: s.listId,
      segmentId: s.segmentId,
    };
    const created = await s.client.post('/campaigns', { key: s.key, body });
    const id = created.json.data.id as string;

    // Act
    const refused = await s.client.post('/campaigns', {
      key: s.key,
      body: { ...body, segmentId: foreignSegment },
    });
    const moved = await s.client.patch(`/campaigns/${id}`, {
      key: s.key,
      body: { listId: other.id },
    });
    const movedBoth = await s.client.patch(`/campaigns/${id}`, {
      key: s.key,
      body: { listId: other.id, segmentId: foreignSegment },
    });
    const cleared = await s.client.patch(`/campaigns/${id}`, {
      key: s.key,
      body: { segmentId: null },
    });

    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      code: 'segment.listMismatch',
      details: [{ field: 'segmentId' }],
    });
    expect(moved.status).toBe(400);
    expect(moved.json.code).toBe('segment.listMismatch');
    expect(movedBoth.status).toBe(200);
    expect(movedBoth.json.data).toMatchObject({
      listId: other.id,
      segmentId: foreignSegment,
    });
    expect(cleared.json.data.segmentId).toBeNull();
    const all = await s.client.get('/campaigns', { key: s.key });
    expect(all.json.pagination.total).toBe(1);
  });

  it('the dispatcher hands out only the contacts the segment matches, and a contact who leaves the segment before its turn is skipped, never sent', async () => {
    // Arrange
    const s = await stack();
    const staying = await s.contact('Keeper Ann');
    const leaving = await s.contact('Keeper Bob');
    await s.contact('Cy');
    const campaign = await createCampaign(s.deps, s.orgId, {
      name: 'C',
      templateId: s.templateId,
      listId: s.listId,
      segmentId: s.segmentId,
      tagId: null,
      topicId: null,
      sendingIdentityId: null,
    });
    await requestSend(s.deps, s.orgId, campaign.id, {});
    const start = s.dispatched.shift();
    if (!start) throw new Error('no start message');
    await dispatchCampaign(s.deps, start);
    const handedOut = s.batches.flatMap((b) =>
      b.recipients.map((r) => r.email),
    );
    await updateContact(s.deps, s.orgId, leaving.id, { firstName: 'Robert' });

    // Act
    await s.drain();

    // Assert
    expect(handedOut.sort()).toEqual([staying.email, leaving.email].sort());
    expect(s.accepted.map((m) => m.to)).toEqual([staying.email]);
    expect(await s.deps.campaigns.get(s.orgId, campaign.id)).toMatchObject({
      status: 'sent',
      progress: { total: 2, sent: 1, failed: 0, skipped: 1 },
    });
  });

  it('a segment deleted before the send matches no one: the audience is never widened to the whole list', async () => {
    // Arrange
    const s = await stack();
    await s.contact('Keeper Ann');
    await s.contact('Cy');
    const campaign = await createCampaign(s.deps, s.orgId, {
      name: 'C',
      templateId: s.templateId,
      listId: s.listId,
      segmentId: s.segmentId,
      tagId: null,
      topicId: null,
      sendingIdentityId: null,
    });
    await deleteSegment(s.deps, s.orgId, s.segmentId);

    // Act
    const view = await s.client.get(`/campaigns/${campaign.id}`, {
      key: s.key,
    });
    await requestSend(s.deps, s.orgId, campaign.id, {});
    await s.drain();

    // Assert
    expect(view.json.data.recipientCount).toBe(0);
    expect(s.accepted).toEqual([]);
    expect(await s.deps.campaigns.get(s.orgId, campaign.id)).toMatchObject({
      status: 'sent',
      progress: { total: 0, sent: 0 },
    });
  });

  it('a segment on a custom field narrows the count and the send by the values the contacts hold when each is read (no default counted)', async () => {
    // Arrange
    const s = await stack();
    await createField(s.deps, s.orgId, {
      key: 'seats',
      label: 'Seats',
      type: 'number',
      defaultValue: 50,
    });
    const segment = await createSegment(
      s.deps,
      s.orgId,
      parse(CreateSegmentBody, {
        name: 'Big accounts',
        listId: s.listId,
        match: 'all',
        conditions: [
          { field: 'fields.seats', operator: 'greaterThan', value: 10 },
        ],
      }),
    );
    const holder = async (firstName: string, seats?: number) => {
      const email = uniqueEmail(firstName.toLowerCase());
      const { contact } = await addContact(s.deps, s.orgId, s.listId, {
        email,
        firstName,
        doubleOptIn: false,
        ...(seats === undefined ? {} : { fields: { seats } }),
      });
      return { id: contact.id, email };
    };
    const big = await holder('Big', 20);
    const shrinking = await holder('Shrinking', 30);
    await holder('Small', 5);
    await holder('Unknown');
    const campaign = await createCampaign(s.deps, s.orgId, {
      name: 'Big only',
      templateId: s.templateId,
      listId: s.listId,
      segmentId: segment.id,
      tagId: null,
      topicId: null,
      sendingIdentityId: null,
    });
    const view = await s.client.get(`/campaigns/${campaign.id}`, {
      key: s.key,
    });
    await requestSend(s.deps, s.orgId, campaign.id, {});
    const start = s.dispatched.shift();
    if (!start) throw new Error('no start message');
    await dispatchCampaign(s.deps, start);
    const handedOut = s.batches.flatMap((b) =>
      b.recipients.map((r) => r.email),
    );
    await updateContact(s.deps, s.orgId, shrinking.id, {
      fields: { seats: 2 },
    });

    // Act
    await s.drain();

    // Assert
    expect(view.json.data.recipientCount).toBe(2);
    expect(handedOut.sort()).toEqual([big.email, shrinking.email].sort());
    expect(s.accepted.map((m) => m.to)).toEqual([big.email]);
  });
});
