/**
 * Driven adapter: the application-wide send pacer, one item per lane of
 * the SES account's rate, each holding the lane's next free instant.
 *
 * One write per reservation, no read: on a busy lane an atomic add,
 * conditional on the lane still being busy, which every sender reserving
 * at once passes (the instant only moves forward); on an idle one a set to
 * `now + span`, conditional on it still being idle, which only one of
 * several restarting it at once wins, the others then adding to it. Which
 * of the two to try first is guessed from what this container last saw of
 * the lane; a wrong guess costs one refused write. Senders in any number
 * of containers share a lane without a throttling error and without
 * refusing one another.
 */
import * as v from 'valibot';
import { plus } from '../../db/expressions.ts';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { SendPacer } from '../../mail/ports.ts';
import { CONFLICT_ATTEMPTS } from '../../retry.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, isConditionFailure } from './dynamo-table.ts';

/** A lane: its next free instant (epoch milliseconds). */
const LaneItem = itemSchema('SendPacer', { nextFreeAt: v.number() });

/** The blocks of lanes handed to the sends that started, in turn. */
const BlocksItem = itemSchema('SendPacer', {
  started: v.pipe(v.number(), v.integer()),
});

/** The SES account's rate, shared through DynamoDB, lane by lane. */
export class DynamoSendPacer implements SendPacer {
  /** What this container last saw of each lane's next free instant. */
  private readonly seen = new Map<number, number>();

  private readonly lanes;
  private readonly blocks;

  constructor(table: DynamoTable) {
    this.lanes = entity(table, LaneItem);
    this.blocks = entity(table, BlocksItem);
  }

  async reserve(
    lane: number,
    count: number,
    ratePerSecond: number,
    now: Date,
  ): Promise<number> {
    const key = keys.sendPacerLane(lane);
    const span = Math.ceil((count * 1000) / ratePerSecond);
    const at = now.getTime();
    let busy = (this.seen.get(lane) ?? Number.NEGATIVE_INFINITY) >= at;
    for (let attempt = 1; ; attempt++) {
      try {
        if (busy) {
          // Busy: the run starts where the last one ends.
          const { nextFreeAt: end } = await this.lanes.update(
            key,
            { set: { nextFreeAt: plus(span) } },
            { if: (w) => w.ge('nextFreeAt', at), returning: 'new' },
          );
          this.seen.set(lane, end);
          return end - span;
        }
        // Idle (or never used): an idle lane lends nothing, the run
        // starts now, not in the past.
        await this.lanes.update(
          key,
          { set: { nextFreeAt: at + span } },
          {
            if: (w) => w.or(w.missing('nextFreeAt'), w.lt('nextFreeAt', at)),
          },
        );
        this.seen.set(lane, at + span);
        return at;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Refused as busy: it went idle. Refused as idle: another sender
        // restarted it (the instant only moves forward).
        busy = !busy;
      }
      if (attempt >= CONFLICT_ATTEMPTS) {
        throw new ConflictError(
          'write.contended',
          'The send pacer moved meanwhile',
        );
      }
    }
  }

  async nextBlock(): Promise<number> {
    const { started } = await this.blocks.update(
      keys.sendPacerBlocks(),
      { add: { started: 1 } },
      { returning: 'new' },
    );
    return started - 1;
  }

  async giveBack(lane: number, from: number, runEnd: number): Promise<boolean> {
    if (from >= runEnd) return true;
    try {
      await this.lanes.update(
        keys.sendPacerLane(lane),
        { set: { nextFreeAt: from } },
        { if: (w) => w.eq('nextFreeAt', runEnd) },
      );
      this.seen.set(lane, from);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
