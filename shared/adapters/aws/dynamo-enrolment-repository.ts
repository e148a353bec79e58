/**
 * Driven adapter: contacts' journeys through sequences, one item per
 * (sequence, contact) in a partition per sequence. Creation is conditional
 * on the key being free, so one contact has one journey per sequence for
 * good; every change is conditional on the revision read.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
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
import {
  type DynamoTable,
  deleteKeys,
  isConditionFailure,
} from './dynamo-table.ts';

const EnrolmentItem = itemSchema('SequenceEnrolment', {
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

const toItem = (orgId: string, e: Enrolment) => ({
  ...keys.enrolment(orgId, e.sequenceId, e.contactId),
  ...entityType('SequenceEnrolment'),
  ...e,
});

const fromItem = (item: Record<string, unknown>): Enrolment =>
  parseItem(EnrolmentItem, item);

/** The cursor of a page: the last contact id read, base64url. */
const encodeCursor = (contactId: string) =>
  Buffer.from(contactId, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) =>
  Buffer.from(cursor, 'base64url').toString('utf8');

/** Journeys through sequences, in DynamoDB. */
export class DynamoEnrolmentRepository implements EnrolmentRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, enrolment: Enrolment): Promise<boolean> {
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: toItem(orgId, enrolment),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async get(
    orgId: string,
    sequenceId: string,
    contactId: string,
  ): Promise<Enrolment | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.enrolment(orgId, sequenceId, contactId),
        ConsistentRead: true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async update(
    orgId: string,
    before: Enrolment,
    after: Enrolment,
  ): Promise<void> {
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: toItem(orgId, { ...after, revision: before.revision + 1 }),
          ConditionExpression: 'attribute_exists(PK) AND revision = :revision',
          ExpressionAttributeValues: { ':revision': before.revision },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new ConflictError(
          'sequence.changed',
          `The journey of contact ${before.contactId} in sequence ${before.sequenceId} changed meanwhile`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async page(
    orgId: string,
    sequenceId: string,
    options: { limit: number; cursor?: string; waiting?: boolean },
  ): Promise<EnrolmentPage> {
    const query = keys.enrolmentsOfSequence(orgId, sequenceId);
    const items: Enrolment[] = [];
    let start: Record<string, unknown> | undefined = options.cursor
      ? {
          ...keys.enrolment(orgId, sequenceId, decodeCursor(options.cursor)),
        }
      : undefined;
    // A filter reads past the items it drops: go on until the page is full
    // or the partition ends.
    do {
      const result = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': query.PK,
            ':prefix': query.skPrefix,
            ...(options.waiting ? { ':waiting': true } : {}),
          },
          ...(options.waiting
            ? { FilterExpression: 'waiting = :waiting' }
            : {}),
          ConsistentRead: true,
          Limit: options.limit - items.length,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(result.Items ?? []).map(fromItem));
      start = result.LastEvaluatedKey;
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
