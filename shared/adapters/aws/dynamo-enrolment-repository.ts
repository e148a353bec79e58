/**
 * Driven adapter: contacts' journeys through sequences, one item per
 * (sequence, contact) in a partition per sequence. Creation is conditional
 * on the key being free, so one contact has one journey per sequence for
 * good; every change is conditional on the revision read.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { type Key, keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import {
  ENROLMENT_STATUSES,
  type Enrolment,
  EXIT_REASONS,
  STEP_HOLD_REASONS,
  STEP_OUTCOMES,
} from '../../sequences/model.ts';
import type {
  EnrolmentPage,
  EnrolmentRepository,
} from '../../sequences/ports.ts';
import { entity } from './dynamo-entity.ts';
import {
  type DynamoTable,
  deleteKeys,
  isConditionFailure,
} from './dynamo-table.ts';

/** One contact's journey through one sequence. */
export const EnrolmentItem = itemSchema('SequenceEnrolment', {
  sequenceId: v.string(),
  contactId: v.string(),
  listId: v.string(),
  email: v.string(),
  versionId: v.string(),
  position: v.number(),
  status: v.picklist(ENROLMENT_STATUSES),
  exitReason: v.nullable(v.picklist(EXIT_REASONS)),
  enrolledAt: v.string(),
  dueAt: v.nullable(v.string()),
  waiting: v.boolean(),
  claim: v.nullable(
    v.object({ position: v.number(), owner: v.string(), until: v.string() }),
  ),
  lastStep: v.nullable(
    v.object({
      position: v.number(),
      outcome: v.picklist(STEP_OUTCOMES),
      at: v.string(),
      messageId: v.optional(v.string()),
    }),
  ),
  lastHold: v.nullable(
    v.object({ reason: v.picklist(STEP_HOLD_REASONS), at: v.string() }),
  ),
  sent: v.number(),
  skipped: v.number(),
  endedAt: v.nullable(v.string()),
  updatedAt: v.string(),
  revision: v.number(),
});

/** The cursor of a page: the last contact id read, base64url. */
const encodeCursor = (contactId: string) =>
  Buffer.from(contactId, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) =>
  Buffer.from(cursor, 'base64url').toString('utf8');

/** Journeys through sequences, in DynamoDB. */
export class DynamoEnrolmentRepository implements EnrolmentRepository {
  private readonly enrolments;

  constructor(private readonly table: DynamoTable) {
    this.enrolments = entity(table, EnrolmentItem);
  }

  async create(orgId: string, enrolment: Enrolment): Promise<boolean> {
    try {
      await this.enrolments.put(
        keys.enrolment(orgId, enrolment.sequenceId, enrolment.contactId),
        enrolment,
        { if: (w) => w.missing() },
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  get(
    orgId: string,
    sequenceId: string,
    contactId: string,
  ): Promise<Enrolment | undefined> {
    return this.enrolments.get(keys.enrolment(orgId, sequenceId, contactId), {
      consistent: true,
    });
  }

  async update(
    orgId: string,
    before: Enrolment,
    after: Enrolment,
  ): Promise<void> {
    await this.enrolments.put(
      keys.enrolment(orgId, after.sequenceId, after.contactId),
      { ...after, revision: before.revision + 1 },
      {
        if: (w) => w.and(w.exists(), w.eq('revision', before.revision)),
        otherwise: (cause) =>
          new ConflictError(
            'sequence.changed',
            `The journey of contact ${before.contactId} in sequence ${before.sequenceId} changed meanwhile`,
            { cause },
          ),
      },
    );
  }

  async page(
    orgId: string,
    sequenceId: string,
    options: { limit: number; cursor?: string; waiting?: boolean },
  ): Promise<EnrolmentPage> {
    const query = keys.enrolmentsOfSequence(orgId, sequenceId);
    const items: Enrolment[] = [];
    let start: Key | undefined = options.cursor
      ? keys.enrolment(orgId, sequenceId, decodeCursor(options.cursor))
      : undefined;
    // A filter reads past the items it drops: go on until the page is full
    // or the partition ends.
    do {
      const found = await this.enrolments.page(query, {
        consistent: true,
        limit: options.limit - items.length,
        ...(start ? { startKey: start } : {}),
        ...(options.waiting ? { filter: (w) => w.eq('waiting', true) } : {}),
      });
      items.push(...found.items);
      start = found.lastKey;
    } while (start && items.length < options.limit);
    const last = items.at(-1);
    return {
      items,
      ...(start && last ? { cursor: encodeCursor(last.contactId) } : {}),
    };
  }

  async deleteMany(
    orgId: string,
    sequenceId: string,
    contactIds: readonly string[],
  ): Promise<void> {
    await deleteKeys(
      this.table,
      contactIds.map((contactId) =>
        keys.enrolment(orgId, sequenceId, contactId),
      ),
    );
  }
}
