/**
 * Recipients of a send on the embedded engine: spread over 16 partitions
 * of their campaign for a send started now, in the campaign's partition for
 * one the older code started (in flight during a deploy), and the claim
 * protocol whole in both: SES's message id, written by the events, keeps
 * a claim whose lease ran out from being sent again.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { SendState } from '../../../../shared/campaigns/model.ts';
import {
  keys,
  RECIPIENT_SHARDS,
  recipientShardOf,
} from '../../../../shared/db/keys.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');
const LEASE = 15 * 60_000;

const state = (sendId: string): SendState => ({
  sendId,
  cursor: null,
  walked: false,
  nextBatch: 0,
  inFlight: {},
  batchesDone: 0,
  progress: { total: 3, sent: 0, failed: 0, skipped: 0 },
  version: 0,
});

const setup = async () => {
  const { deps, tableName } = await createTestDeps();
  const orgId = randomUUID();
  const campaignId = randomUUID();
  const dynamo = testEngineClient();
  const itemAt = async (key: { PK: string; SK: string }) =>
    (await dynamo.send(new GetCommand({ TableName: tableName, Key: key })))
      .Item;
  const recipient = (i: number) => ({
    contactId: `contact-${i}-${randomUUID()}`,
    email: `reader${i}@example.test`,
    batch: 0,
  });
  const claim = (r: ReturnType<typeof recipient>, at: number) =>
    deps.sends.claim(
      orgId,
      campaignId,
      r,
      'sender-1',
      new Date(at + LEASE),
      new Date(at),
    );
  /** SES's first event of the message: its id on the recipient. */
  const sesTook = async (r: ReturnType<typeof recipient>) =>
    deps.campaignStats.recordEvent(orgId, {
      messageId: `ses-${r.contactId}`,
      type: 'Send',
      recipient: r.email,
      at: new Date(NOW).toISOString(),
      subject: { kind: 'campaign', campaignId },
      contactId: r.contactId,
      provider: 'other',
    });
  return {
    deps,
    dynamo,
    tableName,
    orgId,
    campaignId,
    itemAt,
    recipient,
    claim,
    sesTook,
  };
};

describe('recipients of a send', () => {
  it('spread a contact id over one of 16 partitions, always the same', () => {
    const shards = new Set(
      Array.from({ length: 400 }, (_, i) => recipientShardOf(`c-${i}`)),
    );
    expect(shards.size).toBe(RECIPIENT_SHARDS);
    expect(recipientShardOf('c-1')).toBe(recipientShardOf('c-1'));
    expect(keys.campaignRecipient('o', 'c', 'c-1')).toEqual({
      PK: `ORG#o#CAMPAIGN#c#RECIPIENTS#${recipientShardOf('c-1')}`,
      SK: 'RECIPIENT#c-1',
    });
  });

  it('of a send started now live in their partitions, and a claim whose lease ran out is not sent again once SES took it', async () => {
    // Arrange
    const { deps, orgId, campaignId, itemAt, recipient, claim, sesTook } =
      await setup();
    await deps.sends.start(orgId, campaignId, state('send-1'));
    const [ann, bob] = [recipient(1), recipient(2)];

    // Act
    const first = [await claim(ann, NOW), await claim(bob, NOW)];
    await sesTook(ann);
    const later = NOW + LEASE + 1;
    const again = [await claim(ann, later), await claim(bob, later)];

    // Assert
    expect(first).toEqual([{ kind: 'claimed' }, { kind: 'claimed' }]);
    expect(again).toEqual([
      { kind: 'sent', messageId: `ses-${ann.contactId}` },
      { kind: 'claimed' },
    ]);
    const key = keys.campaignRecipient(orgId, campaignId, ann.contactId);
    expect(key.PK).toContain('#RECIPIENTS#');
    expect(await itemAt(key)).toMatchObject({
      contactId: ann.contactId,
      messageId: `ses-${ann.contactId}`,
    });
    expect(
      await itemAt(
        keys.legacyCampaignRecipient(orgId, campaignId, ann.contactId),
      ),
    ).toBeUndefined();
  });

  it('of a send the older code started stay in the campaign partition: claims, SES events and re-claims meet there', async () => {
    // Arrange: the older code's send item, without `recipientShards`,
    // and a claim it wrote before the deploy.
    const {
      deps,
      dynamo,
      tableName,
      orgId,
      campaignId,
      itemAt,
      recipient,
      claim,
      sesTook,
    } = await setup();
    await dynamo.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.campaignSend(orgId, campaignId),
          _type: 'CampaignSend',
          ...state('send-old'),
        },
      }),
    );
    const [ann, bob] = [recipient(1), recipient(2)];
    await dynamo.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.legacyCampaignRecipient(orgId, campaignId, ann.contactId),
          _type: 'CampaignRecipient',
          ...ann,
          owner: 'old-sender',
          leaseUntil: NOW + LEASE,
          claimedAt: new Date(NOW).toISOString(),
        },
      }),
    );

    // Act: the new code records SES's event of ann's message, claims bob,
    // and after the lease tries both again.
    await sesTook(ann);
    const bobFirst = await claim(bob, NOW);
    const later = NOW + LEASE + 1;
    const again = [await claim(ann, later), await claim(bob, later)];
    await deps.campaignStats.recordUnsubscribe(
      orgId,
      campaignId,
      ann.contactId,
      new Date(later).toISOString(),
    );

    // Assert
    expect(bobFirst).toEqual({ kind: 'claimed' });
    expect(again).toEqual([
      { kind: 'sent', messageId: `ses-${ann.contactId}` },
      { kind: 'claimed' },
    ]);
    expect(
      await itemAt(
        keys.legacyCampaignRecipient(orgId, campaignId, ann.contactId),
      ),
    ).toMatchObject({
      owner: 'old-sender',
      unsubscribedAt: expect.any(String),
    });
    const sharded = await dynamo.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: {
          ':pk': keys.campaignRecipient(orgId, campaignId, bob.contactId).PK,
        },
      }),
    );
    expect(sharded.Items).toEqual([]);
    expect(
      (await deps.campaignStats.read(orgId, campaignId)).counters.unsubscribes,
    ).toBe(1);
  });
});
