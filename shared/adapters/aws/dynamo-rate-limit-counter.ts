/**
 * Driven adapter: an exact rolling-window rate limit, one item per key.
 *
 * The item holds `limit` slots (`t0` … `t<limit-1>`), each the instant of
 * an admitted request. A request is admitted by writing its instant into a
 * slot whose instant has left the window (or that was never used), and the
 * write is conditional on exactly that. So a slot never holds two requests
 * of the same window, and any window holds at most `limit` admissions,
 * whatever the containers and the interleaving: exact, not approximate.
 *
 * Each container remembers the last item it saw and picks a free slot at
 * random from it, so concurrent requests rarely aim at the same slot. With
 * a fresh memory an admission is one UpdateItem; a refusal the memory
 * already proves costs nothing (slots only ever get newer); a stale memory
 * costs a failed conditional write, which returns the current item
 * (ReturnValuesOnConditionCheckFailure) for the next try.
 */
import * as v from 'valibot';
import type { RateLimitCounter } from '../../access/ports.ts';
import { keys } from '../../db/keys.ts';
import { attr } from '../../db/table.ts';
import { entity } from './dynamo-entity.ts';
import {
  type DynamoTable,
  epochSeconds,
  isConditionFailure,
} from './dynamo-table.ts';

/** The instants in a key's slots, as a container last saw them. */
type Slots = (number | undefined)[];

const slotName = (index: number) => `t${index}`;

/**
 * A key's log: as many slots as the limit, so its attributes vary; read
 * loosely, `slotsOf` keeps the slots.
 */
const RateLogItem = {
  type: 'RateLog',
  schema: v.record(v.string(), v.unknown()),
} as const;

const slotsOf = (
  item: Record<string, unknown> | undefined,
  limit: number,
): Slots =>
  Array.from({ length: limit }, (_, i) => {
    const value = item?.[slotName(i)];
    return typeof value === 'number' ? value : undefined;
  });

const inWindowOf = (slots: Slots, cutoff: number) =>
  slots
    .filter((t): t is number => t !== undefined && t > cutoff)
    .sort((a, b) => a - b);

/** Rolling-window admissions on one DynamoDB item per key. */
export class DynamoRateLimitCounter implements RateLimitCounter {
  private readonly seen = new Map<string, Slots>();
  private readonly logs;

  constructor(table: DynamoTable) {
    this.logs = entity(table, RateLogItem);
  }

  async admit(
    keyId: string,
    now: number,
    windowMs: number,
    limit: number,
  ): Promise<{ admitted: boolean; inWindow: number[] }> {
    const cutoff = now - windowMs;
    let slots = this.seen.get(keyId) ?? slotsOf(undefined, limit);
    // A slot only ever gets newer, so each lost race turns one slot this
    // request saw free into one of the window: the free slots shrink at
    // every try, and after at most `limit` lost races none is left. The
    // loop thus ends with an exact answer; its bound is only a safeguard.
    for (let attempt = 0; attempt <= limit; attempt++) {
      const free = slots.flatMap((t, i) =>
        t === undefined || t <= cutoff ? [i] : [],
      );
      // Every slot holds a request of the window: refuse, consuming nothing.
      const index = free[Math.floor(Math.random() * free.length)];
      if (index === undefined) {
        return { admitted: false, inWindow: inWindowOf(slots, cutoff) };
      }
      const slot = slotName(index);
      try {
        const after = await this.logs.update(
          keys.rateLog(keyId),
          { set: { [slot]: now } },
          {
            if: (w) => w.or(w.missing(slot), w.le(slot, cutoff)),
            // Worthless once its newest request has left the window.
            housekeeping: {
              [attr.ttl]: epochSeconds(new Date(now + 2 * windowMs)),
            },
            returning: 'new',
            returningOnFailure: 'old',
          },
        );
        slots = slotsOf(after, limit);
        this.seen.set(keyId, slots);
        return { admitted: true, inWindow: inWindowOf(slots, cutoff) };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Another request took that slot meanwhile: go on from the state
        // DynamoDB returned with the failure.
        slots = slotsOf(this.logs.failedItem(error), limit);
        this.seen.set(keyId, slots);
      }
    }
    return { admitted: false, inWindow: inWindowOf(slots, cutoff) };
  }
}
