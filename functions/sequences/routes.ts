/**
 * Routes of the `sequences` group: sequences and series (a series is stored
 * as a sequence, and its id works on the sequence routes), their versions
 * and nodes, and publishing.
 */

import * as v from 'valibot';
import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  createSequence,
  createSeries,
  deleteSequence,
  deleteSeries,
  updateSequence,
  updateSeries,
} from '../../shared/sequences/heads.ts';
import {
  addNode,
  deleteNode,
  updateNode,
} from '../../shared/sequences/nodes.ts';
import { publishVersion } from '../../shared/sequences/publish.ts';
import {
  getSequence,
  getSeries,
  getVersion,
  listSequences,
  listSeries,
  listVersions,
  requireSequence,
} from '../../shared/sequences/reads.ts';
import {
  CreateNodeBody,
  CreateSequenceBody,
  CreateSeriesBody,
  SequenceListQuery,
  UpdateNodeBody,
  UpdateSequenceBody,
  UpdateSeriesBody,
} from '../../shared/sequences/sequence.schema.ts';
import {
  discardVersion,
  openVersion,
} from '../../shared/sequences/versions.ts';
import {
  Deleted,
  NodeView,
  SequenceDetail,
  SequenceView,
  SeriesDetail,
  SeriesView,
  VersionDetail,
  VersionView,
} from '../../shared/sequences/views.ts';
import {
  readSequenceStats,
  SequenceStatsView,
} from '../../shared/statistics/reports.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `sequences` group's function may use. */
export const sequenceBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'lists',
      'tags',
      'templates',
      'topics',
      'segments',
      'sequences',
      // The statistics of a sequence's steps.
      'mailStats',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
] as const;

/** The deps of the `sequences` group's function. */
export type SequenceDeps = DepsOf<typeof sequenceBindings>;

const route = routeFor<SequenceDeps>({ scope: 'campaigns' });

const SequenceParams = idParams('sequenceId');
const SeriesParams = idParams('seriesId');
const VersionParams = idParams('sequenceId', 'versionId');
const NodeParams = idParams('sequenceId', 'versionId', 'nodeId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** Authentication rule 5, for a sequence named in the path. */
const TENANCY =
  'A sequence or series of another organization answers 404 `sequence.notFound`, as one that does not exist.';

/** How versions work (our decisions where the spec is silent). */
const VERSIONS =
  'Versions: at most one `draft` at a time, opened on purpose (POST …/versions; never by an edit); a new draft is a copy of the published version, nodes (with their ids) and calendar. Publishing makes it `published`, and the version published before becomes `superseded`: contacts already on a journey stay on the version they entered, new journeys take the published one.';

/** What the family rule of node edits is. */
const FAMILIES =
  'Fields come in families, one per call: `{subject, content}` and `{sendTimeMinutes}` on a send_email node, `{waitHours}` on a wait node. Two families in one call, or a field of the other type, are a 400 naming the fields; nothing changes.';

/** What a draft-only change answers on a published version. */
const DRAFT_ONLY =
  'Only a draft changes: a published or superseded version answers 400 `sequence.versionNotDraft`.';

/** Every route of the sequences group. */
export const sequenceRoutes = [
  route({
    method: 'POST',
    path: '/sequences',
    role: 'admin',
    summary: 'Create a sequence, paused, with its version 1 draft',
    description: md(
      'Creates a sequence and its version 1 draft in one transaction, and answers 201 with the sequence, `paused`, `publishedVersionId` null. `triggerType` is `list_joined` (`triggerTargetId` a list id) or `tag_added` (a tag id); `fixed_date` is refused with 400: a series is the route for a date.',
      "A list or tag of another organization (or none) answers 404. The plan's cap (set by the operator, `admin org plan --sequences`; 20 unless set) counts paused sequences too; it is checked inside the creating transaction, so concurrent creates cannot pass it: 400 `sequence.capReached`, naming the cap and the current count.",
    ),
    body: CreateSequenceBody,
    responses: { 201: json(SequenceView, 'The sequence, created paused') },
    errors: [
      'list.notFound',
      'tag.notFound',
      'sequence.capReached',
      'write.contended',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createSequence(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/sequences',
    role: 'member',
    summary: 'Sequences of the organization, newest first',
    description:
      'Every sequence of the organization, newest first, paginated. Series are listed by GET /series.',
    query: SequenceListQuery,
    responses: { 200: page(SequenceView, 'A page of sequences') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listSequences(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/sequences/{sequenceId}',
    role: 'member',
    summary: 'One sequence (or series) with its versions and live nodes',
    description: md(
      'The sequence, every version (without nodes), and the published version and the open draft with their nodes. A series id works too (`kind` says which).',
      TENANCY,
    ),
    params: SequenceParams,
    responses: { 200: json(SequenceDetail, 'The sequence') },
    errors: ['sequence.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getSequence(deps, caller.orgId, params.sequenceId)),
  }),
  route({
    method: 'PATCH',
    path: '/sequences/{sequenceId}',
    role: 'admin',
    summary: 'Rename, pause or activate a sequence, or change its topic',
    description: md(
      '`status` `active` needs a published version (400 `sequence.notPublished`); `paused` stops new enrolments and sends while waits keep elapsing. `topicId` must be a topic of the organization (404); null removes it, unless the published version links to `{{topicOptOutUrl}}` (400 `sequence.topicInUse`).',
      TENANCY,
    ),
    params: SequenceParams,
    body: UpdateSequenceBody,
    responses: { 200: json(SequenceView, 'The sequence, after the change') },
    errors: [
      'sequence.notFound',
      'sequence.notPublished',
      'sequence.topicInUse',
      'topic.notFound',
      'segment.notFound',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateSequence(deps, caller.orgId, params.sequenceId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/sequences/{sequenceId}',
    role: 'admin',
    summary: 'Delete a sequence with its versions and enrolments',
    description: md(
      'Deletes the sequence with all its versions, nodes and enrolments, for good; contacts mid-journey stop where they are. Tags it used are untouched. A series id is a 400 `sequence.isSeries`: DELETE /series/{seriesId} deletes a series.',
      TENANCY,
    ),
    params: SequenceParams,
    responses: { 200: json(Deleted, 'The id of the sequence deleted') },
    errors: ['sequence.notFound', 'sequence.isSeries', 'sequence.changed'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteSequence(deps, caller.orgId, params.sequenceId)),
  }),
  route({
    method: 'POST',
    path: '/series',
    role: 'admin',
    summary: 'Create a series, paused, with its version 1 draft',
    description: md(
      "Creates a series and its version 1 draft holding its calendar: `listId` (required), `startsAt` (optional now, required to publish), `audienceSegmentId` (a segment of that list: another list's is 400 `segment.listMismatch`) and `audienceTagId` narrowing the list. A segment a series holds (its published version or its draft) cannot be deleted. Answers 201 with the series, `paused`. A `triggerType` in the body changes nothing. Series do not count against the sequence cap.",
      'A list, tag or topic of another organization (or none) answers 404.',
    ),
    body: CreateSeriesBody,
    responses: { 201: json(SeriesView, 'The series, created paused') },
    errors: [
      'list.notFound',
      'tag.notFound',
      'topic.notFound',
      'segment.notFound',
      'segment.listMismatch',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createSeries(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/series',
    role: 'member',
    summary: 'Series of the organization, newest first',
    description:
      "Every series of the organization, newest first, paginated, each with its calendar (the open draft's when one is open, else the published version's).",
    query: SequenceListQuery,
    responses: { 200: page(SeriesView, 'A page of series') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listSeries(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/series/{seriesId}',
    role: 'member',
    summary: 'One series with its versions and live nodes',
    description: md(
      "The series with its calendar (the open draft's when one is open, else the published version's), every version, and the published version and the open draft with their nodes. A sequence's id is a 400 `sequence.notSeries`.",
      TENANCY,
    ),
    params: SeriesParams,
    responses: { 200: json(SeriesDetail, 'The series') },
    errors: ['sequence.notFound', 'sequence.notSeries'],
    handle: async (deps, { caller, params }) =>
      ok(await getSeries(deps, caller.orgId, params.seriesId)),
  }),
  route({
    method: 'PATCH',
    path: '/series/{seriesId}',
    role: 'admin',
    summary: "Edit a series: name, status, topic; its draft's calendar",
    description: md(
      "`name`, `status` and `topicId` are written on the series; `startsAt`, `listId`, `audienceSegmentId` and `audienceTagId` on the open draft, never on a published version, and take effect once it is published. Omitted fields keep their value. A calendar field with no draft open is a 400 `sequence.noDraft` naming it: nothing changes, and no draft is opened. `status` `active` needs a published version. A sequence's id is a 400 `sequence.notSeries`.",
      TENANCY,
    ),
    params: SeriesParams,
    body: UpdateSeriesBody,
    responses: { 200: json(SeriesView, 'The series, after the change') },
    errors: [
      'sequence.notFound',
      'sequence.notSeries',
      'sequence.noDraft',
      'sequence.notPublished',
      'sequence.topicInUse',
      'list.notFound',
      'tag.notFound',
      'topic.notFound',
      'segment.notFound',
      'segment.listMismatch',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateSeries(deps, caller.orgId, params.seriesId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/series/{seriesId}',
    role: 'admin',
    summary: 'Delete a series with its versions and steps',
    description: md(
      "Deletes the series with its versions and nodes, for good; the campaigns its steps already sent remain. A sequence's id is a 400 `sequence.notSeries`.",
      TENANCY,
    ),
    params: SeriesParams,
    responses: { 200: json(Deleted, 'The id of the series deleted') },
    errors: [
      'sequence.notFound',
      'sequence.notSeries',
      'segment.notFound',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await deleteSeries(deps, caller.orgId, params.seriesId)),
  }),
  route({
    method: 'GET',
    path: '/sequences/{sequenceId}/stats',
    role: 'member',
    summary:
      'Statistics of each step: delivery, bounces, complaints, opens and clicks (a person’s and a machine’s apart), by mailbox provider',
    description: md(
      'An extension. For each step that sent mail (1 for a version’s first email, and so on, whatever the version), the figures of a campaign’s statistics from the events SES publishes about the step’s messages: sent, delivered, bounces (hard and soft), complaints, rejections, opens and clicks (total and unique: a message counts once, at its first; `human` and `machine`/`scanner` apart), clicks per link, the rates (over the human opens and clicks: `rates.basis`) and `byProvider`. How an open or a click is judged a machine’s: docs/features/engagement.md.',
      'A series’ steps are campaigns: their statistics are at GET /campaigns/{campaignId}/stats, and a series answers no step here. Each event counts once; counted from the events recorded since step statistics exist.',
      TENANCY,
    ),
    params: SequenceParams,
    responses: { 200: json(SequenceStatsView, 'The statistics of its steps') },
    errors: ['sequence.notFound'],
    handle: async (deps, { caller, params }) => {
      await requireSequence(deps, caller.orgId, params.sequenceId);
      return ok(await readSequenceStats(deps, caller.orgId, params.sequenceId));
    },
  }),
  route({
    method: 'POST',
    path: '/sequences/{sequenceId}/versions',
    role: 'admin',
    summary: 'Open a draft version (a copy of the published one)',
    description: md(
      'Opens a draft and answers 201 with it and its nodes. A draft already open is a 409 `sequence.draftOpen`.',
      VERSIONS,
      TENANCY,
    ),
    params: SequenceParams,
    responses: { 201: json(VersionDetail, 'The draft, with its nodes') },
    errors: ['sequence.notFound', 'sequence.draftOpen', 'sequence.changed'],
    handle: async (deps, { caller, params }) =>
      created(await openVersion(deps, caller.orgId, params.sequenceId)),
  }),
  route({
    method: 'GET',
    path: '/sequences/{sequenceId}/versions',
    role: 'member',
    summary: 'Every version of a sequence, each with its status',
    description: md(
      'Every version, by number, without nodes.',
      VERSIONS,
      TENANCY,
    ),
    params: SequenceParams,
    responses: {
      200: json(v.array(VersionView), 'The versions, by number'),
    },
    errors: ['sequence.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await listVersions(deps, caller.orgId, params.sequenceId)),
  }),
  route({
    method: 'GET',
    path: '/sequences/{sequenceId}/versions/{versionId}',
    role: 'member',
    summary: 'One version with its nodes',
    description: md('One version with its nodes, in order.', TENANCY),
    params: VersionParams,
    responses: { 200: json(VersionDetail, 'The version') },
    errors: ['sequence.notFound', 'sequenceVersion.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(
        await getVersion(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
        ),
      ),
  }),
  route({
    method: 'DELETE',
    path: '/sequences/{sequenceId}/versions/{versionId}',
    role: 'admin',
    summary: 'Discard the open draft',
    description: md(
      'Deletes the draft with its nodes; the published version is untouched. A series that was never published keeps its draft (it holds the list the series sends to): 400 `sequence.onlyVersion`.',
      DRAFT_ONLY,
      TENANCY,
    ),
    params: VersionParams,
    responses: { 200: json(Deleted, 'The id of the draft discarded') },
    errors: [
      'sequence.notFound',
      'sequenceVersion.notFound',
      'sequence.versionNotDraft',
      'sequence.onlyVersion',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(
        await discardVersion(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/sequences/{sequenceId}/versions/{versionId}/nodes',
    role: 'admin',
    summary: 'Add a node (send_email or wait) at the end of a draft',
    description: md(
      'Adds a node after the last one and answers 201 with it. A `wait` takes `waitHours` (1 to 8,784). A `send_email` starts with a starter content (with an unsubscribe link) and no subject, or with the content and default subject of `templateId`. A version holds at most 50 nodes (400 `sequence.nodeLimit`) and 2,000,000 bytes of content.',
      DRAFT_ONLY,
      TENANCY,
    ),
    params: VersionParams,
    body: CreateNodeBody,
    responses: { 201: json(NodeView, 'The node, added') },
    errors: [
      'sequence.notFound',
      'sequenceVersion.notFound',
      'sequence.versionNotDraft',
      'sequence.nodeLimit',
      'template.notFound',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      created(
        await addNode(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
          body,
        ),
      ),
  }),
  route({
    method: 'PATCH',
    path: '/sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}',
    role: 'admin',
    summary: 'Edit a node of a draft, one family of fields per call',
    description: md(
      FAMILIES,
      "Without `sendTimeMinutes` a step goes out as soon as the wait before it ends; with it, at the next such minute of the day in the organization's time zone (`PATCH /settings/sending` `timezone`). A subject or content that does not render is a 400 naming it.",
      DRAFT_ONLY,
      TENANCY,
    ),
    params: NodeParams,
    body: UpdateNodeBody,
    responses: { 200: json(NodeView, 'The node, after the change') },
    errors: [
      'sequence.notFound',
      'sequenceVersion.notFound',
      'sequence.versionNotDraft',
      'sequenceNode.notFound',
      'template.invalid',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(
        await updateNode(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
          params.nodeId,
          body,
        ),
      ),
  }),
  route({
    method: 'DELETE',
    path: '/sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}',
    role: 'admin',
    summary: 'Remove a node from a draft',
    description: md(
      'Removes the node; the ones after it move up a position.',
      DRAFT_ONLY,
      TENANCY,
    ),
    params: NodeParams,
    responses: { 200: json(Deleted, 'The id of the node removed') },
    errors: [
      'sequence.notFound',
      'sequenceVersion.notFound',
      'sequence.versionNotDraft',
      'sequenceNode.notFound',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(
        await deleteNode(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
          params.nodeId,
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/sequences/{sequenceId}/versions/{versionId}/publish',
    role: 'admin',
    summary: 'Publish a draft: new journeys take it',
    description: md(
      "Checks the whole draft, then publishes it and answers 200 with it. Refused with 400 `sequence.publishInvalid`, `details` naming each problem: no send_email node; an email without a subject, whose content has no `{{unsubscribeUrl}}` or does not render, or uses `{{topicOptOutUrl}}` while the sequence has no topic; for a series, no `startsAt` or one in the past, or a list or tag gone; for a sequence, its trigger's list or tag gone.",
      VERSIONS,
      DRAFT_ONLY,
      TENANCY,
    ),
    params: VersionParams,
    responses: { 200: json(VersionDetail, 'The version, published') },
    errors: [
      'sequence.notFound',
      'sequenceVersion.notFound',
      'sequence.versionNotDraft',
      'sequence.publishInvalid',
      'segment.notFound',
      'sequence.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(
        await publishVersion(
          deps,
          caller.orgId,
          params.sequenceId,
          params.versionId,
        ),
      ),
  }),
];
