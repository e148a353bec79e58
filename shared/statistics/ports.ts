/**
 * Ports of mail statistics: the MX lookups that name a domain's mailbox
 * provider, and the reader of the counters kept per sequence step and per
 * organization month (a campaign's are read by campaigns). The events
 * consumer's tally writes them all (`delivery/ports.ts`).
 */
import type { MailCounters } from './counters.ts';

/** Who receives a domain's mail (its MX records). */
export interface MxResolver {
  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]>;
}

/** The clicks of one link. */
export interface LinkClicks {
  url: string;
  clicksTotal: number;
  clicksUnique: number;
}

/** The counters of one step of a sequence and the clicks of its links. */
export interface StepCounters {
  /** The step: 1 for its version's first email, and so on. */
  step: number;
  counters: MailCounters;
  links: LinkClicks[];
}

/** A range of months, `YYYY-MM`, both ends included; open ends: all. */
export interface MonthRange {
  from?: string;
  to?: string;
}

/** The counters of sequence steps and of organizations. */
export interface MailStatsReader {
  /** Each step of a sequence that sent mail, by step number. */
  steps(orgId: string, sequenceId: string): Promise<StepCounters[]>;
  /** An organization's counters, summed over the months of the range. */
  organization(orgId: string, months: MonthRange): Promise<MailCounters>;
}

/** What reading the statistics needs: their reader. */
export interface StatisticsDeps {
  mailStats: MailStatsReader;
}
