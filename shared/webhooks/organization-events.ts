/**
 * Application logic: the webhook events of a campaign's, a journey's or an
 * erasure's committed change, as the `journeys` stream consumer reads it
 * (the item before and after). A campaign's event is its status entered
 * (its schedule moved counts as scheduled again); a journey's is its start
 * and its end; an erasure's is its record. Each is identified by the item's
 * change (version, status, instant), so a record read again is the same
 * event.
 */

import type { Campaign } from '../campaigns/model.ts';
import { progressView, summaryOf } from '../campaigns/views.ts';
import { erasureView } from '../privacy/erasure.schema.ts';
import type { Erasure } from '../privacy/erasure-ports.ts';
import type { Enrolment } from '../sequences/model.ts';
import {
  type WebhookEvent,
  type WebhookEventType,
  webhookEventId,
} from './events.ts';

/** A change of an item of an organization: before and after. */
export interface Change<T> {
  orgId: string;
  before?: T;
  after?: T;
}

const event = (
  orgId: string,
  type: WebhookEventType,
  from: string,
  at: string,
  data: Record<string, unknown>,
): WebhookEvent => ({
  id: webhookEventId(orgId, type, from),
  type,
  orgId,
  occurredAt: new Date(at).toISOString(),
  data,
});

/** A campaign as its events show it: its summary, progress, failure and pause. */
const campaignData = (campaign: Campaign) => ({
  campaign: {
    ...summaryOf(campaign),
    progress: progressView(campaign.progress),
    failure: campaign.failure,
    paused: campaign.paused ?? null,
  },
});

const CAMPAIGN_EVENT = {
  scheduled: 'campaign.scheduled',
  sending: 'campaign.sending',
  sent: 'campaign.sent',
  failed: 'campaign.failed',
} as const satisfies Partial<Record<Campaign['status'], WebhookEventType>>;

/** The event of a campaign's change: the status it entered, if one is told. */
export const campaignEventsOf = ({
  orgId,
  before,
  after,
}: Change<Campaign>): WebhookEvent[] => {
  if (!after || after.status === 'draft') return [];
  const entered = before?.status !== after.status;
  const moved =
    after.status === 'scheduled' && before?.scheduledAt !== after.scheduledAt;
  if (!entered && !moved) return [];
  const type = CAMPAIGN_EVENT[after.status];
  const at =
    after.status === 'sending'
      ? (after.startedAt ?? after.updatedAt)
      : after.status === 'sent'
        ? (after.completedAt ?? after.updatedAt)
        : after.status === 'failed'
          ? (after.failure?.at ?? after.updatedAt)
          : after.updatedAt;
  return [
    event(
      orgId,
      type,
      `campaign:${after.id}:${after.status}:${after.version}`,
      at,
      campaignData(after),
    ),
  ];
};

/** A journey as its events show it. */
const journeyData = (enrolment: Enrolment) => ({
  journey: {
    sequenceId: enrolment.sequenceId,
    versionId: enrolment.versionId,
    contactId: enrolment.contactId,
    listId: enrolment.listId,
    email: enrolment.email,
    status: enrolment.status,
    exitReason: enrolment.exitReason,
    enrolledAt: enrolment.enrolledAt,
    endedAt: enrolment.endedAt,
    sent: enrolment.sent,
    skipped: enrolment.skipped,
  },
});

/** The events of a journey's change: its start, its end. */
export const journeyEventsOf = ({
  orgId,
  before,
  after,
}: Change<Enrolment>): WebhookEvent[] => {
  if (!after) return [];
  const from = `journey:${after.sequenceId}:${after.contactId}:${after.enrolledAt}`;
  const events: WebhookEvent[] = [];
  if (!before) {
    events.push(
      event(
        orgId,
        'sequence.enrolled',
        `${from}:enrolled`,
        after.enrolledAt,
        journeyData(after),
      ),
    );
  }
  if (after.status !== 'active' && before?.status !== after.status) {
    const type =
      after.status === 'completed' ? 'sequence.completed' : 'sequence.exited';
    events.push(
      event(
        orgId,
        type,
        `${from}:${after.status}`,
        after.endedAt ?? after.updatedAt,
        journeyData(after),
      ),
    );
  }
  return events;
};

/** The event of an erasure: its record, once written. */
export const erasureEventsOf = ({
  orgId,
  before,
  after,
}: Change<Erasure>): WebhookEvent[] =>
  after && !before
    ? [
        event(orgId, 'contact.erased', `erasure:${after.id}`, after.erasedAt, {
          erasure: erasureView(after),
          contactIds: after.contactIds,
        }),
      ]
    : [];
