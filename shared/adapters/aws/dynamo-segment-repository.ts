/**
 * Driven adapter: segments in their organization's partition, counted on
 * the organization item; the series that use a segment kept on it as a map
 * (`usedBy`, series id → series name), written by the series' own
 * transactions through `useSegment` and `releaseSegment`.
 */

import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { Contact } from '../../audience/model.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  SEGMENT_FIELDS,
  SEGMENT_MATCHES,
  SEGMENT_OPERATORS,
  type Segment,
  type SegmentCondition,
} from '../../segments/model.ts';
import type { SegmentRepository } from '../../segments/ports.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { contactFromItem } from './dynamo-contact-repository.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

// Stored conditions were checked on the way in; read them back loosely,
// so that a rule tightened later never makes an old segment unreadable.
const StoredCondition = v.object({
  field: v.picklist(SEGMENT_FIELDS),
  operator: v.picklist([
    ...new Set(Object.values(SEGMENT_OPERATORS).flat()),
  ] as string[]),
  value: v.optional(v.string()),
});

const SegmentItem = itemSchema('Segment', {
  id: v.string(),
  name: v.string(),
  listId: v.string(),
  match: v.picklist(SEGMENT_MATCHES),
  conditions: v.array(StoredCondition),
  createdAt: v.string(),
  updatedAt: v.string(),
  usedBy: v.optional(v.record(v.string(), v.string()), {}),
});

const toItem = (orgId: string, segment: Segment) => ({
  ...keys.segment(orgId, segment.id),
  ...entityType('Segment'),
  ...segment,
});

const fromItem = (item: Record<string, unknown>): Segment => {
  const { conditions, ...segment } = parseItem(SegmentItem, item);
  return { ...segment, conditions: conditions as SegmentCondition[] };
};

const notFound = (segmentId: string, cause: unknown) =>
  new NotFoundError('segment.notFound', `No segment ${segmentId}`, { cause });

/** A series taking a segment: who, and over which list. */
export interface SegmentUse {
  orgId: string;
  segmentId: string;
  seriesId: string;
  /** Shown in the refusal of the segment's deletion. */
  seriesName: string;
  /** The list the series targets: the segment must filter that list. */
  listId: string;
}

/**
 * The TransactWriteItems entry a series write adds to its own transaction
 * when it takes a segment (or is renamed: the entry writes the name again):
 * `usedBy[seriesId] = seriesName`, on the condition that the segment exists
 * and filters the series' list. When that condition fails the transaction
 * is cancelled: explain it with `requireSegmentOfList` (404
 * `segment.notFound` or 400 `segment.listMismatch`).
 */
export const useSegment = (
  table: Pick<DynamoTable, 'tableName'>,
  use: SegmentUse,
): TransactItem => ({
  Update: {
    TableName: table.tableName,
    Key: keys.segment(use.orgId, use.segmentId),
    UpdateExpression: 'SET usedBy.#series = :name',
    ConditionExpression: 'attribute_exists(PK) AND listId = :listId',
    ExpressionAttributeNames: { '#series': use.seriesId },
    ExpressionAttributeValues: {
      ':name': use.seriesName,
      ':listId': use.listId,
    },
  },
});

/**
 * The TransactWriteItems entry a series write adds to its own transaction
 * when it lets a segment go (another segment, none, or the series
 * deleted): removes `usedBy[seriesId]`; idempotent. Conditional on the
 * segment's existence only so that no write ever creates a stub item: a
 * segment in use cannot be deleted, so a series releasing a segment it
 * took always finds it.
 */
export const releaseSegment = (
  table: Pick<DynamoTable, 'tableName'>,
  release: Pick<SegmentUse, 'orgId' | 'segmentId' | 'seriesId'>,
): TransactItem => ({
  Update: {
    TableName: table.tableName,
    Key: keys.segment(release.orgId, release.segmentId),
    UpdateExpression: 'REMOVE usedBy.#series',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeNames: { '#series': release.seriesId },
  },
});

/** Segments, their counter and the walk over a list's contacts. */
export class DynamoSegmentRepository implements SegmentRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, segment: Segment): Promise<void> {
    const { tableName: TableName } = this.table;
    try {
      await transactWrite(this.table, [
        {
          ConditionCheck: {
            TableName,
            Key: keys.list(orgId, segment.listId),
            ConditionExpression: 'attribute_exists(PK)',
          },
        },
        {
          Put: {
            TableName,
            // `usedBy` starts as an empty map: `useSegment` sets its keys.
            Item: toItem(orgId, segment),
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        moveCollectionCounter(
          this.table,
          keys.segmentsOfOrganization(orgId),
          1,
        ),
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0)) {
        throw new NotFoundError('list.notFound', `No list ${segment.listId}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async get(orgId: string, segmentId: string): Promise<Segment | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.segment(orgId, segmentId),
        ConsistentRead: true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Segment>> {
    const page = await pageOfCollection(
      this.table,
      keys.segmentsOfOrganization(orgId),
      request,
    );
    return { items: page.items.map(fromItem), total: page.total };
  }

  async update(orgId: string, segment: Segment): Promise<void> {
    // The series write `usedBy` meanwhile: write only what the API changes.
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.segment(orgId, segment.id),
          UpdateExpression:
            'SET #name = :name, #match = :match, conditions = :conditions, updatedAt = :at',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#name': 'name', '#match': 'match' },
          ExpressionAttributeValues: {
            ':name': segment.name,
            ':match': segment.match,
            ':conditions': segment.conditions,
            ':at': segment.updatedAt,
          },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw notFound(segment.id, error);
      throw error;
    }
  }

  async delete(orgId: string, segmentId: string): Promise<boolean> {
    const { tableName: TableName } = this.table;
    try {
      await transactWrite(this.table, [
        {
          Delete: {
            TableName,
            Key: keys.segment(orgId, segmentId),
            ConditionExpression:
              'attribute_exists(PK) AND (attribute_not_exists(usedBy) OR size(usedBy) = :none)',
            ExpressionAttributeValues: { ':none': 0 },
          },
        },
        moveCollectionCounter(
          this.table,
          keys.segmentsOfOrganization(orgId),
          -1,
        ),
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }

  async sampleOfList(
    orgId: string,
    listId: string,
    limit: number,
  ): Promise<{ contacts: Contact[]; whole: boolean }> {
    const query = keys.contactsOfList(orgId, listId);
    const contacts: Contact[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const found = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': query.PK,
            ':prefix': query.skPrefix,
          },
          Limit: limit - contacts.length,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      contacts.push(...(found.Items ?? []).map(contactFromItem));
      start = found.LastEvaluatedKey;
    } while (start && contacts.length < limit);
    return { contacts, whole: !start };
  }
}
