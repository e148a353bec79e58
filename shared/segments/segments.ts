/**
 * Application logic of segments: saved filters over one list's contacts.
 * Agnostic to how it is called and where data is stored.
 */
import * as v from 'valibot';
import { requireList } from '../audience/lists.ts';
import {
  ConflictError,
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import { matchesSegment } from './evaluate.ts';
import { checkFieldConditions } from './field-conditions.ts';
import {
  FIELD_OPERATORS,
  SEGMENT_FIELDS,
  SEGMENT_MATCHES,
  SEGMENT_OPERATORS,
  type Segment,
  type SegmentCondition,
} from './model.ts';
import type { SegmentsDeps as Deps } from './ports.ts';
import {
  type CreateSegmentInput,
  FIELD_REF,
  type UpdateSegmentInput,
} from './segment.schema.ts';

/** Contacts of its list a segment's live count reads at most. */
export const SEGMENT_SAMPLE = 2000;

const OPERATORS = [
  ...new Set([...Object.values(SEGMENT_OPERATORS).flat(), ...FIELD_OPERATORS]),
];

/** A condition as the API shows it (as stored: values normalized). */
export const SegmentConditionView = v.pipe(
  v.object({
    field: v.pipe(
      v.union([
        v.picklist(SEGMENT_FIELDS),
        v.pipe(v.string(), v.regex(FIELD_REF)),
      ]),
      v.description(
        "One of the contact's own attributes, or `fields.<key>`: a custom field",
      ),
    ),
    operator: v.picklist(OPERATORS),
    value: v.pipe(
      v.optional(v.union([v.string(), v.number(), v.boolean()])),
      v.description(
        'A tag id, a status, a lower-cased domain or text, or a UTC instant; for a custom field, a value of its type (a `contains` text lower-cased); absent for exists and notExists',
      ),
    ),
  }),
  v.title('SegmentCondition'),
);

/** A segment as the API shows it. */
export const SegmentView = v.pipe(
  v.object({
    id: ViewId,
    name: v.string(),
    listId: v.pipe(
      ViewId,
      v.description('The list whose contacts the segment filters; fixed'),
    ),
    match: v.pipe(
      v.picklist(SEGMENT_MATCHES),
      v.description('all: every condition must hold; any: one at least'),
    ),
    conditions: v.array(SegmentConditionView),
    usedBy: v.pipe(
      v.array(v.object({ seriesId: ViewId, name: v.string() })),
      v.description(
        'The series narrowed by the segment; while one is, it cannot be deleted',
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('Segment'),
);
export type SegmentView = v.InferOutput<typeof SegmentView>;

/** A segment with its live counts (GET /segments/{segmentId}). */
export const SegmentWithCount = v.pipe(
  v.object({
    ...SegmentView.entries,
    contactCount: v.pipe(
      Count,
      v.description(
        `Contacts of the list that match, any status: counted now on the list's first ${SEGMENT_SAMPLE.toLocaleString('en')} contacts (by email); in a larger list, scaled to the list's size (an estimate: see countsExact)`,
      ),
    ),
    subscribedCount: v.pipe(
      Count,
      v.description(
        'Of those, the subscribed ones: who a send would reach (estimated as contactCount)',
      ),
    ),
    countsExact: v.pipe(
      v.boolean(),
      v.description(
        'true when the counts read the whole list; false when they are an estimate from its first contacts',
      ),
    ),
  }),
  v.title('SegmentWithCount'),
);
export type SegmentWithCount = v.InferOutput<typeof SegmentWithCount>;

/** The answer of DELETE /segments/{segmentId}. */
export const DeletedSegment = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the segment removed')),
  }),
  v.title('DeletedSegment'),
);
export type DeletedSegment = v.InferOutput<typeof DeletedSegment>;

const view = (segment: Segment): SegmentView => ({
  id: segment.id,
  name: segment.name,
  listId: segment.listId,
  match: segment.match,
  conditions: segment.conditions.map((condition) => ({ ...condition })),
  usedBy: Object.entries(segment.usedBy)
    .map(([seriesId, name]) => ({ seriesId, name }))
    .sort((a, b) => a.seriesId.localeCompare(b.seriesId)),
  createdAt: segment.createdAt,
  updatedAt: segment.updatedAt,
});

/** The stored segment, or 404 for a missing one or another organization's. */
export const requireSegment = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  segmentId: string,
): Promise<Segment> => {
  const segment = await deps.segments.get(orgId, segmentId);
  if (!segment) {
    throw new NotFoundError('segment.notFound', `No segment ${segmentId}`);
  }
  return segment;
};

/**
 * The segment a series (or a listing) narrows `listId` with: 404 when it
 * does not exist in the organization, 400 `segment.listMismatch` naming
 * `field` when it filters another list. The series code calls it before
 * its transaction (whose `useSegment` entry checks the same again).
 */
export const requireSegmentOfList = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  segmentId: string,
  listId: string,
  field = 'listId',
): Promise<Segment> => {
  const segment = await requireSegment(deps, orgId, segmentId);
  if (segment.listId !== listId) {
    throw new ValidationError(
      `Segment ${segmentId} filters the list ${segment.listId}, not ${listId}`,
      [
        {
          field,
          message: `must be the list of the segment (${segment.listId})`,
        },
      ],
      { code: 'segment.listMismatch' },
    );
  }
  return segment;
};

/** 400 naming each condition whose tag is not one of the organization. */
const checkTags = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  conditions: SegmentCondition[],
) => {
  const wanted = conditions.flatMap((condition, index) =>
    condition.field === 'tag' ? [{ index, tagId: condition.value }] : [],
  );
  if (!wanted.length) return;
  const found = new Set(
    (
      await deps.tags.getMany(orgId, [...new Set(wanted.map((w) => w.tagId))])
    ).map((tag) => tag.id),
  );
  const missing = wanted.filter((w) => !found.has(w.tagId));
  if (!missing.length) return;
  const details = missing.map((w) => ({
    field: `conditions.${w.index}.value`,
    message: `no tag of the organization has the id ${w.tagId}`,
  }));
  throw new ValidationError(
    `Invalid request: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`,
    details,
  );
};

/**
 * Creates a segment over a list of the organization (404 otherwise);
 * every tag a condition names must be one of the organization, every
 * custom field too, its operator and value fitting the field's type (400
 * naming the condition otherwise).
 */
export const createSegment = async (
  deps: Pick<Deps, 'segments' | 'lists' | 'tags' | 'fields' | 'ids' | 'clock'>,
  orgId: string,
  input: CreateSegmentInput,
): Promise<SegmentView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun
    ? await deps.segments.get(orgId, id)
    : undefined;
  if (earlier) return view(earlier);
  // 1. The list, the tags and the fields exist in the organization.
  await requireList(deps, orgId, input.listId);
  await checkTags(deps, orgId, input.conditions);
  const { conditions, fieldIds } = await checkFieldConditions(
    deps,
    orgId,
    input.conditions,
  );
  // 2. The segment, counted on the organization (its list checked again),
  // holding the fields it names (each checked again: not deleted).
  const now = deps.clock.now().toISOString();
  const segment: Segment = {
    id,
    name: input.name,
    listId: input.listId,
    match: input.match,
    conditions,
    createdAt: now,
    updatedAt: now,
    usedBy: {},
  };
  await deps.segments.create(orgId, segment, fieldIds);
  return view(segment);
};

/** A page of segments, newest first (no counts: each costs a list read). */
export const listSegments = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<SegmentView>> => {
  const page = await deps.segments.page(orgId, request);
  return { total: page.total, items: page.items.map(view) };
};

/**
 * How many contacts of its list a segment matches, and how many of those
 * are subscribed: exact from the list's first `SEGMENT_SAMPLE` contacts
 * when it holds no more; else those contacts' shares scaled to the list's
 * counters (an estimate, `countsExact` false). Membership can change
 * without a write (a date passes), so it cannot be a kept counter; the
 * sample keeps the answer within a second whatever the list's size.
 */
export const countSegment = async (
  deps: Pick<Deps, 'segments' | 'lists'>,
  orgId: string,
  segment: Segment,
): Promise<{
  contactCount: number;
  subscribedCount: number;
  countsExact: boolean;
}> => {
  const [list, sample] = await Promise.all([
    deps.lists.get(orgId, segment.listId),
    deps.segments.sampleOfList(orgId, segment.listId, SEGMENT_SAMPLE),
  ]);
  let matched = 0;
  let matchedSubscribed = 0;
  let subscribed = 0;
  for (const contact of sample.contacts) {
    if (contact.status === 'subscribed') subscribed++;
    if (!matchesSegment(segment, contact)) continue;
    matched++;
    if (contact.status === 'subscribed') matchedSubscribed++;
  }
  if (sample.whole || !list) {
    return {
      contactCount: matched,
      subscribedCount: matchedSubscribed,
      countsExact: true,
    };
  }
  const scaled = (part: number, of: number, total: number) =>
    of === 0 ? 0 : Math.round((part / of) * total);
  return {
    contactCount: scaled(matched, sample.contacts.length, list.contactCount),
    subscribedCount: scaled(
      matchedSubscribed,
      subscribed,
      list.statusCounts.subscribed,
    ),
    countsExact: false,
  };
};

/** One segment with its live counts. */
export const getSegment = async (
  deps: Pick<Deps, 'segments' | 'lists'>,
  orgId: string,
  segmentId: string,
): Promise<SegmentWithCount> => {
  const segment = await requireSegment(deps, orgId, segmentId);
  return { ...view(segment), ...(await countSegment(deps, orgId, segment)) };
};

/**
 * The `updatedAt` of a write over a segment last written at `before`:
 * now, and always later than `before` (a millisecond more when the clock
 * says otherwise), so that two versions never share one and a write
 * conditional on the version read cannot pass over another.
 */
const laterThan = (before: string, now: Date): string =>
  new Date(Math.max(now.getTime(), Date.parse(before) + 1)).toISOString();

/**
 * Renames a segment or changes its match or conditions (all of them at
 * once: the array sent replaces the stored one, checked as on creation).
 * The list never changes.
 */
export const updateSegment = async (
  deps: Pick<Deps, 'segments' | 'tags' | 'fields' | 'clock'>,
  orgId: string,
  segmentId: string,
  input: UpdateSegmentInput,
): Promise<SegmentView> => {
  await requireSegment(deps, orgId, segmentId);
  let checked: Awaited<ReturnType<typeof checkFieldConditions>> | undefined;
  if (input.conditions) {
    await checkTags(deps, orgId, input.conditions);
    checked = await checkFieldConditions(deps, orgId, input.conditions);
  }
  // The write is conditional on the segment as read (the fields it holds
  // follow its conditions): another write meanwhile, and it applies the
  // change again over that one.
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = await requireSegment(deps, orgId, segmentId);
    const after: Segment = {
      ...before,
      name: input.name ?? before.name,
      match: input.match ?? before.match,
      conditions: checked?.conditions ?? before.conditions,
      updatedAt: laterThan(before.updatedAt, deps.clock.now()),
    };
    const fieldIds = checked?.fieldIds ?? new Map<string, string>();
    if (await deps.segments.update(orgId, before, after, fieldIds)) {
      return view(after);
    }
  }
  throw new ConflictError(
    'write.contended',
    `Segment ${segmentId} kept changing while it was updated; retry`,
  );
};

const inUse = (segment: Segment) => {
  const series = Object.entries(segment.usedBy)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, name]) => `"${name}" (${id})`);
  return new RuleViolationError(
    'segment.inUse',
    `Segment "${segment.name}" narrows these series: ${series.join(', ')}. Remove it from them (audienceSegmentId null) or delete them, then delete the segment.`,
  );
};

/** Deletes a segment; 400 `segment.inUse` naming each series that uses it. */
export const deleteSegment = async (
  deps: Pick<Deps, 'segments'>,
  orgId: string,
  segmentId: string,
): Promise<DeletedSegment> => {
  // A series may take or release the segment meanwhile: the delete is
  // conditional, and a refusal is explained from a fresh read.
  for (let attempt = 0; attempt < 3; attempt++) {
    const segment = await requireSegment(deps, orgId, segmentId);
    if (Object.keys(segment.usedBy).length) throw inUse(segment);
    if (await deps.segments.delete(orgId, segment)) return { id: segmentId };
  }
  throw new ConflictError(
    'write.contended',
    `Segment ${segmentId} kept changing while it was deleted; retry`,
  );
};
