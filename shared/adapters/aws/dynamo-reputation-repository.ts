/**
 * Driven adapter: each organization's reputation counters, one item per
 * hour (`ORG#o#REPUTATION` / `HOUR#2026-11-23T14`: sends, hard bounces,
 * complaints), added to once per organization and batch of SES events,
 * kept 8 days (the longest window is 7). The window is one strongly
 * consistent Query of at most 168 small items.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { HourCounts, ReputationCounts } from '../../reputation/model.ts';
import type { ReputationRepository } from '../../reputation/ports.ts';
import { entity } from './dynamo-entity.ts';
import { Counter, type DynamoTable, epochSeconds } from './dynamo-table.ts';

const ReputationHourItem = itemSchema('ReputationHour', {
  hour: v.string(),
  sends: Counter,
  hardBounces: Counter,
  complaints: Counter,
});

/** Hours after which a counter is outside any window (the TTL deletes it). */
const KEEP_HOURS = 8 * 24;

/** Hourly reputation counters on DynamoDB. */
export class DynamoReputationRepository implements ReputationRepository {
  private readonly hoursOf;

  constructor(table: DynamoTable) {
    this.hoursOf = entity(table, ReputationHourItem);
  }

  async add(
    orgId: string,
    hour: string,
    counts: ReputationCounts,
  ): Promise<void> {
    const expires = new Date(
      Date.parse(`${hour}:00:00Z`) + KEEP_HOURS * 3_600_000,
    );
    await this.hoursOf.update(
      keys.reputationHour(orgId, hour),
      { set: { hour }, add: counts },
      { housekeeping: { ttl: epochSeconds(expires) } },
    );
  }

  async hours(
    orgId: string,
    fromHour: string,
    toHour: string,
  ): Promise<HourCounts[]> {
    const items = await this.hoursOf.all(
      keys.reputationHours(orgId, fromHour, toHour),
      { consistent: true },
    );
    return items.map((item) => ({
      hour: item.hour,
      counts: {
        sends: item.sends,
        hardBounces: item.hardBounces,
        complaints: item.complaints,
      },
    }));
  }
}
