/**
 * Driven adapter: the state of running sends, in the campaign's own
 * partition (`ORG#o#CAMPAIGN#c`):
 * - `SEND`: the dispatcher's cursor and batches in flight, the progress
 *   counters (one small item: a few hundred bytes, 1 write unit);
 * - `BATCH#n`: a batch's lease while a sender works on it, then its outcome;
 * and in one of the campaign's 16 recipient partitions
 * (`ORG#o#CAMPAIGN#c#RECIPIENTS#nn`, by the contact id's hash; see
 * `campaign-recipient-keys.ts` for sends started before them):
 * - `RECIPIENT#contactId`: a recipient's claim, written before the provider
 *   is called (1 write unit), later the evidence SES's events add to it.
 *
 * What a batch of B recipients costs in writes: 1 lease, B claims, and one
 * transaction marking it done and counting it (2 items × 2 units).
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { Progress, SendState } from '../../campaigns/model.ts';
import type {
  ClaimResult,
  RecipientOutcome,
  SendRepository,
} from '../../campaigns/ports.ts';
import {
  type EntityType,
  entityType,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import {
  CampaignRecipientKeys,
  shardedSendAttributes,
} from './campaign-recipient-keys.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  transactWrite,
} from './dynamo-table.ts';

const SendStateItem = itemSchema('CampaignSend', {
  sendId: v.string(),
  cursor: v.nullable(v.string()),
  walked: v.boolean(),
  nextBatch: v.number(),
  inFlight: v.record(
    v.string(),
    v.object({
      after: v.nullable(v.string()),
      last: v.string(),
      at: v.string(),
      queued: v.boolean(),
      starts: v.optional(v.string()),
      ends: v.optional(v.string()),
    }),
  ),
  batchesDone: v.number(),
  progress: v.object({
    total: v.number(),
    sent: v.number(),
    failed: v.number(),
    skipped: v.number(),
  }),
  version: v.number(),
  laneBlock: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  handedOut: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});

const BatchItem = itemSchema('CampaignBatch', {
  owner: v.optional(v.string()),
  leaseUntil: v.optional(v.number()),
  done: v.optional(v.boolean()),
});

const RecipientItem = itemSchema('CampaignRecipient', {
  messageId: v.optional(v.string()),
  refused: v.optional(v.boolean()),
  leaseUntil: v.optional(v.number()),
});

/** Running sends on DynamoDB. */
export class DynamoSendRepository implements SendRepository {
  private readonly recipients: CampaignRecipientKeys;

  constructor(private readonly table: DynamoTable) {
    this.recipients = new CampaignRecipientKeys(table);
  }

  async start(
    orgId: string,
    campaignId: string,
    state: SendState,
  ): Promise<void> {
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: {
            ...keys.campaignSend(orgId, campaignId),
            ...entityType('CampaignSend'),
            ...state,
            // Its recipients spread over partitions (older sends: one).
            ...shardedSendAttributes(),
          },
          // The same send again (a redelivered message) keeps its progress.
          ConditionExpression: 'attribute_not_exists(PK) OR sendId <> :sendId',
          ExpressionAttributeValues: { ':sendId': state.sendId },
        }),
      );
      this.recipients.started(orgId, campaignId);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async get(orgId: string, campaignId: string): Promise<SendState | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.campaignSend(orgId, campaignId),
        ConsistentRead: true,
      }),
    );
    return Item ? parseItem(SendStateItem, Item) : undefined;
  }

  async save(
    orgId: string,
    campaignId: string,
    after: SendState,
  ): Promise<void> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.campaignSend(orgId, campaignId),
          // The dispatcher's fields only: senders add to the progress.
          UpdateExpression: `SET #cursor = :cursor, walked = :walked, nextBatch = :next, inFlight = :inFlight, ${after.handedOut === undefined ? '' : 'handedOut = :handedOut, '}progress.#total = :total ADD version :one`,
          ConditionExpression: 'sendId = :sendId AND version = :version',
          ExpressionAttributeNames: {
            '#cursor': 'cursor',
            '#total': 'total',
          },
          ExpressionAttributeValues: {
            ':cursor': after.cursor,
            ':walked': after.walked,
            ':next': after.nextBatch,
            ':inFlight': after.inFlight,
            ...(after.handedOut === undefined
              ? {}
              : { ':handedOut': after.handedOut }),
            ':total': after.progress.total,
            ':one': 1,
            ':sendId': after.sendId,
            ':version': after.version,
          },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new ConflictError(
        'campaign.changed',
        `The send of campaign ${campaignId} changed meanwhile`,
        { cause: error },
      );
    }
  }

  async leaseBatch(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    until: Date,
    now: Date,
  ): Promise<'leased' | 'held' | 'done'> {
    const key = keys.campaignBatch(orgId, campaignId, batch);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: key,
          UpdateExpression:
            'SET #owner = :owner, leaseUntil = :until, #type = :type',
          ConditionExpression:
            'attribute_not_exists(done) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now OR #owner = :owner)',
          ExpressionAttributeNames: { '#owner': 'owner', '#type': '_type' },
          ExpressionAttributeValues: {
            ':owner': owner,
            ':until': until.getTime(),
            ':now': now.getTime(),
            ':type': 'CampaignBatch' satisfies EntityType,
          },
        }),
      );
      return 'leased';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.table.client.send(
        new GetCommand({
          TableName: this.table.tableName,
          Key: key,
          ConsistentRead: true,
        }),
      );
      return Item && parseItem(BatchItem, Item).done ? 'done' : 'held';
    }
  }

  async completeBatch(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    outcome: Omit<Progress, 'total'>,
  ): Promise<boolean> {
    const { tableName: TableName } = this.table;
    try {
      await transactWrite(this.table, [
        {
          Update: {
            TableName,
            Key: keys.campaignBatch(orgId, campaignId, batch),
            UpdateExpression:
              'SET done = :true, sent = :sent, failed = :failed, skipped = :skipped',
            ConditionExpression:
              '#owner = :owner AND attribute_not_exists(done)',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: {
              ':true': true,
              ':owner': owner,
              ':sent': outcome.sent,
              ':failed': outcome.failed,
              ':skipped': outcome.skipped,
            },
          },
        },
        {
          Update: {
            TableName,
            Key: keys.campaignSend(orgId, campaignId),
            UpdateExpression:
              'ADD progress.sent :sent, progress.failed :failed, progress.skipped :skipped, batchesDone :one, version :one REMOVE inFlight.#batch',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeNames: { '#batch': String(batch) },
            ExpressionAttributeValues: {
              ':sent': outcome.sent,
              ':failed': outcome.failed,
              ':skipped': outcome.skipped,
              ':one': 1,
            },
          },
        },
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.length) return false;
      throw error;
    }
  }

  async claim(
    orgId: string,
    campaignId: string,
    recipient: { contactId: string; email: string; batch: number },
    owner: string,
    until: Date,
    now: Date,
  ): Promise<ClaimResult> {
    const key = await this.recipients.of(
      orgId,
      campaignId,
      recipient.contactId,
    );
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: {
            ...key,
            ...entityType('CampaignRecipient'),
            ...recipient,
            owner,
            leaseUntil: until.getTime(),
            claimedAt: now.toISOString(),
          },
          // New, or claimed before with nothing showing SES took or refused
          // it, and that claim's lease over.
          ConditionExpression:
            'attribute_not_exists(PK) OR (attribute_not_exists(messageId) AND attribute_not_exists(refused) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now))',
          ExpressionAttributeValues: { ':now': now.getTime() },
        }),
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.table.client.send(
        new GetCommand({
          TableName: this.table.tableName,
          Key: key,
          ConsistentRead: true,
        }),
      );
      const found = Item ? parseItem(RecipientItem, Item) : undefined;
      if (found?.messageId) return { kind: 'sent', messageId: found.messageId };
      return found?.refused ? { kind: 'failed' } : { kind: 'held' };
    }
  }

  async recordOutcomes(
    orgId: string,
    campaignId: string,
    outcomes: RecipientOutcome[],
  ): Promise<void> {
    for (const outcome of outcomes) {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: await this.recipients.of(orgId, campaignId, outcome.contactId),
          UpdateExpression: outcome.messageId
            ? 'SET messageId = if_not_exists(messageId, :messageId)'
            : 'SET refused = :true',
          ExpressionAttributeValues: outcome.messageId
            ? { ':messageId': outcome.messageId }
            : { ':true': true },
        }),
      );
    }
  }
}
