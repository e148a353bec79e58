/**
 * Ports of reputation: the hourly counters of each organization's sends,
 * hard bounces and complaints, and the thresholds the operator set.
 */
import type {
  HourCounts,
  ReputationCounts,
  ReputationThresholds,
} from './model.ts';

/** An organization's hourly reputation counters. */
export interface ReputationRepository {
  /** Adds a batch's counts to an hour's counters (created at 0). */
  add(orgId: string, hour: string, counts: ReputationCounts): Promise<void>;
  /**
   * The counters of the hours from `fromHour` to `toHour` (both included,
   * keys as `hourOf` writes them), strongly consistent: one Query.
   */
  hours(orgId: string, fromHour: string, toHour: string): Promise<HourCounts[]>;
}

/** The counters and the thresholds they are judged by. */
export interface ReputationSettings {
  reputation: ReputationRepository;
  /** Our thresholds (`REPUTATION_GUARDRAIL` overrides the defaults). */
  reputationThresholds: ReputationThresholds;
  clock: { now(): Date };
}
