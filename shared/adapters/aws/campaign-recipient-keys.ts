/**
 * Driven adapter helper: where a campaign's recipients live. A send
 * started by this code says `recipientShards` on its `SEND` item, and its
 * recipients are spread over that many partitions
 * (`keys.campaignRecipient`); a send started by the code before (no
 * `recipientShards`: in flight during the deploy) keeps all of them in the
 * campaign's partition (`keys.legacyCampaignRecipient`), so its claims,
 * message ids and events stay together and the claim protocol holds
 * across the deploy. A campaign without a `SEND` item (none started yet)
 * is sharded. Each campaign's layout is read once per container (it
 * never changes: a campaign is sent once).
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { type Key, keys, RECIPIENT_SHARDS } from '../../db/keys.ts';
import { entity } from './dynamo-entity.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** The attribute of a `SEND` item saying its recipients are sharded. */
export const RECIPIENT_SHARDS_ATTRIBUTE = 'recipientShards';

/** What `start` adds to a new send's item: its recipients' layout. */
export const shardedSendAttributes = () => ({
  [RECIPIENT_SHARDS_ATTRIBUTE]: RECIPIENT_SHARDS,
});

/** A `SEND` item as the layout's reader projects it. */
const SendLayoutItem = itemSchema('CampaignSend', {
  sendId: v.string(),
  [RECIPIENT_SHARDS_ATTRIBUTE]: v.optional(v.number()),
});

/** Most campaigns whose layout a container remembers. */
const MAX_REMEMBERED = 10_000;

/** The keys of a campaign's recipients, by the layout of its send. */
export class CampaignRecipientKeys {
  private readonly legacy = new Map<string, boolean>();
  private readonly sends;

  constructor(table: DynamoTable) {
    this.sends = entity(table, SendLayoutItem);
  }

  /** A recipient's key in its campaign's layout. */
  async of(orgId: string, campaignId: string, contactId: string): Promise<Key> {
    return (await this.isLegacy(orgId, campaignId))
      ? keys.legacyCampaignRecipient(orgId, campaignId, contactId)
      : keys.campaignRecipient(orgId, campaignId, contactId);
  }

  /** Remembers a send this container started: sharded. */
  started(orgId: string, campaignId: string): void {
    this.remember(`${orgId}#${campaignId}`, false);
  }

  private async isLegacy(orgId: string, campaignId: string): Promise<boolean> {
    const id = `${orgId}#${campaignId}`;
    const known = this.legacy.get(id);
    if (known !== undefined) return known;
    // Eventually consistent: a send's item is written long before its
    // recipients, and a just-started one is sharded whatever is read.
    const send = await this.sends.project(
      keys.campaignSend(orgId, campaignId),
      ['sendId', RECIPIENT_SHARDS_ATTRIBUTE],
      SendLayoutItem,
    );
    const legacy =
      send !== undefined && send[RECIPIENT_SHARDS_ATTRIBUTE] === undefined;
    this.remember(id, legacy);
    return legacy;
  }

  private remember(id: string, legacy: boolean): void {
    if (this.legacy.size >= MAX_REMEMBERED) this.legacy.clear();
    this.legacy.set(id, legacy);
  }
}
