import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { logger } from '../observability.ts';
import type { Page, PageRequest } from '../ports.ts';
import { checkRenders } from '../rendering/check-renders.ts';
import { matchesSegment, type SegmentContact } from '../segments/evaluate.ts';
import { requireSegmentOfList } from '../segments/segments.ts';
import { shownAge } from '../sending/readiness.ts';
import type {
  CreateCampaignInput,
  UpdateCampaignInput,
} from './campaign.schema.ts';
import { type Campaign, type CampaignStatus, NEW_DRAFT } from './model.ts';
import type { CampaignsDeps as Deps } from './ports.ts';

export {
  CampaignSummary,
  CampaignView,
  DeletedCampaign,
  ProgressView,
  progressView,
  summaryOf,
} from './views.ts';

import {
  type CampaignSummary,
  type CampaignView,
  progressView,
  summaryOf,
} from './views.ts';

/** A campaign that must exist in the organization: 404 otherwise. */
export const requireCampaign = async (
  deps: Pick<Deps, 'campaigns'>,
  orgId: string,
  campaignId: string,
): Promise<Campaign> => {
  const campaign = await deps.campaigns.get(orgId, campaignId);
  if (!campaign) {
    throw new NotFoundError('campaign.notFound', `No campaign ${campaignId}`);
  }
  return campaign;
};

/**
 * Whether a contact of the campaign's list is in its segment (every contact
 * is, without one). The segment is read now, so that a send walks the
 * audience as it is at that instant. A segment deleted meanwhile, or one of
 * another list, matches no one: a send never widens its audience.
 */
export const segmentFilterOf = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  campaign: Pick<Campaign, 'id' | 'listId' | 'segmentId'>,
): Promise<(contact: SegmentContact) => boolean> => {
  if (!campaign.segmentId) return () => true;
  const segment = await deps.segments.get(orgId, campaign.segmentId);
  if (segment?.listId !== campaign.listId) {
    logger.warn('The segment of a campaign is gone: it matches no one', {
      orgId,
      campaignId: campaign.id,
      segmentId: campaign.segmentId,
    });
    return () => false;
  }
  return (contact) => matchesSegment(segment, contact);
};

/** Items one step of a segment's count reads at most. */
const COUNT_STEP_ITEMS = 2000;

/** Items (contacts, or a tag's index entries) a segment's count reads. */
const COUNT_BUDGET_ITEMS = 2000;

/** How many a campaign would go to, and whether that was counted exactly. */
export interface RecipientCount {
  count: number;
  /** false: an estimate (a segment's count on a large list). */
  exact: boolean;
}

/**
 * The subscribed contacts of a list (carrying `tagId`, if given) that a
 * segment matches, less those who declined the topic: the first
 * `COUNT_BUDGET_ITEMS` items of the walk (the list, or the tag's index),
 * each contact evaluated in memory and its opt-out looked up. Exact when
 * the walk ended within the budget; else the share of the walked
 * subscribed contacts that pass, scaled to all of them (`population`).
 */
const countSegmentAudience = async (
  deps: Pick<Deps, 'audience' | 'topics'>,
  orgId: string,
  campaign: Pick<Campaign, 'listId' | 'tagId' | 'topicId'>,
  keep: (contact: SegmentContact) => boolean,
  population: number,
): Promise<RecipientCount> => {
  let count = 0;
  let walked = 0;
  let read = 0;
  let after: string | null = null;
  for (;;) {
    const limit = Math.min(COUNT_STEP_ITEMS, COUNT_BUDGET_ITEMS - read);
    const step = await deps.audience.walk(orgId, campaign.listId, {
      after,
      limit,
      tagId: campaign.tagId,
    });
    read += limit;
    walked += step.contacts.length;
    const kept = step.contacts.filter(keep);
    const declined = campaign.topicId
      ? await deps.topics.optedOut(
          orgId,
          campaign.topicId,
          kept.map((c) => c.email),
          { consistent: false },
        )
      : new Set<string>();
    count += kept.filter((c) => !declined.has(c.email)).length;
    if (step.done) return { count, exact: true };
    if (read >= COUNT_BUDGET_ITEMS) break;
    after = step.last;
  }
  return {
    count: walked === 0 ? 0 : Math.round((count / walked) * population),
    exact: false,
  };
};

/**
 * Who a campaign would go to now: the subscribed contacts of its list
 * (matching its segment and carrying its tag, if any), minus the addresses
 * that declined its topic. Suppressed addresses are bounced or complained,
 * never subscribed. From kept counters without a segment: the list's
 * subscribed, or the tag's subscribed in the list, less the list's
 * subscribed contacts who declined the topic; with a tag and a topic, the
 * opt-outs are looked up among the tag's carriers. With a segment, a
 * bounded walk evaluates each contact (an estimate past its budget).
 */
export const recipientCountOf = async (
  deps: Pick<Deps, 'lists' | 'contacts' | 'audience' | 'segments' | 'topics'>,
  orgId: string,
  campaign: Pick<Campaign, 'id' | 'listId' | 'segmentId' | 'tagId' | 'topicId'>,
  options: {
    /**
     * With a tag and a topic, look the list's decliners up among the
     * tag's carriers (a read per 100 of them) rather than estimate them.
     */
    exact?: boolean;
  } = {},
): Promise<RecipientCount> => {
  if (campaign.segmentId) {
    const [keep, counters] = await Promise.all([
      segmentFilterOf(deps, orgId, campaign),
      deps.audience.audienceCounters(orgId, campaign.listId, {
        tagId: campaign.tagId,
        topicId: null,
      }),
    ]);
    const population = campaign.tagId
      ? counters?.withTag
      : counters?.subscribed;
    return countSegmentAudience(deps, orgId, campaign, keep, population ?? 0);
  }
  // 1. The kept counters: the list's subscribed, the tag's, the topic's.
  const counters = await deps.audience.audienceCounters(
    orgId,
    campaign.listId,
    { tagId: campaign.tagId, topicId: campaign.topicId },
  );
  if (!counters) return { count: 0, exact: true };
  if (!campaign.tagId) {
    return {
      count: Math.max(0, counters.subscribed - counters.declined),
      exact: true,
    };
  }
  const subscribed = counters.withTag;
  if (!campaign.topicId || subscribed === 0 || counters.declined === 0) {
    return { count: subscribed, exact: true };
  }
  // 2. A tag and a topic: the list's decliners are kept per list, not per
  // tag. A view estimates the tag's share of them (as if the tag and the
  // topic were independent); a send looks them up.
  if (!options.exact) {
    const share = counters.subscribed ? subscribed / counters.subscribed : 0;
    return {
      count: Math.max(0, Math.round(subscribed - counters.declined * share)),
      exact: false,
    };
  }
  const declined = await deps.audience.topicOptOuts(orgId, campaign.topicId);
  const found = await deps.contacts.getMany(orgId, campaign.listId, declined);
  let excluded = 0;
  for (const contact of found.values()) {
    if (
      contact.status === 'subscribed' &&
      contact.tagIds.includes(campaign.tagId)
    ) {
      excluded++;
    }
  }
  return { count: Math.max(0, subscribed - excluded), exact: true };
};

/**
 * Checks that every resource a campaign names exists in the organization:
 * one of another organization is a 404, as one that does not exist.
 */
const checkTargets = async (
  deps: Pick<Deps, 'lists' | 'tags' | 'topics' | 'identities' | 'segments'>,
  orgId: string,
  target: {
    listId?: string;
    tagId?: string | null;
    topicId?: string | null;
    sendingIdentityId?: string | null;
    /** A segment that must filter this list (the campaign's, once changed). */
    segment?: { segmentId: string; listId: string };
  },
) => {
  const [list, tag, topic, book] = await Promise.all([
    target.listId ? deps.lists.get(orgId, target.listId) : undefined,
    target.tagId ? deps.tags.get(orgId, target.tagId) : undefined,
    target.topicId ? deps.topics.get(orgId, target.topicId) : undefined,
    target.sendingIdentityId ? deps.identities.getBook(orgId) : undefined,
  ]);
  if (target.listId && !list) {
    throw new NotFoundError('list.notFound', `No list ${target.listId}`);
  }
  if (target.segment) {
    await requireSegmentOfList(
      deps,
      orgId,
      target.segment.segmentId,
      target.segment.listId,
      'segmentId',
    );
  }
  if (target.tagId && !tag) {
    throw new NotFoundError('tag.notFound', `No tag ${target.tagId}`);
  }
  if (target.topicId && !topic) {
    throw new NotFoundError('topic.notFound', `No topic ${target.topicId}`);
  }
  if (
    target.sendingIdentityId &&
    !book?.identities.some((i) => i.id === target.sendingIdentityId)
  ) {
    throw new NotFoundError(
      'identity.notFound',
      `No sender identity ${target.sendingIdentityId}`,
    );
  }
};

const requireTemplate = async (
  deps: Pick<Deps, 'templates'>,
  orgId: string,
  templateId: string,
) => {
  const template = await deps.templates.get(orgId, templateId);
  if (!template) {
    throw new NotFoundError('template.notFound', `No template ${templateId}`);
  }
  return template;
};

/**
 * The whole view of a campaign: its content, its audience count (live
 * before the send, the send's own once started), its progress (live while
 * sending) and the application-wide switch.
 */
export const campaignView = async (
  deps: Pick<
    Deps,
    | 'campaigns'
    | 'sends'
    | 'lists'
    | 'contacts'
    | 'topics'
    | 'audience'
    | 'segments'
    | 'appSettings'
  > & {
    /** What a warm container may remember (the shown switch); else read. */
    apiKeyCacheTtlSeconds?: number;
  },
  orgId: string,
  campaignId: string,
): Promise<CampaignView> => {
  const found = await deps.campaigns.getWithContent(orgId, campaignId);
  if (!found) {
    throw new NotFoundError('campaign.notFound', `No campaign ${campaignId}`);
  }
  const { campaign, content } = found;
  const running = campaign.status === 'sending';
  const [app, state, audience] = await Promise.all([
    deps.appSettings.get(
      deps.apiKeyCacheTtlSeconds === undefined
        ? {}
        : shownAge({ apiKeyCacheTtlSeconds: deps.apiKeyCacheTtlSeconds }),
    ),
    running ? deps.sends.get(orgId, campaignId) : undefined,
    campaign.status === 'draft' || campaign.status === 'scheduled'
      ? recipientCountOf(deps, orgId, campaign)
      : undefined,
  ]);
  const progress =
    running && state?.sendId === campaign.sendId
      ? state.progress
      : campaign.progress;
  return {
    ...summaryOf(campaign),
    content: content.html,
    recipientCount: audience?.count ?? progress.total,
    recipientCountExact: audience?.exact ?? true,
    progress: progressView(progress),
    sendingEnabled: app.sendingEnabled,
    failure: campaign.failure,
    paused: campaign.paused ?? null,
    lastHold: campaign.lastHold,
  };
};

/**
 * Creates a draft from a template: the campaign keeps its own copy of the
 * template's content (later edits of the template do not change it), and
 * the template's default subject when none is given. Every id it names
 * must be of the organization (404 otherwise); a segment must be one of
 * the list (400 `segment.listMismatch`).
 */
export const createCampaign = async (
  deps: Pick<
    Deps,
    | 'campaigns'
    | 'sends'
    | 'templates'
    | 'lists'
    | 'tags'
    | 'topics'
    | 'identities'
    | 'segments'
    | 'contacts'
    | 'audience'
    | 'appSettings'
    | 'ids'
    | 'clock'
  >,
  orgId: string,
  input: Omit<CreateCampaignInput, 'segmentId'> &
    Partial<Pick<CreateCampaignInput, 'segmentId'>>,
): Promise<CampaignView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  if (deps.ids.rerun && (await deps.campaigns.get(orgId, id))) {
    return campaignView(deps, orgId, id);
  }
  const segmentId = input.segmentId ?? null;
  const [template] = await Promise.all([
    requireTemplate(deps, orgId, input.templateId),
    checkTargets(deps, orgId, {
      ...input,
      ...(segmentId ? { segment: { segmentId, listId: input.listId } } : {}),
    }),
  ]);
  await checkRenders({ subject: input.subject });
  const now = deps.clock.now().toISOString();
  const campaign: Campaign = {
    id,
    name: input.name,
    subject: input.subject ?? template.defaultSubject,
    templateId: template.id,
    listId: input.listId,
    segmentId,
    tagId: input.tagId,
    sendingIdentityId: input.sendingIdentityId,
    topicId: input.topicId,
    origin: null,
    ...NEW_DRAFT,
    createdAt: now,
    updatedAt: now,
  };
  await deps.campaigns.create(orgId, campaign, { html: template.content });
  return campaignView(deps, orgId, campaign.id);
};

/** Newest first, optionally one status, with the exact total. */
export const listCampaigns = async (
  deps: Pick<Deps, 'campaigns'>,
  orgId: string,
  query: PageRequest & { status?: CampaignStatus },
): Promise<Page<CampaignSummary>> => {
  const page = await deps.campaigns.page(
    orgId,
    query.status ? { status: query.status } : {},
    query,
  );
  return { items: page.items.map(summaryOf), total: page.total };
};

const notDraft = (campaign: Campaign) =>
  new ConflictError(
    'campaign.notDraft',
    `Campaign ${campaign.id} is ${campaign.status}: only a draft can be changed or deleted`,
  );

/**
 * Edits a draft: name, subject, content (or a template's content copied
 * again), target (list, segment, tag), topic and signing address (null:
 * the default). Anything but a draft is a 409. The segment, if any, must
 * be one of the list after the change (400 `segment.listMismatch`).
 */
export const updateCampaign = async (
  deps: Parameters<typeof createCampaign>[0],
  orgId: string,
  campaignId: string,
  input: UpdateCampaignInput,
): Promise<CampaignView> => {
  const campaign = await requireCampaign(deps, orgId, campaignId);
  if (campaign.status !== 'draft') throw notDraft(campaign);
  const listId = input.listId ?? campaign.listId;
  const segmentId =
    input.segmentId !== undefined ? input.segmentId : campaign.segmentId;
  const retarget = input.segmentId !== undefined || input.listId !== undefined;
  const [template] = await Promise.all([
    input.templateId
      ? requireTemplate(deps, orgId, input.templateId)
      : undefined,
    checkTargets(deps, orgId, {
      ...input,
      ...(segmentId && retarget ? { segment: { segmentId, listId } } : {}),
    }),
  ]);
  await checkRenders({ subject: input.subject, content: input.content });
  const html = input.content ?? template?.content;
  const after: Campaign = {
    ...campaign,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.subject !== undefined ? { subject: input.subject } : {}),
    ...(template ? { templateId: template.id } : {}),
    ...(input.listId !== undefined ? { listId: input.listId } : {}),
    ...(input.segmentId !== undefined ? { segmentId: input.segmentId } : {}),
    ...(input.tagId !== undefined ? { tagId: input.tagId } : {}),
    ...(input.sendingIdentityId !== undefined
      ? { sendingIdentityId: input.sendingIdentityId }
      : {}),
    ...(input.topicId !== undefined ? { topicId: input.topicId } : {}),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.campaigns.update(
    orgId,
    campaign,
    after,
    html !== undefined ? { html } : undefined,
  );
  return campaignView(deps, orgId, campaignId);
};

/** Deletes a draft (and its content); anything else is a 409. */
export const deleteCampaign = async (
  deps: Pick<Deps, 'campaigns'>,
  orgId: string,
  campaignId: string,
): Promise<{ id: string }> => {
  const campaign = await requireCampaign(deps, orgId, campaignId);
  if (campaign.status !== 'draft') throw notDraft(campaign);
  await deps.campaigns.delete(orgId, campaign);
  return { id: campaignId };
};

/** Refuses a field value with a 400 naming it. */
export const invalidField = (field: string, message: string) =>
  new ValidationError(`Invalid request: ${field}: ${message}`, [
    { field, message },
  ]);
