/**
 * Driven adapter: sequences and series. The head lives in its
 * organization's partition (one prefix for both kinds, counted per kind on
 * the organization item); its versions and their nodes in a partition of
 * their own, removed with it.
 */
import { GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { where } from '../../db/expressions.ts';
import {
  entityType,
  ItemSchemaError,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keyParsers, keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  NODE_TYPES,
  SEQUENCE_STATUSES,
  type Sequence,
  type SequenceKind,
  type SequenceNode,
  type SequenceVersion,
  TRIGGER_TYPES,
  type Trigger,
  VERSION_STATUSES,
} from '../../sequences/model.ts';
import {
  CapReachedError,
  type SegmentChange,
  type SequenceRepository,
  type VersionWithNodes,
} from '../../sequences/ports.ts';
import {
  collectionCount,
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { releaseSegment, useSegment } from './dynamo-segment-repository.ts';
import {
  Counter,
  type DynamoTable,
  deleteByPrefix,
  failedConditions,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const nullableString = v.nullable(v.string());

const SequenceItem = itemSchema('Sequence', {
  id: v.string(),
  kind: v.picklist(['sequence', 'series']),
  name: v.string(),
  status: v.picklist(SEQUENCE_STATUSES),
  topicId: nullableString,
  trigger: v.nullable(
    v.object({ type: v.picklist(TRIGGER_TYPES), targetId: v.string() }),
  ),
  publishedVersionId: nullableString,
  draftVersionId: nullableString,
  versionCount: v.number(),
  createdAt: v.string(),
  updatedAt: v.string(),
  version: v.number(),
});

const VersionItem = itemSchema('SequenceVersion', {
  id: v.string(),
  sequenceId: v.string(),
  number: v.number(),
  status: v.picklist(VERSION_STATUSES),
  nodeSeq: v.number(),
  nodeCount: v.number(),
  contentBytes: v.number(),
  createdAt: v.string(),
  updatedAt: v.string(),
  publishedAt: nullableString,
  supersededAt: nullableString,
  revision: v.number(),
  startsAt: nullableString,
  listId: nullableString,
  audienceSegmentId: nullableString,
  audienceTagId: nullableString,
});

const nodeBase = {
  id: v.string(),
  versionId: v.string(),
  order: v.number(),
  createdAt: v.string(),
  updatedAt: v.string(),
};

const NodeItem = itemSchema('SequenceNode', {
  ...nodeBase,
  type: v.picklist(NODE_TYPES),
});

const SendEmailNodeSchema = v.object({
  ...nodeBase,
  type: v.literal('send_email'),
  subject: nullableString,
  content: v.string(),
  sendTimeMinutes: v.nullable(v.number()),
  templateId: nullableString,
});

const WaitNodeSchema = v.object({
  ...nodeBase,
  type: v.literal('wait'),
  waitHours: v.number(),
});

const NodeVariants = itemSchema('SequenceNode', {
  node: v.variant('type', [SendEmailNodeSchema, WaitNodeSchema]),
});

const sequenceFromItem = (item: Record<string, unknown>): Sequence =>
  parseItem(SequenceItem, item);

/** A head's image, as the table's change stream carries it. */
export interface SequenceImage {
  orgId: string;
  sequence: Sequence;
}

/**
 * Reads a whole head item (with its keys): the sequence or series and its
 * organization. Throws `ItemSchemaError` for any other item.
 */
export const sequenceImageOf = (
  item: Record<string, unknown>,
): SequenceImage => {
  const sequence = sequenceFromItem(item);
  const key = keyParsers.sequence(item);
  if (!key) {
    throw new ItemSchemaError(
      'Sequence',
      `${String(item.PK)} / ${String(item.SK)}`,
      ['PK'],
      'PK: not the key of a sequence',
    );
  }
  return { orgId: key.orgId, sequence };
};

const versionFromItem = (item: Record<string, unknown>): SequenceVersion =>
  parseItem(VersionItem, item);

const nodeFromItem = (item: Record<string, unknown>): SequenceNode => {
  // The type first (with the item's key in any error), then its variant.
  parseItem(NodeItem, item);
  return parseItem(NodeVariants, { node: item }).node;
};

const sequenceItem = (orgId: string, sequence: Sequence) => ({
  ...keys.sequence(orgId, sequence.id),
  ...entityType('Sequence'),
  ...sequence,
});

const versionItem = (orgId: string, version: SequenceVersion) => ({
  ...keys.sequenceVersion(orgId, version.sequenceId, version.id),
  ...entityType('SequenceVersion'),
  ...version,
});

const nodeItem = (orgId: string, sequenceId: string, node: SequenceNode) => ({
  ...keys.sequenceNode(orgId, sequenceId, node.versionId, node.id),
  ...entityType('SequenceNode'),
  ...node,
});

/** The collection counter of a kind (sequences and series share keys). */
const counterOf = (kind: SequenceKind) => kind;

const changed = (what: string, cause: unknown) =>
  new ConflictError(
    'sequence.changed',
    `The ${what} changed while the request ran; read it again and retry`,
    { cause },
  );

const byOrder = (a: SequenceNode, b: SequenceNode) => a.order - b.order;

/** Sequences, series, their versions and nodes, in DynamoDB. */
export class DynamoSequenceRepository implements SequenceRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(
    orgId: string,
    sequence: Sequence,
    draft: SequenceVersion,
    { cap, segments }: { cap?: number; segments?: SegmentChange } = {},
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const counter = counterOf(sequence.kind);
    try {
      await this.write(orgId, sequence.id, segments, [
        moveCollectionCounter(
          this.table,
          keys.sequencesOfOrganization(orgId),
          1,
          { counter, ...(cap === undefined ? {} : { cap }) },
        ),
        {
          Put: {
            TableName,
            Item: sequenceItem(orgId, sequence),
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        { Put: { TableName, Item: versionItem(orgId, draft) } },
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0) && cap !== undefined) {
        throw new CapReachedError(cap, { cause: error });
      }
      throw error;
    }
  }

  async get(orgId: string, sequenceId: string): Promise<Sequence | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.sequence(orgId, sequenceId),
        ConsistentRead: true,
      }),
    );
    return Item ? sequenceFromItem(Item) : undefined;
  }

  count(orgId: string, kind: SequenceKind): Promise<number> {
    return collectionCount(
      this.table,
      keys.sequencesOfOrganization(orgId),
      counterOf(kind),
    );
  }

  async page(
    orgId: string,
    kind: SequenceKind,
    request: PageRequest,
  ): Promise<Page<Sequence>> {
    const page = await pageOfCollection(
      this.table,
      keys.sequencesOfOrganization(orgId),
      request,
      {
        filter: where.eq('kind', kind),
        total: (counters) => {
          const item = counters.get(counterOf(kind));
          return item ? v.parse(Counter, item.count) : 0;
        },
      },
    );
    return { items: page.items.map(sequenceFromItem), total: page.total };
  }

  async update(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft?: { before: SequenceVersion; after: SequenceVersion },
    segments?: SegmentChange,
  ): Promise<void> {
    try {
      await this.write(orgId, before.id, segments, [
        this.headPut(orgId, before, after),
        ...(draft ? [this.draftPut(orgId, draft.before, draft.after)] : []),
      ]);
    } catch (error) {
      if (failedConditions(error)?.length) throw changed(before.kind, error);
      throw error;
    }
  }

  async delete(
    orgId: string,
    before: Sequence,
    segments?: SegmentChange,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    try {
      await this.write(orgId, before.id, segments, [
        {
          Delete: {
            TableName,
            Key: keys.sequence(orgId, before.id),
            ConditionExpression: 'attribute_exists(PK) AND #version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': before.version },
          },
        },
        moveCollectionCounter(
          this.table,
          keys.sequencesOfOrganization(orgId),
          -1,
          { counter: counterOf(before.kind) },
        ),
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0)) {
        throw changed(before.kind, error);
      }
      throw error;
    }
    // Versions and nodes: nothing reaches them once the head is gone.
    await deleteByPrefix(this.table, keys.sequenceContents(orgId, before.id));
  }

  async triggered(orgId: string, trigger: Trigger): Promise<Sequence[]> {
    const query = keys.sequencesOfOrganization(orgId);
    const found: Sequence[] = [];
    // The organization's heads only (its cap keeps them few), the others
    // dropped by the filter.
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression:
          '#kind = :kind AND #status = :active AND #trigger.#type = :type AND #trigger.targetId = :target',
        ExpressionAttributeNames: {
          '#kind': 'kind',
          '#status': 'status',
          '#trigger': 'trigger',
          '#type': 'type',
        },
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
          ':kind': 'sequence',
          ':active': 'active',
          ':type': trigger.type,
          ':target': trigger.targetId,
        },
      },
    );
    for await (const page of pages) {
      found.push(...(page.Items ?? []).map(sequenceFromItem));
    }
    return found;
  }

  async versions(
    orgId: string,
    sequenceId: string,
  ): Promise<SequenceVersion[]> {
    const items = await this.queryAll(keys.sequenceVersions(orgId, sequenceId));
    return items.map(versionFromItem).sort((a, b) => a.number - b.number);
  }

  async getVersion(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<SequenceVersion | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.sequenceVersion(orgId, sequenceId, versionId),
        ConsistentRead: true,
      }),
    );
    return Item ? versionFromItem(Item) : undefined;
  }

  async getVersionWithNodes(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<VersionWithNodes | undefined> {
    const [version, nodes] = await Promise.all([
      this.getVersion(orgId, sequenceId, versionId),
      this.queryAll(keys.sequenceNodes(orgId, sequenceId, versionId)),
    ]);
    if (!version) return undefined;
    return { version, nodes: nodes.map(nodeFromItem).sort(byOrder) };
  }

  async openDraft(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft: VersionWithNodes,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    // The nodes may not fit one transaction (4 MB): they go first, under
    // a version id nothing names until the transaction below commits.
    for (const node of draft.nodes) {
      await this.table.client.send(
        new PutCommand({
          TableName,
          Item: nodeItem(orgId, before.id, node),
        }),
      );
    }
    try {
      await transactWrite(this.table, [
        this.headPut(orgId, before, after),
        {
          Put: {
            TableName,
            Item: versionItem(orgId, draft.version),
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      ]);
    } catch (error) {
      await deleteByPrefix(
        this.table,
        keys.sequenceNodes(orgId, before.id, draft.version.id),
      );
      if (failedConditions(error)?.length) throw changed(before.kind, error);
      throw error;
    }
  }

  async discardDraft(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft: SequenceVersion,
    segments?: SegmentChange,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    try {
      await this.write(orgId, before.id, segments, [
        this.headPut(orgId, before, after),
        {
          Delete: {
            TableName,
            Key: keys.sequenceVersion(orgId, draft.sequenceId, draft.id),
            ...draftAtRevision(draft),
          },
        },
      ]);
    } catch (error) {
      if (failedConditions(error)?.length) throw changed(before.kind, error);
      throw error;
    }
    await deleteByPrefix(
      this.table,
      keys.sequenceNodes(orgId, draft.sequenceId, draft.id),
    );
  }

  async addNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void> {
    await this.versionAndNode(orgId, before, after, {
      Put: {
        TableName: this.table.tableName,
        Item: nodeItem(orgId, before.sequenceId, node),
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
  }

  async updateNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void> {
    await this.versionAndNode(orgId, before, after, {
      Put: {
        TableName: this.table.tableName,
        Item: nodeItem(orgId, before.sequenceId, node),
        ConditionExpression: 'attribute_exists(PK)',
      },
    });
  }

  async deleteNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void> {
    await this.versionAndNode(orgId, before, after, {
      Delete: {
        TableName: this.table.tableName,
        Key: keys.sequenceNode(
          orgId,
          before.sequenceId,
          node.versionId,
          node.id,
        ),
        ConditionExpression: 'attribute_exists(PK)',
      },
    });
  }

  async publish(
    orgId: string,
    change: Parameters<SequenceRepository['publish']>[1],
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const { before, after, draft, published, superseded, segments } = change;
    const items: TransactItem[] = [
      this.headPut(orgId, before, after),
      this.draftPut(orgId, draft, published),
      ...(superseded
        ? [
            {
              Put: {
                TableName,
                Item: versionItem(orgId, {
                  ...superseded.after,
                  revision: superseded.before.revision + 1,
                }),
                ConditionExpression: '#revision = :revision',
                ExpressionAttributeNames: { '#revision': 'revision' },
                ExpressionAttributeValues: {
                  ':revision': superseded.before.revision,
                },
              },
            },
          ]
        : []),
    ];
    try {
      await this.write(orgId, before.id, segments, items);
    } catch (error) {
      if (failedConditions(error)?.length) throw changed(before.kind, error);
      throw error;
    }
  }

  /**
   * One transaction: `items`, then the segment entries of `segments`. A
   * segment entry's failed condition (the segment deleted, or filtering
   * another list, since it was checked) is a 404 `segment.notFound`.
   */
  private async write(
    orgId: string,
    seriesId: string,
    segments: SegmentChange | undefined,
    items: TransactItem[],
  ): Promise<void> {
    const used = new Set(segments?.use.map((u) => u.segmentId));
    const segmentItems = [
      ...(segments?.use ?? []).map(({ segmentId, listId }) =>
        useSegment(this.table, {
          orgId,
          segmentId,
          listId,
          seriesId,
          seriesName: segments?.seriesName ?? '',
        }),
      ),
      ...(segments?.release ?? [])
        .filter((segmentId) => !used.has(segmentId))
        .map((segmentId) =>
          releaseSegment(this.table, { orgId, segmentId, seriesId }),
        ),
    ];
    try {
      await transactWrite(this.table, [...items, ...segmentItems]);
    } catch (error) {
      const failed = failedConditions(error) ?? [];
      if (failed.some((index) => index >= items.length)) {
        throw new NotFoundError(
          'segment.notFound',
          'A segment of the series was deleted, or filters another list, meanwhile',
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** The head's new state, conditional on the version read. */
  private headPut(
    orgId: string,
    before: Sequence,
    after: Sequence,
  ): TransactItem {
    return {
      Put: {
        TableName: this.table.tableName,
        Item: sequenceItem(orgId, { ...after, version: before.version + 1 }),
        ConditionExpression: 'attribute_exists(PK) AND #version = :version',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':version': before.version },
      },
    };
  }

  /** A draft's new state, conditional on its revision and status read. */
  private draftPut(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
  ): TransactItem {
    return {
      Put: {
        TableName: this.table.tableName,
        Item: versionItem(orgId, { ...after, revision: before.revision + 1 }),
        ...draftAtRevision(before),
      },
    };
  }

  /** A draft's counters moved with one node write, in one transaction. */
  private async versionAndNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    nodeWrite: TransactItem,
  ) {
    try {
      await transactWrite(this.table, [
        this.draftPut(orgId, before, after),
        nodeWrite,
      ]);
    } catch (error) {
      const failed = failedConditions(error);
      if (failed?.includes(1) && !failed.includes(0)) {
        throw new NotFoundError('sequenceNode.notFound', 'No such node', {
          cause: error,
        });
      }
      if (failed?.length) throw changed('version', error);
      throw error;
    }
  }

  private async queryAll(
    query: ReturnType<typeof keys.sequenceVersions>,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
        },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  }
}

/** The condition of a write to a draft read at `version`'s revision. */
const draftAtRevision = (version: SequenceVersion) => ({
  ConditionExpression:
    'attribute_exists(PK) AND #status = :draft AND #revision = :revision',
  ExpressionAttributeNames: { '#status': 'status', '#revision': 'revision' },
  ExpressionAttributeValues: {
    ':draft': 'draft',
    ':revision': version.revision,
  },
});
