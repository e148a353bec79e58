/**
 * Ports of campaigns: their store, the state of a running send (the
 * dispatcher's cursor, batches, recipients' claims), the audience as a
 * send walks it and the delivery counters SES's events feed. The pacer and
 * the 24-hour windows every send shares are mail's (`mail/ports.ts`).
 */

import type { Contact } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import type { MailDeps } from '../mail/ports.ts';
import type { Page, PageRequest, QueueSender } from '../ports.ts';
import type { SchedulingDeps } from '../scheduling/ports.ts';
import type { SegmentsDeps } from '../segments/ports.ts';
import type { SendingDeps } from '../sending/ports.ts';
import type { TemplatesDeps } from '../templates/ports.ts';
import type {
  Campaign,
  CampaignContent,
  CampaignOrigin,
  CampaignStatus,
  Progress,
  SendState,
} from './model.ts';

/** Campaigns of the organizations, with a counter per status. */
export interface CampaignRepository {
  /**
   * Stores a new draft with its content. A campaign with an `origin` is the
   * one campaign of its series step: the step is recorded in the same
   * transaction, on the condition that no campaign was recorded for it
   * (`ConflictError` `campaign.changed` otherwise, and nothing is written).
   */
  create(
    orgId: string,
    campaign: Campaign,
    content: CampaignContent,
  ): Promise<void>;
  get(orgId: string, campaignId: string): Promise<Campaign | undefined>;
  /** The id of the campaign a series step made, if it made one. */
  ofSeriesStep(
    orgId: string,
    origin: CampaignOrigin,
  ): Promise<string | undefined>;
  /** The campaign and its content, in one read. */
  getWithContent(
    orgId: string,
    campaignId: string,
  ): Promise<{ campaign: Campaign; content: CampaignContent } | undefined>;
  /** Newest first; `status` narrows, with the exact total of that status. */
  page(
    orgId: string,
    filter: { status?: CampaignStatus },
    request: PageRequest,
  ): Promise<Page<Campaign>>;
  /**
   * Replaces the campaign (and its content, when given), conditional on the
   * version read: `ConflictError` (`campaign.changed`) when it changed
   * meanwhile. A change of status moves the counters in the same
   * transaction.
   */
  update(
    orgId: string,
    before: Campaign,
    after: Campaign,
    content?: CampaignContent,
  ): Promise<void>;
  /** Deletes a campaign read at `before`'s version, with its content. */
  delete(orgId: string, before: Campaign): Promise<void>;
}

/** What a recipient's claim found. */
export type ClaimResult =
  /** Ours now: call the provider. */
  | { kind: 'claimed' }
  /** Another attempt holds it and its lease runs. */
  | { kind: 'held' }
  /** An earlier attempt reached the provider: this message id shows it. */
  | { kind: 'sent'; messageId: string }
  /** An earlier attempt was refused for this recipient for good. */
  | { kind: 'failed' };

/** What became of one claimed recipient, recorded when a batch stops early. */
export interface RecipientOutcome {
  contactId: string;
  messageId?: string;
  /** The provider refused this recipient for good. */
  refused?: boolean;
}

/** The state of running sends: their cursor, batches and recipients. */
export interface SendRepository {
  /**
   * Forgets an erased address in these campaigns' sends: each recipient
   * item of `contactIds` keeps its outcome without the address, and a
   * finished send's cursor stops naming it. Throws `ConflictError`
   * (`erasure.sendRunning`) before changing anything when a running
   * send's cursor or a batch in flight names it. Returns how many items
   * changed. Idempotent.
   */
  forgetAddress(
    orgId: string,
    campaignIds: readonly string[],
    contactIds: readonly string[],
    email: string,
  ): Promise<number>;
  /** Stores the state of a new send (a later send of the same campaign replaces it). */
  start(orgId: string, campaignId: string, state: SendState): Promise<void>;
  /** The state, strongly consistent. */
  get(orgId: string, campaignId: string): Promise<SendState | undefined>;
  /**
   * Replaces the dispatcher's part of the state (cursor, walk, batches in
   * flight), conditional on the version read: `ConflictError` when a
   * sender or another dispatcher changed it meanwhile.
   */
  save(orgId: string, campaignId: string, after: SendState): Promise<void>;
  /**
   * Takes a batch for `owner` until `until`: `done` when the batch's
   * outcome is already counted, `held` while another owner's lease runs.
   */
  leaseBatch(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    until: Date,
    now: Date,
  ): Promise<'leased' | 'held' | 'done'>;
  /**
   * Counts a batch's outcome once: marks the batch done (if `owner` still
   * holds it) and, in the same transaction, adds its counts to the
   * progress and drops it from the batches in flight. False when the batch
   * was already counted or another owner took it.
   */
  completeBatch(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    outcome: Omit<Progress, 'total'>,
  ): Promise<boolean>;
  /**
   * Claims one recipient before its message goes to the provider: a
   * conditional write that succeeds for a new recipient, or for one whose
   * earlier claim expired with nothing showing it reached the provider.
   */
  claim(
    orgId: string,
    campaignId: string,
    recipient: { contactId: string; email: string; batch: number },
    owner: string,
    until: Date,
    now: Date,
  ): Promise<ClaimResult>;
  /**
   * Records what became of claimed recipients (their message id, or a
   * refusal), so that the batch's next attempt counts them without
   * sending again: written when a batch stops before its end.
   */
  recordOutcomes(
    orgId: string,
    campaignId: string,
    outcomes: RecipientOutcome[],
  ): Promise<void>;
  /**
   * Gives back what `owner` holds of a batch it stops (a pause): the
   * claims of `contactIds`, which it made and never sent (nothing shows
   * the provider took them), and the batch's lease, so that the batch's
   * next attempt takes them at once instead of after their leases.
   * Whatever another owner took meanwhile is left alone.
   */
  release(
    orgId: string,
    campaignId: string,
    batch: number,
    owner: string,
    contactIds: readonly string[],
  ): Promise<void>;
}

/** The audience of a send, walked in the list's order. */
export interface AudienceReader {
  /**
   * Subscribed contacts of a list (carrying `tagId`, if given) whose email
   * sorts after `after`, reading at most `limit` items of the list (with a
   * tag: `limit` entries of the tag index, then their contacts); `last` is
   * the last email read (the next cursor), `done` when the list (the tag's
   * entries) ended.
   */
  walk(
    orgId: string,
    listId: string,
    options: { after: string | null; limit: number; tagId: string | null },
  ): Promise<{ contacts: Contact[]; last: string | null; done: boolean }>;
  /**
   * Subscribed contacts of a list whose email sorts in `(after, last]`
   * (carrying `tagId`, if given): one batch's range, read again —
   * eventually consistent unless `consistent` (twice the read units).
   */
  range(
    orgId: string,
    listId: string,
    range: {
      after: string | null;
      last: string;
      tagId: string | null;
      consistent?: boolean;
    },
  ): Promise<Contact[]>;
  /** Every address that declined a topic (one query per 1 MB of them). */
  topicOptOuts(orgId: string, topicId: string): Promise<string[]>;
  /**
   * A list's kept counters a send's audience needs, in one read: its
   * subscribed contacts, those carrying `tagId` and those whose address
   * declined `topicId` (each 0 when not asked); undefined without the list.
   */
  audienceCounters(
    orgId: string,
    listId: string,
    target: { tagId: string | null; topicId: string | null },
  ): Promise<
    { subscribed: number; withTag: number; declined: number } | undefined
  >;
  /**
   * How many subscribed contacts of a list declined a topic (by address):
   * a kept counter.
   */
  countDeclinedInList(
    orgId: string,
    topicId: string,
    listId: string,
  ): Promise<number>;
  /** How many subscribed contacts of a list carry a tag (a kept counter). */
  countSubscribedWithTag(
    orgId: string,
    listId: string,
    tagId: string,
  ): Promise<number>;
}

/** What campaigns need. */
export interface CampaignsDeps
  extends Omit<AudienceDeps & TemplatesDeps, 'provider'>,
    Pick<SendingDeps, 'identities' | 'domains' | 'providerStatusTtlSeconds'>,
    Pick<SegmentsDeps, 'segments'>,
    SchedulingDeps,
    Pick<MailDeps, 'pacer' | 'sendWindows' | 'provider'> {
  campaigns: CampaignRepository;
  sends: SendRepository;
  audience: AudienceReader;
  scheduleMinLeadSeconds: number;
  queues: {
    dispatch: QueueSender;
    send: QueueSender;
  };
}
