/**
 * Driven adapter: campaigns in their organization's partition, each with
 * its content in an item of its own (a send's writes never pay for the
 * HTML's size), and one item counting the organization's campaigns per
 * status (the totals of GET /campaigns).
 */
import * as v from 'valibot';
import {
  CAMPAIGN_STATUSES,
  type Campaign,
  type CampaignContent,
  type CampaignOrigin,
  type CampaignStatus,
  FAILURE_REASONS,
  HOLD_REASONS,
  PAUSE_REASONS,
} from '../../campaigns/model.ts';
import type { CampaignRepository } from '../../campaigns/ports.ts';
import { whereOf } from '../../db/expressions.ts';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { pageOfCollection } from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const nullable = <S extends v.GenericSchema>(schema: S) =>
  v.optional(v.nullable(schema), null);

export const CampaignItem = itemSchema('Campaign', {
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
  paused: nullable(
    v.object({ at: v.string(), reason: v.picklist(PAUSE_REASONS) }),
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

const changed = (campaignId: string) => (cause: unknown) =>
  new ConflictError(
    'campaign.changed',
    `Campaign ${campaignId} changed while the request ran; retry`,
    { cause },
  );

/** Campaigns, their content and their counters on DynamoDB. */
export class DynamoCampaignRepository implements CampaignRepository {
  private readonly campaigns;
  private readonly contents;
  private readonly seriesSteps;
  private readonly counts;

  constructor(private readonly table: DynamoTable) {
    this.campaigns = entity(table, CampaignItem);
    this.contents = entity(table, ContentItem);
    this.seriesSteps = entity(table, SeriesStepItem);
    this.counts = entity(table, CountsItem);
  }

  async create(
    orgId: string,
    campaign: Campaign,
    content: CampaignContent,
  ): Promise<void> {
    const { origin } = campaign;
    await transactWrite(this.table, [
      this.campaigns.putTx(keys.campaign(orgId, campaign.id), campaign, {
        if: (w) => w.missing(),
      }),
      this.contents.putTx(keys.campaignContent(orgId, campaign.id), content),
      this.count(orgId, { [campaign.status]: 1 }),
      // A series step makes one campaign, however often it fires.
      ...(origin
        ? [
            this.seriesSteps.putTx(
              seriesStepKey(orgId, origin),
              { campaignId: campaign.id },
              {
                if: (w) => w.missing(),
                otherwise: (cause) =>
                  new ConflictError(
                    'campaign.changed',
                    `Step ${origin.step} of series ${origin.seriesId} (version ${origin.versionId}) already made its campaign`,
                    { cause },
                  ),
              },
            ),
          ]
        : []),
    ]);
  }

  async ofSeriesStep(
    orgId: string,
    origin: CampaignOrigin,
  ): Promise<string | undefined> {
    const found = await this.seriesSteps.get(seriesStepKey(orgId, origin), {
      consistent: true,
    });
    return found?.campaignId;
  }

  get(orgId: string, campaignId: string): Promise<Campaign | undefined> {
    return this.campaigns.get(keys.campaign(orgId, campaignId), {
      consistent: true,
    });
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
      campaign: this.campaigns.parse(campaign),
      content: this.contents.parse(content),
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
          const counts = this.countsOf(counters.get('counts'));
          return filter.status
            ? counts[filter.status]
            : Object.values(counts).reduce((sum, n) => sum + n, 0);
        },
      },
    );
    return {
      items: found.items.map((item) => this.campaigns.parse(item)),
      total: found.total,
    };
  }

  async update(
    orgId: string,
    before: Campaign,
    after: Campaign,
    content?: CampaignContent,
  ): Promise<void> {
    await transactWrite(this.table, [
      this.campaigns.putTx(
        keys.campaign(orgId, after.id),
        { ...after, version: before.version + 1 },
        {
          if: (w) => w.eq('version', before.version),
          otherwise: changed(after.id),
        },
      ),
      ...(content
        ? [this.contents.putTx(keys.campaignContent(orgId, after.id), content)]
        : []),
      ...(before.status === after.status
        ? []
        : [this.count(orgId, { [before.status]: -1, [after.status]: 1 })]),
    ]);
  }

  async delete(orgId: string, before: Campaign): Promise<void> {
    await transactWrite(this.table, [
      this.campaigns.deleteTx(keys.campaign(orgId, before.id), {
        if: (w) => w.eq('version', before.version),
        otherwise: changed(before.id),
      }),
      this.contents.deleteTx(keys.campaignContent(orgId, before.id)),
      this.count(orgId, { [before.status]: -1 }),
    ]);
  }

  /** The per-status counts of a counts item (all 0 before the first). */
  private countsOf(
    item: Record<string, unknown> | undefined,
  ): Record<CampaignStatus, number> {
    return this.counts.parse(item ?? {}) as Record<CampaignStatus, number>;
  }

  /** Moves the per-status counters by these amounts. */
  private count(
    orgId: string,
    by: Partial<Record<CampaignStatus, number>>,
  ): TransactItem {
    return this.counts.updateTx(keys.campaignCounts(orgId), { add: by });
  }
}
