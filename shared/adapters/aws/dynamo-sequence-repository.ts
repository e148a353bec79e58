/**
 * Driven adapter: sequences and series. The head lives in its
 * organization's partition (one prefix for both kinds, counted per kind on
 * the organization item); its versions and their nodes in a partition of
 * their own, removed with it.
 */
import * as v from 'valibot';
import { type Where, where } from '../../db/expressions.ts';
import { ItemSchemaError, itemSchema, parseItem } from '../../db/items.ts';
import { keyParsers, keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
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
import { entity } from './dynamo-entity.ts';
import { releaseSegment, useSegment } from './dynamo-segment-repository.ts';
import {
  Counter,
  type DynamoTable,
  deleteByPrefix,
  failedConditions,
  type Otherwise,
  onFailedCondition,
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

/** A node: its attributes by its type. */
const NodeItem = {
  type: 'SequenceNode' as const,
  schema: v.variant('type', [SendEmailNodeSchema, WaitNodeSchema]),
};

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
  const sequence = parseItem(SequenceItem, item);
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

const versionKey = (orgId: string, version: SequenceVersion) =>
  keys.sequenceVersion(orgId, version.sequenceId, version.id);

const nodeKey = (orgId: string, sequenceId: string, node: SequenceNode) =>
  keys.sequenceNode(orgId, sequenceId, node.versionId, node.id);

/** The condition of a write to a head read at `version`. */
const headAt = (version: number) => (w: Where<Sequence>) =>
  w.and(w.exists(), w.eq('version', version));

/** The condition of a write to a draft read at `revision`. */
const draftAt = (revision: number) => (w: Where<SequenceVersion>) =>
  w.and(w.exists(), w.eq('status', 'draft'), w.eq('revision', revision));

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
  private readonly sequences;
  private readonly sequenceVersions;
  private readonly sequenceNodes;

  constructor(private readonly table: DynamoTable) {
    this.sequences = entity(table, SequenceItem);
    this.sequenceVersions = entity(table, VersionItem);
    this.sequenceNodes = entity(table, NodeItem);
  }

  async create(
    orgId: string,
    sequence: Sequence,
    draft: SequenceVersion,
    { cap, segments }: { cap?: number; segments?: SegmentChange } = {},
  ): Promise<void> {
    const counter = counterOf(sequence.kind);
    try {
      await this.write(orgId, sequence.id, segments, [
        moveCollectionCounter(
          this.table,
          keys.sequencesOfOrganization(orgId),
          1,
          { counter, ...(cap === undefined ? {} : { cap }) },
        ),
        this.sequences.putTx(keys.sequence(orgId, sequence.id), sequence, {
          if: (w) => w.missing(),
        }),
        this.sequenceVersions.putTx(versionKey(orgId, draft), draft),
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0) && cap !== undefined) {
        throw new CapReachedError(cap, { cause: error });
      }
      throw error;
    }
  }

  get(orgId: string, sequenceId: string): Promise<Sequence | undefined> {
    return this.sequences.get(keys.sequence(orgId, sequenceId), {
      consistent: true,
    });
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
    return {
      items: page.items.map((item) => this.sequences.parse(item)),
      total: page.total,
    };
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
    try {
      await this.write(orgId, before.id, segments, [
        this.sequences.deleteTx(keys.sequence(orgId, before.id), {
          if: headAt(before.version),
        }),
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

  triggered(orgId: string, trigger: Trigger): Promise<Sequence[]> {
    // The organization's heads only (its cap keeps them few), the others
    // dropped by the filter.
    return this.sequences.all(keys.sequencesOfOrganization(orgId), {
      filter: (w) =>
        w.and(
          w.eq('kind', 'sequence'),
          w.eq('status', 'active'),
          w.eq('trigger.type', trigger.type),
          w.eq('trigger.targetId', trigger.targetId),
        ),
    });
  }

  async versions(
    orgId: string,
    sequenceId: string,
  ): Promise<SequenceVersion[]> {
    const versions = await this.sequenceVersions.all(
      keys.sequenceVersions(orgId, sequenceId),
      { consistent: true },
    );
    return versions.sort((a, b) => a.number - b.number);
  }

  getVersion(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<SequenceVersion | undefined> {
    return this.sequenceVersions.get(
      keys.sequenceVersion(orgId, sequenceId, versionId),
      { consistent: true },
    );
  }

  async getVersionWithNodes(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<VersionWithNodes | undefined> {
    const [version, nodes] = await Promise.all([
      this.getVersion(orgId, sequenceId, versionId),
      this.sequenceNodes.all(keys.sequenceNodes(orgId, sequenceId, versionId), {
        consistent: true,
      }),
    ]);
    if (!version) return undefined;
    return { version, nodes: nodes.sort(byOrder) };
  }

  async openDraft(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft: VersionWithNodes,
  ): Promise<void> {
    // The nodes may not fit one transaction (4 MB): they go first, under
    // a version id nothing names until the transaction below commits.
    for (const node of draft.nodes) {
      await this.sequenceNodes.put(nodeKey(orgId, before.id, node), node);
    }
    try {
      await transactWrite(this.table, [
        this.headPut(orgId, before, after),
        this.sequenceVersions.putTx(
          versionKey(orgId, draft.version),
          draft.version,
          { if: (w) => w.missing() },
        ),
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
    try {
      await this.write(orgId, before.id, segments, [
        this.headPut(orgId, before, after),
        this.sequenceVersions.deleteTx(versionKey(orgId, draft), {
          if: draftAt(draft.revision),
        }),
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
    await this.versionAndNode(
      orgId,
      before,
      after,
      this.sequenceNodes.putTx(nodeKey(orgId, before.sequenceId, node), node, {
        if: (w) => w.missing(),
      }),
    );
  }

  async updateNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void> {
    await this.versionAndNode(
      orgId,
      before,
      after,
      this.sequenceNodes.putTx(nodeKey(orgId, before.sequenceId, node), node, {
        if: (w) => w.exists(),
      }),
    );
  }

  async deleteNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void> {
    await this.versionAndNode(
      orgId,
      before,
      after,
      this.sequenceNodes.deleteTx(nodeKey(orgId, before.sequenceId, node), {
        if: (w) => w.exists(),
      }),
    );
  }

  async publish(
    orgId: string,
    change: Parameters<SequenceRepository['publish']>[1],
  ): Promise<void> {
    const { before, after, draft, published, superseded, segments } = change;
    const items: TransactItem[] = [
      this.headPut(orgId, before, after),
      this.draftPut(orgId, draft, published),
      ...(superseded
        ? [
            this.sequenceVersions.putTx(
              versionKey(orgId, superseded.after),
              { ...superseded.after, revision: superseded.before.revision + 1 },
              { if: (w) => w.eq('revision', superseded.before.revision) },
            ),
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
  private write(
    orgId: string,
    seriesId: string,
    segments: SegmentChange | undefined,
    items: TransactItem[],
  ): Promise<void> {
    const gone: Otherwise = (cause) =>
      new NotFoundError(
        'segment.notFound',
        'A segment of the series was deleted, or filters another list, meanwhile',
        { cause },
      );
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
    ].map((item) => onFailedCondition(item, gone));
    return transactWrite(this.table, [...items, ...segmentItems]);
  }

  /** The head's new state, conditional on the version read. */
  private headPut(
    orgId: string,
    before: Sequence,
    after: Sequence,
  ): TransactItem {
    return this.sequences.putTx(
      keys.sequence(orgId, after.id),
      { ...after, version: before.version + 1 },
      { if: headAt(before.version) },
    );
  }

  /** A draft's new state, conditional on its revision and status read. */
  private draftPut(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    otherwise?: Otherwise,
  ): TransactItem {
    return this.sequenceVersions.putTx(
      versionKey(orgId, after),
      { ...after, revision: before.revision + 1 },
      { if: draftAt(before.revision), ...(otherwise ? { otherwise } : {}) },
    );
  }

  /**
   * A draft's counters moved with one node write, in one transaction: the
   * draft changed meanwhile is a 409, else a node not found a 404.
   */
  private async versionAndNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    nodeWrite: TransactItem,
  ) {
    await transactWrite(this.table, [
      this.draftPut(orgId, before, after, (cause) => changed('version', cause)),
      onFailedCondition(
        nodeWrite,
        (cause) =>
          new NotFoundError('sequenceNode.notFound', 'No such node', {
            cause,
          }),
      ),
    ]);
  }
}
