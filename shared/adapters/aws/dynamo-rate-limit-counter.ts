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
import {
  type AttributeValue,
  ConditionalCheckFailedException,
} from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimitCounter } from '../../access/ports.ts';
import { ENTITY_TYPE, type EntityType } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { type DynamoTable, epochSeconds } from './dynamo-table.ts';

/** The instants in a key's slots, as a container last saw them. */
type Slots = (number | undefined)[];

const slotName = (index: number) => `t${index}`;

const slotsOf = (
  item: Record<string, unknown> | undefined,
  limit: number,
): Slots =>
  Array.from({ length: limit }, (_, i) => {
    const value = item?.[slotName(i)];
    return typeof value === 'number' ? value : undefined;
  });

/**
 * The numbers of an item as DynamoDB returns it with a failed condition
 * (attribute values, not the document client's plain values).
 */
const numbersOf = (
  item: Record<string, AttributeValue> | undefined,
): Record<string, number> =>
  Object.fromEntries(
    Object.entries(item ?? {}).flatMap(([name, value]) =>
      value.N === undefined ? [] : [[name, Number(value.N)]],
    ),
  );

const inWindowOf = (slots: Slots, cutoff: number) =>
  slots
    .filter((t): t is number => t !== undefined && t > cutoff)
    .sort((a, b) => a - b);

/** Rolling-window admissions on one DynamoDB item per key. */
export class DynamoRateLimitCounter implements RateLimitCounter {
  private readonly seen = new Map<string, Slots>();

  constructor(private readonly table: DynamoTable) {}

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
      try {
        const { Attributes } = await this.table.client.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: keys.rateLog(keyId),
            UpdateExpression: 'SET #slot = :now, #ttl = :ttl, #type = :type',
            ConditionExpression:
              'attribute_not_exists(#slot) OR #slot <= :cutoff',
            ExpressionAttributeNames: {
              '#slot': slotName(index),
              '#ttl': 'ttl',
              '#type': ENTITY_TYPE,
            },
            ExpressionAttributeValues: {
              ':now': now,
              ':cutoff': cutoff,
              // Worthless once its newest request has left the window.
              ':ttl': epochSeconds(new Date(now + 2 * windowMs)),
              ':type': 'RateLog' satisfies EntityType,
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        slots = slotsOf(Attributes, limit);
        this.seen.set(keyId, slots);
        return { admitted: true, inWindow: inWindowOf(slots, cutoff) };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // Another request took that slot meanwhile: go on from the state
        // DynamoDB returned with the failure.
        slots = slotsOf(numbersOf(error.Item), limit);
        this.seen.set(keyId, slots);
      }
    }
    return { admitted: false, inWindow: inWindowOf(slots, cutoff) };
  }
}
