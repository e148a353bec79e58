/**
 * Ports of the activity: where each contact's events are kept, and the
 * contacts they belong to (whether one exists).
 */
import type { AudienceDeps } from '../audience/ports.ts';
import type { CoreDeps } from '../ports.ts';
import type { ActivityEvent } from './model.ts';

/** Where a page of a contact's activity starts, and how long it is. */
export interface ActivityPageRequest {
  limit: number;
  /** Start after this event (an id, from a cursor); absent: the newest. */
  after?: string;
}

/** A page of events, newest first. */
export interface ActivityPage {
  items: ActivityEvent[];
  /**
   * The read stopped at the page's limit: more events may follow (or none:
   * a full last page is only known to be last when the next one is read).
   */
  more: boolean;
}

/** The events of each contact, by contact id. */
export interface ActivityRepository {
  /**
   * Stores events of one contact, each whole under its id, unconditionally:
   * storing the same events again changes nothing (a redelivered record or
   * SES event writes over itself). Each event is kept
   * `ACTIVITY_TTL_DAYS` from its instant.
   */
  record(
    orgId: string,
    contactId: string,
    events: readonly ActivityEvent[],
  ): Promise<void>;
  /**
   * One page of a contact's events, newest first: one Query reading the
   * page's events and nothing else.
   */
  page(
    orgId: string,
    contactId: string,
    request: ActivityPageRequest,
  ): Promise<ActivityPage>;
  /** Deletes every event of a contact (its erasure). Returns how many. */
  forget(orgId: string, contactId: string): Promise<number>;
}

/** What the activity needs. */
export interface ActivityDeps extends CoreDeps {
  activity: ActivityRepository;
  contacts: AudienceDeps['contacts'];
}
