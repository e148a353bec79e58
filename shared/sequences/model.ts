/**
 * Sequence model: automated journeys. A sequence sends its steps to each
 * contact it enrols (on joining a list, on receiving a tag), spaced by the
 * waits between them; a series sends its steps to a whole audience on a
 * calendar that starts on a given day. Both are stored alike: a head (name,
 * status, topic) and numbered versions, each holding its own nodes. A
 * contact's journey stays on the version it entered.
 */

/** Whether the journey is per contact (sequence) or a calendar (series). */
export type SequenceKind = 'sequence' | 'series';

/** Active sequences enrol and send; paused ones do neither. */
export const SEQUENCE_STATUSES = ['active', 'paused'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];

/** What enrols a contact in a sequence. */
export const TRIGGER_TYPES = ['list_joined', 'tag_added'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** A sequence's trigger: the list joined or the tag received. */
export interface Trigger {
  type: TriggerType;
  /** The list id (list_joined) or the tag id (tag_added). */
  targetId: string;
}

/** The head of a sequence or series. */
export interface Sequence {
  id: string;
  kind: SequenceKind;
  name: string;
  status: SequenceStatus;
  topicId: string | null;
  /** A sequence's trigger; null for a series (its calendar is on versions). */
  trigger: Trigger | null;
  /** The version new journeys take; null until one is published. */
  publishedVersionId: string | null;
  /** The open draft, if any: at most one at a time. */
  draftVersionId: string | null;
  /** Versions ever opened: the next one is numbered versionCount + 1. */
  versionCount: number;
  createdAt: string;
  updatedAt: string;
  /** Optimistic lock: every change is conditional on the version read. */
  version: number;
}

/**
 * Versions: a draft is edited, then published; publishing another version
 * supersedes the published one (its journeys in flight go on with it).
 */
export const VERSION_STATUSES = ['draft', 'published', 'superseded'] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];

/** Who a series sends to and from when; unused (nulls) on a sequence. */
export interface SeriesCalendar {
  /** Day 1 of the series (its first instant); required to publish. */
  startsAt: string | null;
  listId: string | null;
  audienceSegmentId: string | null;
  audienceTagId: string | null;
}

/** One version of a sequence or series. */
export interface SequenceVersion extends SeriesCalendar {
  id: string;
  sequenceId: string;
  /** 1, 2, 3… in the order versions were opened. */
  number: number;
  status: VersionStatus;
  /** Order keys handed out so far: a new node is placed after them all. */
  nodeSeq: number;
  nodeCount: number;
  /** UTF-8 bytes of its nodes' content, kept under MAX_VERSION_CONTENT_BYTES. */
  contentBytes: number;
  createdAt: string;
  updatedAt: string;
  publishedAt: string | null;
  supersededAt: string | null;
  /** Optimistic lock of the version's own item. */
  revision: number;
}

/** The kinds of nodes. */
export const NODE_TYPES = ['send_email', 'wait'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Fields every node has. */
interface NodeBase {
  id: string;
  versionId: string;
  /** Where the node stands in its version (ascending). */
  order: number;
  createdAt: string;
  updatedAt: string;
}

/** Sends one email. */
export interface SendEmailNode extends NodeBase {
  type: 'send_email';
  /** Liquid, one line; null until set (required to publish). */
  subject: string | null;
  /** The HTML, Liquid; must carry {{unsubscribeUrl}} to publish. */
  content: string;
  /**
   * Minutes from midnight in the organization's time zone: the step waits
   * for the next such minute; null sends as soon as the wait before ends.
   */
  sendTimeMinutes: number | null;
  /** The template the content started from, if any. */
  templateId: string | null;
}

/** Waits before the next step. */
export interface WaitNode extends NodeBase {
  type: 'wait';
  waitHours: number;
}

/** One step of a version. */
export type SequenceNode = SendEmailNode | WaitNode;

/** Most nodes in one version. */
export const MAX_NODES_PER_VERSION = 50;

/**
 * Most content (UTF-8 bytes of the HTML) all the nodes of one version may
 * hold together: a version with its nodes must fit an answer.
 */
export const MAX_VERSION_CONTENT_BYTES = 2_000_000;

/** Longest wait of one node: a year. */
export const MAX_WAIT_HOURS = 24 * 366;

/** Minutes in a day: sendTimeMinutes is below it. */
export const MINUTES_PER_DAY = 24 * 60;

/** The content of a new send_email node that names no template. */
export const DEFAULT_NODE_CONTENT = `<!doctype html>
<html>
  <body style="font-family: sans-serif; line-height: 1.5">
    <p>Hello {{firstName}},</p>
    <p>Write this step's message here.</p>
    <p style="font-size: 12px; color: #666">
      {{postalAddress}}<br>
      <a href="{{unsubscribeUrl}}">Unsubscribe</a>
    </p>
  </body>
</html>
`;

/**
 * Where a contact's journey through a sequence stands: running, through
 * its last step, or ended early (see {@link EXIT_REASONS}). A journey that
 * completed or exited never starts again for that contact.
 */
export const ENROLMENT_STATUSES = ['active', 'completed', 'exited'] as const;
export type EnrolmentStatus = (typeof ENROLMENT_STATUSES)[number];

/**
 * Why a journey ended before its last step, found when a step fell due:
 * the contact unsubscribed, bounced or complained, its address is
 * suppressed, it left the list, or the version it runs on is gone.
 */
export const EXIT_REASONS = [
  'unsubscribed',
  'bounced',
  'complained',
  'suppressed',
  'removed',
  'version_gone',
] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

/**
 * What became of one step: sent (the provider accepted it), skipped (the
 * contact opted out of the sequence's topic), failed (the provider refused
 * the address, or the content no longer renders), or uncertain (a consumer
 * died while the provider was being called: never sent again).
 */
export const STEP_OUTCOMES = [
  'sent',
  'skipped',
  'failed',
  'uncertain',
] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

/**
 * Why a step that fell due waits (an hour, then it is tried again): mass
 * sending is off, the organization cannot send (a readiness blocker, the
 * provider paused it), or its 24-hour quota is spent.
 */
export const STEP_HOLD_REASONS = [
  'sending_disabled',
  'blocked',
  'quota_exceeded',
] as const;
export type StepHoldReason = (typeof STEP_HOLD_REASONS)[number];

/** One contact's journey through one sequence. */
export interface Enrolment {
  sequenceId: string;
  contactId: string;
  /** The contact's list and address, read again at each step. */
  listId: string;
  email: string;
  /** The version entered: the journey stays on it to the end. */
  versionId: string;
  /** Index (in the version's nodes) of the send_email step due next. */
  position: number;
  status: EnrolmentStatus;
  exitReason: ExitReason | null;
  enrolledAt: string;
  /** When the step at `position` falls due (null once ended). */
  dueAt: string | null;
  /** The step fell due while the sequence was paused: sent on resume. */
  waiting: boolean;
  /**
   * The step being sent: taken just before the provider is called, so a
   * second consumer (a duplicate fire, a redelivery) cannot send it too.
   */
  claim: { position: number; owner: string; until: string } | null;
  /** The last step done, and how. */
  lastStep: {
    position: number;
    outcome: StepOutcome;
    at: string;
    messageId?: string;
  } | null;
  /** The last time a due step had to wait, and why. */
  lastHold: { reason: StepHoldReason; at: string } | null;
  /** Steps sent and skipped so far. */
  sent: number;
  skipped: number;
  endedAt: string | null;
  updatedAt: string;
  /** Optimistic lock: every change is conditional on the revision read. */
  revision: number;
}
