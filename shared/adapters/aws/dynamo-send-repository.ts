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
import * as v from 'valibot';
import type { Progress, SendState } from '../../campaigns/model.ts';
import type {
  ClaimResult,
  RecipientOutcome,
  SendRepository,
} from '../../campaigns/ports.ts';
import { ifMissing } from '../../db/expressions.ts';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import {
  CampaignRecipientKeys,
  RECIPIENT_SHARDS_ATTRIBUTE,
  shardedSendAttributes,
} from './campaign-recipient-keys.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
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
  sent: v.optional(v.number()),
  failed: v.optional(v.number()),
  skipped: v.optional(v.number()),
});

/**
 * A recipient's claim. SES's events may have written the item first (they
 * only update it): none of the claim's attributes is certain to be there.
 */
const RecipientItem = itemSchema('CampaignRecipient', {
  contactId: v.optional(v.string()),
  email: v.optional(v.string()),
  batch: v.optional(v.number()),
  owner: v.optional(v.string()),
  leaseUntil: v.optional(v.number()),
  claimedAt: v.optional(v.string()),
  messageId: v.optional(v.string()),
  refused: v.optional(v.boolean()),
});

/** Running sends on DynamoDB. */
export class DynamoSendRepository implements SendRepository {
  private readonly recipients: CampaignRecipientKeys;
  private readonly sends;
  private readonly batches;
  private readonly claims;

  constructor(private readonly table: DynamoTable) {
    this.recipients = new CampaignRecipientKeys(table);
    this.sends = entity(table, SendStateItem);
    this.batches = entity(table, BatchItem);
    this.claims = entity(table, RecipientItem);
  }

  async start(
    orgId: string,
    campaignId: string,
    state: SendState,
  ): Promise<void> {
    try {
      await this.sends.put(keys.campaignSend(orgId, campaignId), state, {
        // Its recipients spread over partitions (older sends: one).
        housekeeping: shardedSendAttributes(),
        // The same send again (a redelivered message) keeps its progress.
        if: (w) => w.or(w.missing(), w.ne('sendId', state.sendId)),
      });
      this.recipients.started(orgId, campaignId);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async forgetAddress(
    orgId: string,
    campaignIds: readonly string[],
    contactIds: readonly string[],
    email: string,
  ): Promise<number> {
    const byPartition = new Map(
      campaignIds.map((id) => [keys.campaignSend(orgId, id).PK, id]),
    );
    const sends = (
      await batchGet(
        this.table,
        campaignIds.map((id) => keys.campaignSend(orgId, id)),
      )
    ).map((item) => ({
      campaignId: byPartition.get(String(item.PK)) ?? '',
      sharded: item[RECIPIENT_SHARDS_ATTRIBUTE] !== undefined,
      state: this.sends.parse(item),
    }));
    // The walk's positions are emails: a running send at this one waits.
    const naming = sends.filter(
      ({ state }) =>
        state.cursor === email ||
        Object.values(state.inFlight).some(
          (batch) => batch.after === email || batch.last === email,
        ),
    );
    const running = naming.find(
      ({ state }) => !state.walked || Object.keys(state.inFlight).length > 0,
    );
    if (running) {
      throw new ConflictError(
        'erasure.sendRunning',
        `The send of campaign ${running.campaignId} is at this address right now; retry in a minute`,
      );
    }
    let changed = 0;
    for (const { campaignId, state } of naming) {
      // A finished send's cursor is read by nothing: it can go.
      await this.sends.update(
        keys.campaignSend(orgId, campaignId),
        { set: { cursor: null }, add: { version: 1 } },
        { if: (w) => w.eq('version', state.version) },
      );
      changed++;
    }
    const recipientKeys = sends.flatMap(({ campaignId, sharded }) =>
      contactIds.map((contactId) =>
        sharded
          ? keys.campaignRecipient(orgId, campaignId, contactId)
          : keys.legacyCampaignRecipient(orgId, campaignId, contactId),
      ),
    );
    const found = await batchGet(this.table, recipientKeys);
    for (const item of found.filter((i) => i.email !== undefined)) {
      await this.claims.update(
        { PK: String(item.PK), SK: String(item.SK) },
        { remove: ['email'] },
        { if: (w) => w.exists() },
      );
      changed++;
    }
    return changed;
  }

  get(orgId: string, campaignId: string): Promise<SendState | undefined> {
    return this.sends.get(keys.campaignSend(orgId, campaignId), {
      consistent: true,
    });
  }

  async save(
    orgId: string,
    campaignId: string,
    after: SendState,
  ): Promise<void> {
    await this.sends.update(
      keys.campaignSend(orgId, campaignId),
      {
        // The dispatcher's fields only: senders add to the progress.
        set: {
          cursor: after.cursor,
          walked: after.walked,
          nextBatch: after.nextBatch,
          inFlight: after.inFlight,
          handedOut: after.handedOut,
          'progress.total': after.progress.total,
        },
        add: { version: 1 },
      },
      {
        if: (w) =>
          w.and(w.eq('sendId', after.sendId), w.eq('version', after.version)),
        otherwise: (cause) =>
          new ConflictError(
            'campaign.changed',
            `The send of campaign ${campaignId} changed meanwhile`,
            { cause },
          ),
      },
    );
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
      await this.batches.update(
        key,
        { set: { owner, leaseUntil: until.getTime() } },
        {
          if: (w) =>
            w.and(
              w.missing('done'),
              w.or(
                w.missing('leaseUntil'),
                w.lt('leaseUntil', now.getTime()),
                w.eq('owner', owner),
              ),
            ),
        },
      );
      return 'leased';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const found = await this.batches.get(key, { consistent: true });
      return found?.done ? 'done' : 'held';
    }
  }

  async completeBatch(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    outcome: Omit<Progress, 'total'>,
  ): Promise<boolean> {
    const { sent, failed, skipped } = outcome;
    try {
      await transactWrite(this.table, [
        this.batches.updateTx(
          keys.campaignBatch(orgId, campaignId, batch),
          { set: { done: true, sent, failed, skipped } },
          { if: (w) => w.and(w.eq('owner', owner), w.missing('done')) },
        ),
        this.sends.updateTx(
          keys.campaignSend(orgId, campaignId),
          {
            add: {
              'progress.sent': sent,
              'progress.failed': failed,
              'progress.skipped': skipped,
              batchesDone: 1,
              version: 1,
            },
            remove: [`inFlight.${batch}`],
          },
          { if: (w) => w.exists() },
        ),
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
      await this.claims.put(
        key,
        {
          ...recipient,
          owner,
          leaseUntil: until.getTime(),
          claimedAt: now.toISOString(),
        },
        {
          // New, or claimed before with nothing showing SES took or refused
          // it, and that claim's lease over.
          if: (w) =>
            w.or(
              w.missing(),
              w.and(
                w.missing('messageId'),
                w.missing('refused'),
                w.or(
                  w.missing('leaseUntil'),
                  w.lt('leaseUntil', now.getTime()),
                ),
              ),
            ),
        },
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const found = await this.claims.get(key, { consistent: true });
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
      await this.claims.update(
        await this.recipients.of(orgId, campaignId, outcome.contactId),
        outcome.messageId
          ? { set: { messageId: ifMissing(outcome.messageId) } }
          : { set: { refused: true } },
      );
    }
  }

  async release(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    contactIds: readonly string[],
  ): Promise<void> {
    const quietly = (write: Promise<unknown>) =>
      write.catch((error) => {
        if (!isConditionFailure(error)) throw error;
      });
    for (const contactId of contactIds) {
      await quietly(
        this.claims.update(
          await this.recipients.of(orgId, campaignId, contactId),
          { remove: ['owner', 'leaseUntil'] },
          {
            if: (w) =>
              w.and(
                w.eq('owner', owner),
                w.missing('messageId'),
                w.missing('refused'),
              ),
          },
        ),
      );
    }
    await quietly(
      this.batches.update(
        keys.campaignBatch(orgId, campaignId, batch),
        { remove: ['owner', 'leaseUntil'] },
        { if: (w) => w.and(w.eq('owner', owner), w.missing('done')) },
      ),
    );
  }
}
