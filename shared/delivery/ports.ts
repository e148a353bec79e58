/**
 * Ports of delivery: what SES tells us about the mail we sent. Events are
 * recorded once each, and an address that bounced for good or complained
 * is suppressed for its organization.
 */
import type {
  AudienceDeps,
  Suppression,
  SuppressionReason,
  SuppressionSource,
  SuppressionStore,
} from '../audience/ports.ts';
import type { OrganizationsDeps } from '../organizations/ports.ts';
import type { ReadOptions } from '../ports.ts';
import type { MailboxProvider } from '../statistics/counters.ts';
import type { SesEventType } from './ses-event.ts';

export type {
  Suppression,
  SuppressionReason,
  SuppressionSource,
} from '../audience/ports.ts';

/** One event about one recipient of one message. */
export interface DeliveryEventRecord {
  messageId: string;
  type: SesEventType;
  /** Normalized; the message's first destination when SES names none. */
  recipient: string;
  /** When it happened, as SES says. */
  at: string;
  /** Our tags on the message, where present. */
  kind?: string;
  contactId?: string;
  campaignId?: string;
  /** Transient, Permanent or Undetermined, for a bounce. */
  bounceType?: string;
}

/**
 * What counts an event of a message to a contact: the campaign it is of,
 * or the step of the sequence it is.
 */
export type MailSubject =
  | { kind: 'campaign'; campaignId: string }
  | { kind: 'step'; sequenceId: string; step: number };

/**
 * One event of a campaign's or a sequence step's message to one of its
 * contacts, with what its statistics need: the recipient's mailbox
 * provider, when the message left, and who made an open or a click.
 */
export type MailEventRecord = DeliveryEventRecord & {
  subject: MailSubject;
  contactId: string;
  /** The recipient's mailbox provider, from its address. */
  provider: MailboxProvider;
  /** When SES took the message (`mail.timestamp`). */
  sentAt?: string;
  /** Of the request that made an open or a click, as SES says. */
  userAgent?: string;
  ipAddress?: string;
};

/**
 * The events of one campaign or sequence counted together (a batch of the
 * events queue): each is recorded on its recipient at once, and the counts
 * of those newly recorded are added to the counters (the subject's and its
 * organization's month) by `commit`, in one write, exactly once even if
 * the process dies between the two or the events come again in another
 * batch.
 */
export interface MailEventTally {
  /**
   * Records one event on its recipient, its counts kept for `commit`:
   * false (and no change) when it was recorded and counted before, or is
   * already in this tally. `link` is the clicked URL of a click.
   */
  record(event: MailEventRecord, link?: string): Promise<boolean>;
  /**
   * Adds the counts of the events recorded to the counters, once. If it
   * fails, the events' messages must come again: their redelivery counts
   * them.
   */
  commit(): Promise<void>;
}

/**
 * Where the events of campaign and sequence step mail are counted (the
 * statistics, kept by campaigns). It records such an event for the
 * organization as well, so that mail is recorded there only.
 */
export interface MailEventCounter {
  /**
   * A new tally of the events of one campaign (or of one sequence's
   * steps); `now` dates what it leaves behind (a record of its commit,
   * kept 30 days) and the month of the organization's counters it adds to.
   */
  tally(orgId: string, subject: MailSubject, now: Date): MailEventTally;
  /**
   * Counts one event, at most once (a tally of one event, committed at
   * once): false (and no change) for a duplicate. `link` is the clicked
   * URL of a click.
   */
  recordEvent(
    orgId: string,
    event: MailEventRecord,
    link?: string,
  ): Promise<boolean>;
}

/** One entry of the suppression list, as its log keeps it. */
export interface LoggedSuppression {
  /** Absent once the person was erased: the address key stands for it. */
  email?: string;
  reason: SuppressionReason;
  /** When it was suppressed. */
  at: string;
  source?: SuppressionSource;
  messageId?: string;
}

/** The record of a lifted suppression: who lifted what, and when. */
export interface SuppressionLift {
  /** Absent once the person was erased. */
  email?: string;
  reason: SuppressionReason;
  source?: SuppressionSource;
  suppressedAt: string;
  liftedAt: string;
  /** The id of the API key that lifted it. */
  liftedBy: string;
  /** Lifted with `force` (a complaint, an erasure). */
  forced: boolean;
}

/**
 * A page of a time-ordered log, newest first: by number (the entries
 * before it are read), or after `after`, the position a previous page
 * ended at (its `last`).
 */
export interface LogPageRequest {
  page: number;
  limit: number;
  after?: string;
}

/** A page of a log, its total, and where it ended (for a cursor). */
export interface LogPage<T> {
  items: T[];
  total: number;
  /** The position of its last entry; absent on an empty page. */
  last?: string;
}

/** The suppression list as an organization manages it. */
export interface SuppressionRegistry {
  /** The suppressions, newest first, and how many there are. */
  suppressionLog(
    orgId: string,
    request: LogPageRequest,
  ): Promise<LogPage<LoggedSuppression>>;
  /** The lifts, newest first, and how many there are. */
  liftLog(
    orgId: string,
    request: LogPageRequest,
  ): Promise<LogPage<SuppressionLift>>;
  /**
   * Lifts this suppression, as read: removes it and its log entry and
   * records the lift, in one transaction. A `ConflictError` when it is no
   * longer as read (lifted, changed or suppressed again meanwhile): read
   * again.
   */
  lift(
    orgId: string,
    suppression: Suppression,
    lift: { at: string; by: string; forced: boolean },
  ): Promise<SuppressionLift>;
}

/** Delivery events and suppressions of the organizations. */
export interface DeliveryRepository
  extends SuppressionStore,
    SuppressionRegistry {
  /**
   * Records an event and counts it, both at most once: `false` (and no
   * change) when this very event was recorded before.
   */
  recordEvent(orgId: string, event: DeliveryEventRecord): Promise<boolean>;
  /**
   * Deletes the recorded events of these messages (an erased person's:
   * they name the recipient), and a sequence step message's recipient
   * item (its statistics' record). The counters keep them. Answers how
   * many items it deleted.
   */
  forgetMessages(orgId: string, messageIds: readonly string[]): Promise<number>;
  /**
   * The suppressions among these addresses, by email; strongly consistent
   * unless `consistent` is false (half the read units).
   */
  suppressions(
    orgId: string,
    emails: readonly string[],
    options?: ReadOptions,
  ): Promise<Map<string, Suppression>>;
}

/** What delivery needs: its store, the organizations, the audience. */
export interface DeliveryDeps extends OrganizationsDeps {
  delivery: DeliveryRepository;
  lists: AudienceDeps['lists'];
  contacts: AudienceDeps['contacts'];
}
