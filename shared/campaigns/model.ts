/**
 * Campaign model: one message (a subject and a copy of a template's HTML)
 * to one audience (a list, optionally narrowed to a segment and a tag),
 * signed by one address of the address book (or the default), sent now or
 * at a minute, with its progress and the state of its send. A series step
 * becomes a campaign when it fires (its origin says which).
 */

/** Where a campaign stands (the spec's states). */
export const CAMPAIGN_STATUSES = [
  'draft',
  'scheduled',
  'sending',
  'sent',
  'failed',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * Why a campaign failed mid-send: the provider paused the organization's or
 * the account's sending, sending was switched off application-wide, the
 * organization stopped being ready (another blocker), or its content no
 * longer renders.
 */
export const FAILURE_REASONS = [
  'sending_paused',
  'sending_disabled',
  'blocked',
  'content_invalid',
  // An extension: cancelled through the API (POST /campaigns/{id}/cancel).
  'cancelled',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * Why an accepted send did not start (the campaign stays or goes back to
 * draft): mass sending is off application-wide, the organization's 24-hour
 * quota (or what the SES account has left) is below the audience, or (when
 * a schedule fires) the organization is not ready to send.
 */
export const HOLD_REASONS = [
  'sending_disabled',
  'quota_exceeded',
  'blocked',
] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/**
 * Why a sending campaign is paused (an extension beside the spec's
 * statuses: a paused campaign is still `sending`): paused through the API.
 */
export const PAUSE_REASONS = ['requested'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

/** A pause of a sending campaign: since when, and why. */
export interface CampaignPause {
  at: string;
  reason: PauseReason;
}

/** How far a send went; all 0 while nothing has started. */
export interface Progress {
  /**
   * Recipients of the send: the audience counted when it started, then,
   * once every batch is done, exactly `sent + failed + skipped`.
   */
  total: number;
  /** Accepted by the provider. */
  sent: number;
  /** Refused by the provider for this recipient (the others go on). */
  failed: number;
  /**
   * Left out when their turn came: unsubscribed, suppressed, opted out of
   * the topic, out of the segment or removed from the list after the send
   * started.
   */
  skipped: number;
}

export const NO_PROGRESS: Progress = {
  total: 0,
  sent: 0,
  failed: 0,
  skipped: 0,
};

/** The series step a campaign was made for, when its schedule fired. */
export interface CampaignOrigin {
  seriesId: string;
  /** The published version whose step it is. */
  versionId: string;
  /** The step: 1 for the version's first send_email node, and so on. */
  step: number;
}

/** What a new campaign starts with: a draft, nothing sent, no history. */
export const NEW_DRAFT = {
  status: 'draft',
  scheduledAt: null,
  sendId: null,
  startedAt: null,
  completedAt: null,
  failure: null,
  lastHold: null,
  paused: null,
  progress: NO_PROGRESS,
  version: 1,
} as const satisfies Partial<Campaign>;

/** A campaign, without its HTML. */
export interface Campaign {
  id: string;
  name: string;
  /** Liquid, one line; rendered per recipient. */
  subject: string;
  /**
   * The template the content was copied from (it may be deleted since);
   * null for a series step whose node started from no template.
   */
  templateId: string | null;
  listId: string;
  /**
   * Narrows the audience to the list's contacts the segment matches,
   * evaluated when the send walks the list and again at each recipient's
   * turn; null: the whole list.
   */
  segmentId: string | null;
  /** Narrows the audience to the list's contacts carrying this tag. */
  tagId: string | null;
  /** The address that signs it; null: the default address. */
  sendingIdentityId: string | null;
  topicId: string | null;
  /** The series step that made it; null for a campaign made by the API. */
  origin: CampaignOrigin | null;
  status: CampaignStatus;
  /** The instant it is scheduled for, to the minute (ISO 8601, UTC). */
  scheduledAt: string | null;
  /**
   * The send of this campaign: set when a send is accepted, so that queue
   * messages and schedules of an older request do nothing.
   */
  sendId: string | null;
  startedAt: string | null;
  completedAt: string | null;
  failure: { reason: FailureReason; message: string; at: string } | null;
  /** The last accepted send that did not start, and why. */
  lastHold: { reason: HoldReason; at: string; blockers?: string[] } | null;
  /**
   * While a sending campaign is paused: since when and why (its senders
   * stop within seconds; resume goes on where it stopped); null otherwise.
   */
  paused: CampaignPause | null;
  progress: Progress;
  createdAt: string;
  updatedAt: string;
  /** Optimistic-lock version; every change checks and bumps it. */
  version: number;
}

/** A campaign's own copy of its content. */
export interface CampaignContent {
  html: string;
}

/** A batch of a send in flight: the range of the list it covers. */
export interface InFlightBatch {
  /** The list's sort key after which the batch starts (exclusive). */
  after: string | null;
  /** The last sort key of the batch (inclusive). */
  last: string;
  /** When it was handed to the senders. */
  at: string;
  /** Whether its message is known to be in the senders' queue. */
  queued: boolean;
  /**
   * When its message becomes visible (its delay over) and when it should
   * then be done at the rate; absent from sends started before batches
   * were delayed.
   */
  starts?: string;
  ends?: string;
}

/** The running send of a campaign: the dispatcher's and senders' state. */
export interface SendState {
  sendId: string;
  /** The list's sort key the walk reached (exclusive start of the next batch). */
  cursor: string | null;
  /** The walk reached the end of the list. */
  walked: boolean;
  /** The number the next batch takes. */
  nextBatch: number;
  /** Batches handed out and not done yet, by number. */
  inFlight: Record<string, InFlightBatch>;
  batchesDone: number;
  progress: Progress;
  version: number;
  /**
   * Recipients in the batches handed out so far (absent in sends started
   * before it was kept: then the last round is not evened out).
   */
  handedOut?: number;
  /**
   * The send's block of the pacer's lanes (`SendPacer.nextBlock`); absent
   * in sends started before blocks: their lanes come from the campaign id.
   */
  laneBlock?: number;
}

/** One recipient of a batch, as the dispatcher hands it to a sender. */
export interface BatchRecipient {
  contactId: string;
  email: string;
}
