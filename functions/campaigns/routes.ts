/**
 * Routes of the `campaigns` group: drafts, the list, the send (now or at a
 * minute), the test send and the stats.
 */
import {
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  queue,
  scheduler,
  sendingQuota,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import {
  CampaignListQuery,
  CampaignTestSendBody,
  CreateCampaignBody,
  SendCampaignBody,
  UpdateCampaignBody,
} from '../../shared/campaigns/campaign.schema.ts';
import {
  CampaignSummary,
  CampaignView,
  campaignView,
  createCampaign,
  DeletedCampaign,
  deleteCampaign,
  listCampaigns,
  requireCampaign,
  updateCampaign,
} from '../../shared/campaigns/campaigns.ts';
import {
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
  unscheduleCampaign,
} from '../../shared/campaigns/control.ts';
import {
  DISPATCH_QUEUE,
  requestSend,
  SendAccepted,
} from '../../shared/campaigns/send.ts';
import {
  CampaignStatsView,
  readCampaignStats,
} from '../../shared/campaigns/stats.ts';
import {
  CampaignTestSendResult,
  testSendCampaign,
} from '../../shared/campaigns/test-send.ts';
import {
  accepted,
  created,
  ok,
  paginated,
} from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `campaigns` group's function may use. */
export const campaignBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'lists',
      'contacts',
      'tags',
      'templates',
      'topics',
      'segments',
      'identities',
      'domains',
      'campaigns',
      'sends',
      'audience',
      'campaignStats',
      'sendWindows',
      // What a send's first render and a test send merge.
      'fields',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
  endpoints,
  // Test sends; the send's content check signs (test) links.
  mail,
  linkSecret,
  // Readiness (the tenant's status) and the quota (the account's).
  sendingStatus,
  sendingQuota,
  scheduler(DISPATCH_QUEUE),
  queue(DISPATCH_QUEUE),
] as const;

/** The deps of the `campaigns` group's function. */
export type CampaignDeps = DepsOf<typeof campaignBindings>;

const route = routeFor<CampaignDeps>({ scope: 'campaigns' });

const CampaignParams = idParams('campaignId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

const TARGETS =
  "Every id it names (template, list, segment, tag, topic, sending identity) must be one of the organization: another organization's answers 404, as one that does not exist. A segment must filter the campaign's list: 400 `segment.listMismatch` otherwise.";

/** Every route of the campaigns group. */
export const campaignRoutes = [
  route({
    method: 'POST',
    path: '/campaigns',
    role: 'admin',
    summary: 'Create a draft campaign from a template, a list (and a tag)',
    description: md(
      "Creates a draft: `name`, `templateId` and `listId` are required; `subject` defaults to the template's default subject; `segmentId` narrows the audience to the list's contacts the segment matches (evaluated when the send starts and again at each recipient's turn); `tagId` narrows it to the contacts carrying that tag; `sendingIdentityId` names the address of the address book that signs it (null or left out: the default address); `topicId` attaches a topic.",
      "The campaign keeps its own copy of the template's content: later edits of the template do not change it.",
      TARGETS,
      'The answer is the whole campaign, as GET /campaigns/{campaignId} reads it.',
    ),
    body: CreateCampaignBody,
    responses: { 201: json(CampaignView, 'The campaign, a draft') },
    errors: [
      'template.notFound',
      'list.notFound',
      'tag.notFound',
      'topic.notFound',
      'identity.notFound',
      'segment.notFound',
      'segment.listMismatch',
      'template.invalid',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createCampaign(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/campaigns',
    role: 'member',
    summary: 'Campaigns of the organization, newest first, filtered by status',
    description:
      "Every campaign of the organization, newest first, paginated; `status` keeps one status (the total is then that status's). Rows carry no content and no counts: read one campaign for its `recipientCount` and `progress`.",
    query: CampaignListQuery,
    responses: { 200: page(CampaignSummary, 'A page of campaigns') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listCampaigns(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/campaigns/{campaignId}',
    role: 'member',
    summary:
      'One campaign: status, target, recipientCount, progress, sendingEnabled, scheduledAt, content',
    description: md(
      'Poll it to follow a send; there is no webhook. `recipientCount` is readable before sending; `progress` fills as batches go out; `scheduledAt` is the stored instant (to the minute, UTC); `sendingEnabled` is false while mass sending is off application-wide.',
      'A send that was accepted (202) but left the campaign a draft with `progress.total` 0 was held: mass sending is off (`sendingEnabled` false) or the 24-hour quota is below `recipientCount`. `lastHold` says why a schedule that fired did not start.',
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignView, 'The campaign') },
    errors: ['campaign.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await campaignView(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'PATCH',
    path: '/campaigns/{campaignId}',
    role: 'admin',
    summary:
      'Edit a draft: content, subject, name, target, topicId, sendingIdentityId',
    description: md(
      "Edits a draft; a field left out is unchanged. `content` replaces its HTML, or `templateId` copies another template's (not both); `listId`, `segmentId` and `tagId` (null: the whole list) change its target; `topicId` null removes the topic; `sendingIdentityId` null means the default address.",
      'Anything but a draft answers 409 `campaign.notDraft`.',
      TARGETS,
    ),
    params: CampaignParams,
    body: UpdateCampaignBody,
    responses: { 200: json(CampaignView, 'The campaign, after the change') },
    errors: [
      'campaign.notFound',
      'campaign.notDraft',
      'campaign.changed',
      'template.notFound',
      'list.notFound',
      'tag.notFound',
      'topic.notFound',
      'identity.notFound',
      'segment.notFound',
      'segment.listMismatch',
      'template.invalid',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateCampaign(deps, caller.orgId, params.campaignId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/campaigns/{campaignId}',
    role: 'admin',
    summary: 'Delete a draft',
    description:
      'Deletes a draft and its content. A scheduled, sending, sent or failed campaign is kept (409 `campaign.notDraft`): it is the record of what went out.',
    params: CampaignParams,
    responses: { 200: json(DeletedCampaign, 'The id of the campaign deleted') },
    errors: ['campaign.notFound', 'campaign.notDraft', 'campaign.changed'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteCampaign(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/send',
    role: 'admin',
    summary: 'Send now, or at scheduledAt (202: accepted, not yet sent)',
    description: md(
      'Sends the campaign now, or schedules it when `scheduledAt` is given: an ISO 8601 instant with an explicit offset (Z or +hh:mm). No body, an empty body or a body without it means now. It answers 202 `{campaignId, status}`: `send_requested` (sending now) or `scheduled`.',
      '1. A date without an offset is refused (400), never read as UTC. 2. An instant in the past, or nearer than the minimum lead time (`SCHEDULE_MIN_LEAD_SECONDS`, 120 s by default), is refused (400 `campaign.scheduleInvalid`); the instant is kept to the minute, seconds dropped. 3. The content is rendered first with the same check as POST /render: no `{{unsubscribeUrl}}` is 400 `template.unsubscribeMissing`, `{{topicOptOutUrl}}` without a topic 400 `message.topicRequired`; nothing is sent or scheduled then. 4. Per state: sending 409 `campaign.sending`, sent 409 `campaign.sent`, failed 409 `campaign.failed`; scheduled with `scheduledAt` 400 `campaign.notDraftToSchedule`; scheduled without it starts now (the pending schedule then does nothing). 5. Calling send twice never sends twice: the change of state is conditional.',
      'An organization that cannot send (readiness blockers other than `sending_disabled`, as GET /me lists them) is refused with 409 `sending.blocked`, `details` naming each blocker. A send now that mass sending (off application-wide) or the 24-hour quota holds answers 202 and leaves the campaign unchanged (a draft with `progress.total` 0); calling send again later is safe. A schedule re-checks all of this when it fires.',
    ),
    params: CampaignParams,
    body: SendCampaignBody,
    responses: { 202: json(SendAccepted, 'The send, accepted') },
    errors: [
      'campaign.notFound',
      'campaign.scheduleInvalid',
      'campaign.notDraftToSchedule',
      'campaign.sending',
      'campaign.sent',
      'campaign.failed',
      'campaign.changed',
      'template.unsubscribeMissing',
      'message.topicRequired',
      'template.invalid',
      'sending.blocked',
      'provider.unavailable',
    ],
    handle: async (deps, { caller, params, body }) =>
      accepted(await requestSend(deps, caller.orgId, params.campaignId, body)),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/unschedule',
    role: 'admin',
    summary: 'Take a scheduled campaign back to draft',
    description: md(
      'Takes a scheduled campaign back to draft: `scheduledAt` becomes null and its schedule is deleted; a fire that comes late does nothing. The campaign can then be edited, sent or scheduled again. The answer is the campaign, as GET /campaigns/{campaignId} reads it.',
      'Only a scheduled campaign: a draft, sent or failed one answers 409 `campaign.notScheduled`; one whose schedule fired meanwhile (now sending) 409 `campaign.sending`.',
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignView, 'The campaign, a draft again') },
    errors: [
      'campaign.notFound',
      'campaign.notScheduled',
      'campaign.sending',
      'campaign.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await unscheduleCampaign(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/pause',
    role: 'admin',
    summary: 'Pause a sending campaign (its status stays sending)',
    description: md(
      'Pauses a campaign that is sending: once this answers, no email of it starts going out more than about a second later, whatever batch is in flight. The campaign stays `sending`, with `paused: {at, reason}`; `progress` says what went out. Pausing a paused campaign changes nothing. Resume it with POST /campaigns/{campaignId}/resume, or cancel it.',
      'Only a sending campaign: a draft, scheduled, sent or failed one answers 409 `campaign.notSending`.',
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignView, 'The campaign, paused') },
    errors: ['campaign.notFound', 'campaign.notSending', 'campaign.changed'],
    handle: async (deps, { caller, params }) =>
      ok(await pauseCampaign(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/resume',
    role: 'admin',
    summary: 'Resume a paused campaign where it stopped',
    description: md(
      'Lifts the pause: the send goes on where it stopped — nobody who got the campaign gets it again, nobody is skipped — after any number of pauses. Who left the audience meanwhile (unsubscribed, suppressed, untagged) is skipped at their turn, as in any send.',
      'Only a paused campaign: one that is not paused answers 409 `campaign.notPaused`; one that is not sending 409 `campaign.notSending`. While the reputation guardrail pauses the organization (GET /reputation), a resume answers 409 `sending.blocked` naming `reputation_paused` and its figures, until the operator lifts it.',
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignView, 'The campaign, sending again') },
    errors: [
      'campaign.notFound',
      'campaign.notSending',
      'campaign.notPaused',
      'campaign.changed',
      'sending.blocked',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await resumeCampaign(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/cancel',
    role: 'admin',
    summary: 'Cancel a sending or paused campaign: nothing more goes out',
    description: md(
      'Cancels a campaign that is sending (paused or not): nothing more of it goes out once this answers (about a second for a batch in flight). It becomes `failed` with `failure.reason` `cancelled`; `progress` says what went out, completed as the batches in flight stop. A cancelled campaign is the record of what was sent: it cannot be sent again (make a new campaign for the rest).',
      'Only a sending campaign: a draft, scheduled (unschedule it instead), sent or failed one answers 409 `campaign.notSending`.',
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignView, 'The campaign, cancelled') },
    errors: ['campaign.notFound', 'campaign.notSending', 'campaign.changed'],
    handle: async (deps, { caller, params }) =>
      ok(await cancelCampaign(deps, caller.orgId, params.campaignId)),
  }),
  route({
    method: 'GET',
    path: '/campaigns/{campaignId}/stats',
    role: 'member',
    summary:
      'Delivery, bounces, complaints, opens, clicks (per link), unsubscribes and rates',
    description: md(
      "The campaign's statistics, from the events SES publishes about its messages: recipients and what the send did (sent, failed, skipped), then delivered, bounces (hard and soft), complaints, rejections, opens and clicks (total and unique: a recipient counts once, at its first), clicks per link, and unsubscribes through the campaign's own links. Rates are over delivered (bounces over sent), 0 to 1.",
      'Each event counts once: a duplicate or late event changes nothing. Opens are counted from the tracking pixel and clicks from the tracked links of the configuration set: mail clients that block images hide opens. Test sends count nothing. A draft answers zeros.',
      "An extension adds fields and leaves the others as they were: `opens.human` and `opens.machine` (Apple Mail Privacy Protection's prefetch, security scanners, opens within 3 s of delivery), `clicks.human` and `clicks.scanner` (scanners' networks and agents, clicks within 10 s of delivery, bursts of links clicked at once), and `byProvider` (Gmail, Microsoft, Yahoo, Apple, other: by the recipient's domain or its MX). The open, click and click-to-open rates count a person's opens and clicks (`rates.basis` says so; `all` for a campaign counted before the split). The rules and their evidence: docs/features/engagement.md.",
    ),
    params: CampaignParams,
    responses: { 200: json(CampaignStatsView, 'The statistics') },
    errors: ['campaign.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(
        await readCampaignStats(
          deps,
          caller.orgId,
          await requireCampaign(deps, caller.orgId, params.campaignId),
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/campaigns/{campaignId}/test-send',
    role: 'admin',
    summary: 'Send the campaign as a test to 1–5 addresses; writes nothing',
    description: md(
      'Sends one test email of the campaign to each of `emails` (1 to 5 addresses), with "[Test] " before its subject; its links lead to a test page and change nothing. The reader is a stand-in: names empty, each custom field its `defaultValue` (or nothing). It writes nothing: no recipient, no stats, no quota. It works in any status.',
      'From and Reply-To are those of every send of the organization, outside its tenant: while the provider pauses the organization, the test still goes out, under the application address. Each address gets a `status`: `sent`, `blocked` (sending off application-wide), `not_allowed` (the organization is not on the sending allowlist) or `send_refused`.',
    ),
    params: CampaignParams,
    body: CampaignTestSendBody,
    responses: {
      200: json(CampaignTestSendResult, 'What became of each test email'),
    },
    errors: ['campaign.notFound', 'message.topicRequired', 'template.invalid'],
    handle: async (deps, { caller, params, body }) =>
      ok(await testSendCampaign(deps, caller.orgId, params.campaignId, body)),
  }),
];
