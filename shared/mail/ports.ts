/**
 * Ports of mail, what every email that leaves goes through: the provider's
 * mailer (a core dependency), the application-wide pacer every sender
 * reserves its instants on, the organizations' 24-hour windows and the
 * provider's account and tenant status.
 */
import type { CoreDeps } from '../ports.ts';
import type { AccountReader, TenantStatusReader } from '../sending/provider.ts';

/**
 * The application-wide pacer of sends: every sender of every organization
 * reserves its instants here, so that together they stay under the SES
 * account's sending rate. The rate is cut into lanes (see
 * `mail/pacing.ts`), each a timeline of its own.
 */
export interface SendPacer {
  /**
   * Reserves `count` consecutive instants of a lane at `ratePerSecond`:
   * returns the first (epoch milliseconds; `now` when the lane is idle);
   * the others follow every `1000 / ratePerSecond` ms.
   */
  reserve(
    lane: number,
    count: number,
    ratePerSecond: number,
    now: Date,
  ): Promise<number>;
  /**
   * Gives back the end of a run nobody reserved after: the lane's next
   * free instant moves from `runEnd` back to `from`. False when another
   * run follows it (then nothing changes).
   */
  giveBack(lane: number, from: number, runEnd: number): Promise<boolean>;
  /**
   * The next block of lanes for a send that starts (0, 1, 2, …, shared by
   * every organization): sends started one after the other take blocks
   * side by side (see `firstLaneOf`).
   */
  nextBlock(): Promise<number>;
}

/** The recipients each organization's campaigns took on, per hour. */
export interface SendWindowRepository {
  /** Adds recipients to an hour (`YYYY-MM-DDTHH`, UTC). */
  add(orgId: string, hour: string, recipients: number): Promise<void>;
  /** The recipients of these hours, summed. */
  sum(orgId: string, hours: string[]): Promise<number>;
}

/** What sending mail needs. */
export interface MailDeps extends Pick<CoreDeps, 'mailer' | 'clock'> {
  pacer: SendPacer;
  sendWindows: SendWindowRepository;
  /** Tenant status (readiness) and the account's quota and rate. */
  provider: TenantStatusReader & AccountReader;
}
