/**
 * Driven adapter: the statistics of sequence steps and of organizations,
 * read. A sequence's steps: one Query of its `STEPSTATS#` shards and one of
 * its `STEPLINK#` links, grouped by step. An organization's: one Query of
 * its months' shards in the range (`ORG#o#STATS`, `MONTH#<yyyy-mm>#…`),
 * summed. The tally writes them (`dynamo-stats-tally.ts`).
 */
import { keys } from '../../db/keys.ts';
import type { MailCounters } from '../../statistics/counters.ts';
import type {
  LinkClicks,
  MailStatsReader,
  MonthRange,
  StepCounters,
} from '../../statistics/ports.ts';
import { entity } from './dynamo-entity.ts';
import {
  OrganizationStatsItem,
  StepLinkItem,
  StepStatsItem,
  sumCounters,
} from './dynamo-stats-items.ts';
import type { DynamoTable } from './dynamo-table.ts';

/** Statistics of sequence steps and organizations on DynamoDB. */
export class DynamoMailStats implements MailStatsReader {
  private readonly stepShards;
  private readonly stepLinks;
  private readonly months;

  constructor(table: DynamoTable) {
    this.stepShards = entity(table, StepStatsItem);
    this.stepLinks = entity(table, StepLinkItem);
    this.months = entity(table, OrganizationStatsItem);
  }

  async steps(orgId: string, sequenceId: string): Promise<StepCounters[]> {
    const [shards, links] = await Promise.all([
      this.stepShards.all(keys.stepStatsOfSequence(orgId, sequenceId)),
      this.stepLinks.all(keys.stepLinksOfSequence(orgId, sequenceId)),
    ]);
    const steps = [...new Set(shards.map((shard) => shard.step))].sort(
      (a, b) => a - b,
    );
    return steps.map((step) => ({
      step,
      counters: sumCounters(shards.filter((shard) => shard.step === step)),
      links: links
        .filter((link) => link.step === step)
        .map(
          ({ url, clicksTotal, clicksUnique }): LinkClicks => ({
            url,
            clicksTotal,
            clicksUnique,
          }),
        ),
    }));
  }

  async organization(orgId: string, months: MonthRange): Promise<MailCounters> {
    const shards = await this.months.all(
      keys.organizationStatsMonths(orgId, months.from, months.to),
    );
    return sumCounters(shards);
  }
}
