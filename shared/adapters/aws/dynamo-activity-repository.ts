/**
 * Driven adapter: each contact's activity in a partition of its own
 * (`ORG#<orgId>#CONTACT#<contactId>#ACTIVITY`), one small item per event
 * keyed by the event's id (its instant first), with a TTL. Written by
 * unconditional puts — an event delivered again writes the same item over
 * itself, so recording is idempotent without a read — and read newest
 * first by one descending Query per page. The email address is never
 * stored here: erasing a contact deletes the partition by its id.
 *
 * Write units: one per event under 1 KB (a mail event: about 300 bytes
 * with its keys, 800 with a long link); a consent record or many field
 * values make one bigger (1 unit per started KB).
 */
import * as v from 'valibot';
import {
  ACTIVITY_MESSAGE_KINDS,
  ACTIVITY_TTL_DAYS,
  type ActivityEvent,
  BOUNCE_TYPES,
  CONTACT_ACTIVITY_TYPES,
  MAIL_ACTIVITY_TYPES,
} from '../../activity/model.ts';
import type {
  ActivityPage,
  ActivityPageRequest,
  ActivityRepository,
} from '../../activity/ports.ts';
import { CONTACT_WRITE_PATHS } from '../../audience/model.ts';
import { itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import { ConsentEntry } from './dynamo-contact-repository.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchWrite,
  type DynamoTable,
  deleteKeys,
  epochSeconds,
  queryOnce,
  queryPages,
} from './dynamo-table.ts';

const optionalText = v.optional(v.string());
const FieldValue = v.nullable(v.union([v.string(), v.number(), v.boolean()]));

/** An event's item; its id is the sort key. */
const ActivityItem = itemSchema('ContactActivity', {
  type: v.picklist([...CONTACT_ACTIVITY_TYPES, ...MAIL_ACTIVITY_TYPES]),
  at: v.string(),
  via: v.optional(v.picklist(CONTACT_WRITE_PATHS)),
  status: v.optional(v.picklist(['bounced', 'complained'])),
  tagId: optionalText,
  changes: v.optional(
    v.array(v.object({ key: v.string(), from: FieldValue, to: FieldValue })),
  ),
  consent: v.optional(ConsentEntry),
  ip: optionalText,
  message: v.optional(
    v.object({
      id: v.string(),
      kind: v.picklist(ACTIVITY_MESSAGE_KINDS),
      campaignId: optionalText,
      sequenceId: optionalText,
      step: v.optional(v.number()),
    }),
  ),
  link: optionalText,
  bounceType: v.optional(v.picklist(BOUNCE_TYPES)),
});

/** When an event's item expires: `ACTIVITY_TTL_DAYS` after it happened. */
const expiryOf = (event: ActivityEvent) => ({
  ttl: epochSeconds(
    new Date(Date.parse(event.at) + ACTIVITY_TTL_DAYS * 86_400_000),
  ),
});

/** Each contact's activity on DynamoDB. */
export class DynamoActivityRepository implements ActivityRepository {
  private readonly events;

  constructor(private readonly table: DynamoTable) {
    this.events = entity(table, ActivityItem);
  }

  async record(
    orgId: string,
    contactId: string,
    events: readonly ActivityEvent[],
  ): Promise<void> {
    const written = events.map(({ id, ...event }) => ({
      key: keys.contactActivity(orgId, contactId, id),
      event,
      housekeeping: expiryOf({ id, ...event }),
    }));
    const [only] = written;
    if (written.length === 1 && only) {
      // One event (a mail event): a PutItem, the cheapest request.
      await this.events.put(only.key, only.event, {
        housekeeping: only.housekeeping,
      });
      return;
    }
    await batchWrite(
      this.table,
      written.map(({ key, event, housekeeping }) =>
        this.events.putRequest(key, event, { housekeeping }),
      ),
    );
  }

  async page(
    orgId: string,
    contactId: string,
    { limit, after }: ActivityPageRequest,
  ): Promise<ActivityPage> {
    // Eventually consistent: half the read units, and an event of the
    // last second shows on the next read.
    const found = await queryOnce(
      this.table,
      keys.activityOfContact(orgId, contactId),
      {
        descending: true,
        limit,
        ...(after
          ? { startKey: keys.contactActivity(orgId, contactId, after) }
          : {}),
      },
    );
    return {
      items: found.items.map((item) => ({
        id: String(item.SK),
        ...this.events.parse(item),
      })),
      more: found.lastKey !== undefined,
    };
  }

  async forget(orgId: string, contactId: string): Promise<number> {
    let forgotten = 0;
    for await (const found of queryPages(
      this.table,
      keys.activityOfContact(orgId, contactId),
      { consistent: true, project: [] },
    )) {
      await deleteKeys(this.table, found as unknown as Key[]);
      forgotten += found.length;
    }
    return forgotten;
  }
}
