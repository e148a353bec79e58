/**
 * How the API shows a campaign: its summary (the list's items), its whole
 * view, its progress. Plain schemas and mappings, apart from the
 * campaigns' logic, so that a reader of the views (the webhook events of
 * the `journeys` stream consumer) loads no rendering engine.
 */
import * as v from 'valibot';
import { Count, Timestamp, ViewId } from '../validation.ts';
import {
  CAMPAIGN_STATUSES,
  type Campaign,
  FAILURE_REASONS,
  HOLD_REASONS,
  PAUSE_REASONS,
  type Progress,
} from './model.ts';

const nullableId = (what: string) =>
  v.pipe(v.nullable(ViewId), v.description(what));

/** The progress of a send, as the API shows it. */
export const ProgressView = v.pipe(
  v.object({
    total: v.pipe(
      Count,
      v.description(
        'Recipients of the send: 0 while nothing has started; the audience counted when it started, then, once it is done, exactly sent + failed + skipped',
      ),
    ),
    sent: v.pipe(Count, v.description('Accepted by the email provider')),
    failed: v.pipe(
      Count,
      v.description(
        'Refused by the provider for that recipient only (the others go on)',
      ),
    ),
    skipped: v.pipe(
      Count,
      v.description(
        'Left out when their turn came: unsubscribed, suppressed, opted out of the topic, untagged, out of the segment or removed after the send started',
      ),
    ),
    percent: v.pipe(
      v.number(),
      v.description(
        'Share of the recipients handled (sent, failed or skipped), 0 to 100, one decimal',
      ),
    ),
  }),
  v.title('CampaignProgress'),
);

/** The fields of every campaign answer. */
const summaryEntries = {
  id: ViewId,
  name: v.string(),
  subject: v.pipe(v.string(), v.description('Liquid, one line')),
  templateId: nullableId(
    "The template the content was copied from; null for a series step's campaign whose step started from no template",
  ),
  listId: ViewId,
  segmentId: nullableId(
    "A segment of the list narrowing the audience to the contacts it matches (evaluated when the send starts and again at each recipient's turn); null: the whole list",
  ),
  tagId: nullableId("A tag narrowing the audience to the list's carriers"),
  sendingIdentityId: nullableId(
    'The address that signs it; null: the default address',
  ),
  topicId: nullableId('The topic, if any'),
  origin: v.pipe(
    v.nullable(
      v.pipe(
        v.object({
          seriesId: v.pipe(ViewId, v.description('The series')),
          versionId: v.pipe(
            ViewId,
            v.description('The published version whose step it is'),
          ),
          step: v.pipe(
            v.number(),
            v.description(
              "The step: 1 for the version's first send_email node, and so on",
            ),
          ),
        }),
        v.title('CampaignOrigin'),
      ),
    ),
    v.description(
      "The series step that made it when the step's instant came; null for a campaign made through the API",
    ),
  ),
  status: v.pipe(
    v.picklist(CAMPAIGN_STATUSES),
    v.description('draft, scheduled, sending, sent or failed'),
  ),
  scheduledAt: v.pipe(
    v.nullable(Timestamp),
    v.description(
      'The instant it is scheduled for, to the minute (UTC); null unless scheduled',
    ),
  ),
  startedAt: v.pipe(
    v.nullable(Timestamp),
    v.description('When its send started'),
  ),
  completedAt: v.pipe(
    v.nullable(Timestamp),
    v.description('When its last batch went out (sent) or it failed'),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

/** A campaign row of GET /campaigns (no content, no counts). */
export const CampaignSummary = v.pipe(
  v.object(summaryEntries),
  v.title('CampaignSummary'),
);
export type CampaignSummary = v.InferOutput<typeof CampaignSummary>;

/** A campaign as GET /campaigns/{campaignId} shows it. */
export const CampaignView = v.pipe(
  v.object({
    ...summaryEntries,
    content: v.pipe(
      v.string(),
      v.description("The campaign's own copy of its HTML"),
    ),
    recipientCount: v.pipe(
      Count,
      v.description(
        'Who it goes to: before the send, the subscribed contacts of the list (matching the segment and carrying the tag, if any) minus those who declined the topic (suppressed addresses are never subscribed); once started, the recipients of the send',
      ),
    ),
    recipientCountExact: v.pipe(
      v.boolean(),
      v.description(
        "false when recipientCount is an estimate: a segment's count on a list too large to read in the call (the share of the first 2,000 contacts walked, scaled to the list's or tag's subscribed), or a tag with a topic some of the list declined (the tag's share of the decliners); true otherwise. Once the send starts it is the send's exact total",
      ),
    ),
    progress: ProgressView,
    sendingEnabled: v.pipe(
      v.boolean(),
      v.description(
        'false while mass sending is switched off application-wide',
      ),
    ),
    failure: v.pipe(
      v.nullable(
        v.object({
          reason: v.picklist(FAILURE_REASONS),
          message: v.string(),
          at: Timestamp,
        }),
      ),
      v.description('Why it failed; null unless failed'),
    ),
    paused: v.pipe(
      v.nullable(
        v.object({
          at: Timestamp,
          reason: v.pipe(
            v.picklist(PAUSE_REASONS),
            v.description('`requested`: paused through the API'),
          ),
        }),
      ),
      v.description(
        'An extension: while a sending campaign is paused (POST /campaigns/{campaignId}/pause), since when and why; its status stays `sending`. null otherwise',
      ),
    ),
    lastHold: v.pipe(
      v.nullable(
        v.object({
          reason: v.picklist(HOLD_REASONS),
          at: Timestamp,
          blockers: v.optional(v.array(v.string())),
        }),
      ),
      v.description(
        'Why its schedule fired but the send did not start (it went back to draft); null otherwise',
      ),
    ),
  }),
  v.title('Campaign'),
);
export type CampaignView = v.InferOutput<typeof CampaignView>;

/** The answer of DELETE /campaigns/{campaignId}. */
export const DeletedCampaign = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the campaign deleted')),
  }),
  v.title('DeletedCampaign'),
);

export const summaryOf = (campaign: Campaign): CampaignSummary => ({
  id: campaign.id,
  name: campaign.name,
  subject: campaign.subject,
  templateId: campaign.templateId,
  listId: campaign.listId,
  segmentId: campaign.segmentId,
  tagId: campaign.tagId,
  sendingIdentityId: campaign.sendingIdentityId,
  topicId: campaign.topicId,
  origin: campaign.origin,
  status: campaign.status,
  scheduledAt: campaign.scheduledAt,
  startedAt: campaign.startedAt,
  completedAt: campaign.completedAt,
  createdAt: campaign.createdAt,
  updatedAt: campaign.updatedAt,
});

/** Progress with its percentage. */
export const progressView = (progress: Progress) => {
  const handled = progress.sent + progress.failed + progress.skipped;
  const percent =
    progress.total > 0
      ? Math.min(100, Math.round((handled / progress.total) * 1000) / 10)
      : 0;
  return { ...progress, percent };
};
