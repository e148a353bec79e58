/**
 * The activity of a contact: one event per thing that happened to it, as
 * the contact's own writes (read from the table's change stream) and SES's
 * events about the mail sent to it say. An event holds ids and what
 * happened, never the contact's email address: the contact's erasure
 * deletes its activity with it, by contact id.
 */
import type { ConsentRecord, ContactWritePath } from '../audience/model.ts';
import type { FieldValue } from '../fields/model.ts';

/** What a contact's write says happened. */
export const CONTACT_ACTIVITY_TYPES = [
  /** It entered `subscribed`, other than by its confirmation link. */
  'subscribed',
  /**
   * It asked to subscribe and awaits its confirmation: it became `pending`,
   * or a hosted sign-up page recorded a new consent for it.
   */
  'signed_up',
  /** Its confirmation link subscribed it. */
  'confirmed',
  /** It entered `unsubscribed`. */
  'unsubscribed',
  /** It entered `bounced` or `complained`: its address is suppressed. */
  'suppressed',
  /** It gained a tag. */
  'tagged',
  /** It lost a tag. */
  'untagged',
  /** Some of its custom field values changed. */
  'fields_changed',
] as const;

/** What SES says happened to a message sent to the contact. */
export const MAIL_ACTIVITY_TYPES = [
  /** SES took the message. */
  'sent',
  /** The receiving server accepted it. */
  'delivered',
  /** The receiving server put it off for now; SES tries again. */
  'delayed',
  /** SES refused it after taking it (a virus, say): never sent. */
  'rejected',
  /** The recipient opened it (its images loaded). */
  'opened',
  /** The recipient followed one of its links. */
  'clicked',
  /** The receiving server refused it, for good or for now. */
  'bounced',
  /** The recipient marked it as spam. */
  'complained',
] as const;

export type ContactActivityType = (typeof CONTACT_ACTIVITY_TYPES)[number];
export type MailActivityType = (typeof MAIL_ACTIVITY_TYPES)[number];
export type ActivityType = ContactActivityType | MailActivityType;

/** The kinds of message an activity names (those sent to a contact). */
export const ACTIVITY_MESSAGE_KINDS = [
  'campaign',
  'sequence',
  'confirmation',
] as const;
export type ActivityMessageKind = (typeof ACTIVITY_MESSAGE_KINDS)[number];

/** SES's kinds of bounce: `Permanent` ones suppress the address. */
export const BOUNCE_TYPES = ['Permanent', 'Transient', 'Undetermined'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

/** The message a mail event is about, named by ids. */
export interface ActivityMessage {
  /** SES's message id. */
  id: string;
  kind: ActivityMessageKind;
  /** The campaign (a campaign's message, a series step's too). */
  campaignId?: string;
  /** The sequence of a step, or the series whose step made the campaign. */
  sequenceId?: string;
  /** Its step: 1 for the version's first email, and so on. */
  step?: number;
}

/** One custom field value that changed: null where there was or is none. */
export interface FieldChange {
  key: string;
  from: FieldValue | null;
  to: FieldValue | null;
}

/** One event of a contact's activity. */
export interface ActivityEvent {
  /**
   * Unique in the contact's activity, and sorted as time goes: its instant
   * (ISO 8601, UTC, milliseconds), `#`, and what it comes from (the
   * contact's write by its version, or SES's event by a hash), so that the
   * same fact delivered again is the same event.
   */
  id: string;
  type: ActivityType;
  /** When it happened: the write's instant, or SES's. */
  at: string;
  /** How a contact event came (absent when the write did not say). */
  via?: ContactWritePath;
  /** The status a `suppressed` event entered. */
  status?: 'bounced' | 'complained';
  /** The tag of a `tagged` or `untagged` event. */
  tagId?: string;
  /** The values a `fields_changed` event changed, by key. */
  changes?: FieldChange[];
  /** The hosted page's consent of a `signed_up` or `confirmed` event. */
  consent?: ConsentRecord;
  /** The address a confirmation link was opened from. */
  ip?: string;
  /** The message of a mail event. */
  message?: ActivityMessage;
  /** The link of a `clicked` event. */
  link?: string;
  /** Of a `bounced` event: whether SES deems it for good. */
  bounceType?: BounceType;
}

/**
 * How long an event is kept: as SES's events are (a year and a month, for
 * yearly reports). The contact keeps its own consent records and dates
 * for as long as it lives.
 */
export const ACTIVITY_TTL_DAYS = 400;

/** The id of an event: its instant, normalized, then what it comes from. */
export const activityId = (at: string, from: string): string =>
  `${new Date(at).toISOString()}#${from}`;
