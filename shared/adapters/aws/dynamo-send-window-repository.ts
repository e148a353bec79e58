/**
 * Driven adapter: the recipients each organization's campaigns took on,
 * one counter item per hour (kept two days), so a rolling 24-hour sum is
 * one BatchGetItem of 25 keys.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { SendWindowRepository } from '../../mail/ports.ts';
import { entity } from './dynamo-entity.ts';
import { batchGet, type DynamoTable, epochSeconds } from './dynamo-table.ts';

const WindowItem = itemSchema('SendWindow', { recipients: v.number() });

/** Hours after which a counter is worthless (the TTL deletes it). */
const KEEP_HOURS = 48;

/** Hourly recipient counters on DynamoDB. */
export class DynamoSendWindowRepository implements SendWindowRepository {
  private readonly windows;

  constructor(private readonly table: DynamoTable) {
    this.windows = entity(table, WindowItem);
  }

  async add(orgId: string, hour: string, recipients: number): Promise<void> {
    const expires = new Date(
      Date.parse(`${hour}:00:00Z`) + KEEP_HOURS * 3_600_000,
    );
    await this.windows.update(
      keys.sendWindow(orgId, hour),
      { add: { recipients } },
      { housekeeping: { ttl: epochSeconds(expires) } },
    );
  }

  async sum(orgId: string, hours: string[]): Promise<number> {
    const items = await batchGet(
      this.table,
      hours.map((hour) => keys.sendWindow(orgId, hour)),
    );
    return items.reduce(
      (total, item) => total + this.windows.parse(item).recipients,
      0,
    );
  }
}
