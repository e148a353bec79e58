/**
 * Driven adapter: the counters that bound the public sign-up form. A
 * fixed-window counter is one item per (counter, window), incremented
 * under a condition, so concurrent submissions never pass the cap; it
 * expires with the table's TTL. The "one confirmation email per address
 * per page per day" mark is one item per (page, address).
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import { attr } from '../../db/table.ts';
import { addressCounter } from '../../signup/model.ts';
import type { SignupLimits } from '../../signup/ports.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  deleteKeys,
  epochSeconds,
  isConditionFailure,
  queryPages,
} from './dynamo-table.ts';

/** Windows and marks outlive their use by this long before TTL deletes them. */
const GRACE_SECONDS = 3600;

const SignupLimitItem = itemSchema('SignupLimit', { attempts: Counter });

const ConfirmationSentItem = itemSchema('SignupConfirmationSent', {
  sentAt: v.number(),
});

/** True when the write passed its condition, false when it failed it. */
const passed = async (write: Promise<void>): Promise<boolean> => {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

/** Fixed-window counters and confirmation marks in the table. */
export class DynamoSignupLimits implements SignupLimits {
  private readonly windows;
  private readonly marks;

  constructor(private readonly table: DynamoTable) {
    this.windows = entity(table, SignupLimitItem);
    this.marks = entity(table, ConfirmationSentItem);
  }

  take(
    key: string,
    windowStart: number,
    windowSeconds: number,
    max: number,
  ): Promise<boolean> {
    return passed(
      this.windows.update(
        keys.signupLimit(key, windowStart),
        { add: { attempts: 1 } },
        {
          if: (w) => w.or(w.missing('attempts'), w.lt('attempts', max)),
          housekeeping: {
            [attr.ttl]: windowStart + windowSeconds + GRACE_SECONDS,
          },
        },
      ),
    );
  }

  claimConfirmation(
    orgId: string,
    pageId: string,
    email: string,
    now: Date,
    seconds: number,
  ): Promise<boolean> {
    const at = epochSeconds(now);
    return passed(
      this.marks.put(
        keys.signupConfirmationSent(orgId, pageId, email),
        { sentAt: at },
        {
          if: (w) => w.or(w.missing(), w.le('sentAt', at - seconds)),
          housekeeping: { [attr.ttl]: at + seconds + GRACE_SECONDS },
        },
      ),
    );
  }

  async releaseConfirmation(
    orgId: string,
    pageId: string,
    email: string,
  ): Promise<void> {
    // A mark of no time at all: the next claim passes its condition.
    await this.marks.put(
      keys.signupConfirmationSent(orgId, pageId, email),
      { sentAt: 0 },
      {
        housekeeping: { [attr.ttl]: epochSeconds(new Date()) + GRACE_SECONDS },
      },
    );
  }

  async forgetAddress(
    orgId: string,
    email: string,
    pageIds: readonly string[],
  ): Promise<number> {
    const windows: Key[] = [];
    for await (const page of queryPages(
      this.table,
      keys.signupLimitWindows(addressCounter(orgId, email)),
      { consistent: true, project: [] },
    )) {
      windows.push(...(page as unknown as Key[]));
    }
    const marks = (
      await batchGet(
        this.table,
        pageIds.map((pageId) =>
          keys.signupConfirmationSent(orgId, pageId, email),
        ),
      )
    ).map((item) => ({ PK: String(item.PK), SK: String(item.SK) }));
    const found = [...windows, ...marks];
    await deleteKeys(this.table, found);
    return found.length;
  }
}
