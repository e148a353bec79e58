/**
 * Placeholder of the scheduler port (replaced by the scheduling work).
 */
export interface ScheduledMessage {
  name: string;
  at: Date;
  queue: string;
  message: unknown;
}
export interface Scheduler {
  schedule(s: ScheduledMessage): Promise<void>;
  cancel(name: string): Promise<void>;
}
export interface SchedulingDeps {
  scheduler: Scheduler;
}
export const DEFAULT_SCHEDULE_MIN_LEAD_SECONDS = 120;
