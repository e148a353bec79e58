/**
 * Driven adapter: campaigns in their organization's partition, each with
 * its content in an item of its own (a send's writes never pay for the
 * HTML's size), and one item counting the organization's campaigns per
 * status (the totals of GET /campaigns).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import {
  CAMPAIGN_STATUSES,
  type Campaign,
  type CampaignContent,
  type CampaignOrigin,
  type CampaignStatus,
  FAILURE_REASONS,
  HOLD_REASONS,
} from '../../campaigns/model.ts';
import type { CampaignRepository } from '../../campaigns/ports.ts';
import { whereOf } from '../../db/expressions.ts';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { pageOfCollection } from './dynamo-collections.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  failedConditions,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const nullable = <S extends v.GenericSchema>(schema: S) =>
  v.optional(v.nullable(schema), null);

const CampaignItem = itemSchema('Campaign', {
  id: v.string(),
  name: v.string(),
  subject: v.string(),
  templateId: nullable(v.string()),
  listId: v.string(),
  segmentId: nullable(v.string()),
  tagId: nullable(v.string()),
  sendingIdentityId: nullable(v.string()),
  topicId: nullable(v.string()),
  origin: nullable(
    v.object({
      seriesId: v.string(),
      versionId: v.string(),
      step: v.number(),
    }),
  ),
  status: v.picklist(CAMPAIGN_STATUSES),
  scheduledAt: nullable(v.string()),
  sendId: nullable(v.string()),
  startedAt: nullable(v.string()),
  completedAt: nullable(v.string()),
  failure: nullable(
    v.object({
      reason: v.picklist(FAILURE_REASONS),
      message: v.string(),
      at: v.string(),
    }),
  ),
  lastHold: nullable(
    v.object({
      reason: v.picklist(HOLD_REASONS),
      at: v.string(),
      blockers: v.optional(v.array(v.string())),
    }),
  ),
  progress: v.object({
    total: v.number(),
    sent: v.number(),
    failed: v.number(),
    skipped: v.number(),
  }),
  createdAt: v.string(),
  updatedAt: v.string(),
  version: v.number(),
});

const ContentItem = itemSchema('CampaignContent', { html: v.string() });

const SeriesStepItem = itemSchema('SeriesStepCampaign', {
  campaignId: v.string(),
});

const seriesStepKey = (orgId: string, origin: CampaignOrigin) =>
  keys.seriesStepCampaign(
    orgId,
    origin.seriesId,
    origin.versionId,
    origin.step,
  );

export const CountsItem = itemSchema(
  'CampaignCounts',
  Object.fromEntries(CAMPAIGN_STATUSES.map((status) => [status, Counter])),
);

/** The per-status counts of a counts item (all 0 before the first). */
const countsOf = (
  item: Record<string, unknown> | undefined,
): Record<CampaignStatus, number> =>
  parseItem(CountsItem, item ?? { ...entityType('CampaignCounts') }) as Record<
    CampaignStatus,
    number
  >;

const toItem = (orgId: string, campaign: Campaign) => ({
  ...keys.campaign(orgId, campaign.id),
  ...entityType('Campaign'),
  ...campaign,
});

const contentItem = (
  orgId: string,
  campaignId: string,
  content: CampaignContent,
) => ({
  ...keys.campaignContent(orgId, campaignId),
  ...entityType('CampaignContent'),
  ...content,
});

const changed = (campaignId: string, cause: unknown) =>
  new ConflictError(
    'campaign.changed',
    `Campaign ${campaignId} changed while the request ran; retry`,
    { cause },
  );

/** Campaigns, their content and their counters on DynamoDB. */
export class DynamoCampaignRepository implements CampaignRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(
    orgId: string,
    campaign: Campaign,
    content: CampaignContent,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const { origin } = campaign;
    try {
      await transactWrite(this.table, [
        {
          Put: {
            TableName,
            Item: toItem(orgId, campaign),
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        { Put: { TableName, Item: contentItem(orgId, campaign.id, content) } },
        this.count(orgId, { [campaign.status]: 1 }),
        // A series step makes one campaign, however often it fires.
        ...(origin
          ? [
              {
                Put: {
                  TableName,
                  Item: {
                    ...seriesStepKey(orgId, origin),
                    ...entityType('SeriesStepCampaign'),
                    campaignId: campaign.id,
                  },
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
            ]
          : []),
      ]);
    } catch (error) {
      if (origin && failedConditions(error)?.includes(3)) {
        throw new ConflictError(
          'campaign.changed',
          `Step ${origin.step} of series ${origin.seriesId} (version ${origin.versionId}) already made its campaign`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async ofSeriesStep(
    orgId: string,
    origin: CampaignOrigin,
  ): Promise<string | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: seriesStepKey(orgId, origin),
        ConsistentRead: true,
      }),
    );
    return Item ? parseItem(SeriesStepItem, Item).campaignId : undefined;
  }

  async get(orgId: string, campaignId: string): Promise<Campaign | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.campaign(orgId, campaignId),
        ConsistentRead: true,
      }),
    );
    return Item ? parseItem(CampaignItem, Item) : undefined;
  }

  async getWithContent(
    orgId: string,
    campaignId: string,
  ): Promise<{ campaign: Campaign; content: CampaignContent } | undefined> {
    const items = await batchGet(this.table, [
      keys.campaign(orgId, campaignId),
      keys.campaignContent(orgId, campaignId),
    ]);
    const campaign = items.find((item) => item._type === 'Campaign');
    const content = items.find((item) => item._type === 'CampaignContent');
    if (!campaign || !content) return undefined;
    return {
      campaign: parseItem(CampaignItem, campaign),
      content: parseItem(ContentItem, content),
    };
  }

  async page(
    orgId: string,
    filter: { status?: CampaignStatus },
    { page, limit }: PageRequest,
  ): Promise<Page<Campaign>> {
    // The counts item sits just past the campaigns: read in the same Query.
    const found = await pageOfCollection(
      this.table,
      keys.campaignsOfOrganization(orgId),
      { page, limit },
      {
        ...(filter.status
          ? {
              filter: whereOf<Campaign>().eq('status', filter.status),
            }
          : {}),
        counterType: 'CampaignCounts',
        total: (counters) => {
          const counts = countsOf(counters.get('counts'));
          return filter.status
            ? counts[filter.status]
            : Object.values(counts).reduce((sum, n) => sum + n, 0);
        },
      },
    );
    return {
      items: found.items.map((item) => parseItem(CampaignItem, item)),
      total: found.total,
    };
  }

  async update(
    orgId: string,
    before: Campaign,
    after: Campaign,
    content?: CampaignContent,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const moved =
      before.status === after.status
        ? []
        : [this.count(orgId, { [before.status]: -1, [after.status]: 1 })];
    try {
      await transactWrite(this.table, [
        {
          Put: {
            TableName,
            Item: toItem(orgId, { ...after, version: before.version + 1 }),
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': before.version },
          },
        },
        ...(content
          ? [
              {
                Put: { TableName, Item: contentItem(orgId, after.id, content) },
              },
            ]
          : []),
        ...moved,
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0)) throw changed(after.id, error);
      throw error;
    }
  }

  async delete(orgId: string, before: Campaign): Promise<void> {
    const { tableName: TableName } = this.table;
    try {
      await transactWrite(this.table, [
        {
          Delete: {
            TableName,
            Key: keys.campaign(orgId, before.id),
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': before.version },
          },
        },
        { Delete: { TableName, Key: keys.campaignContent(orgId, before.id) } },
        this.count(orgId, { [before.status]: -1 }),
      ]);
    } catch (error) {
      if (failedConditions(error)?.includes(0)) throw changed(before.id, error);
      throw error;
    }
  }

  /** Moves the per-status counters by these amounts. */
  private count(
    orgId: string,
    by: Partial<Record<CampaignStatus, number>>,
  ): TransactItem {
    const entries = Object.entries(by);
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.campaignCounts(orgId),
        UpdateExpression: `SET #type = :type ADD ${entries
          .map((_, i) => `#s${i} :n${i}`)
          .join(', ')}`,
        ExpressionAttributeNames: {
          '#type': '_type',
          ...Object.fromEntries(
            entries.map(([status], i) => [`#s${i}`, status]),
          ),
        },
        ExpressionAttributeValues: {
          ':type': 'CampaignCounts',
          ...Object.fromEntries(entries.map(([, n], i) => [`:n${i}`, n])),
        },
      },
    };
  }
}
