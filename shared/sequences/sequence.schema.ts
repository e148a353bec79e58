/**
 * Request schemas of sequences and series: creation, edits of the head and
 * of a series' calendar, nodes and their families of fields.
 */
import * as v from 'valibot';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  HtmlContent,
  Id,
  InstantWithOffset,
  PageQuery,
  requiredName,
  Subject,
} from '../validation.ts';
import {
  MAX_WAIT_HOURS,
  MINUTES_PER_DAY,
  SEQUENCE_STATUSES,
  TRIGGER_TYPES,
} from './model.ts';

/** Longest name of a sequence or series, in characters (spec, Limits). */
export const MAX_SEQUENCE_NAME_CHARS = 100;

const Name = requiredName(MAX_SEQUENCE_NAME_CHARS);

const Status = v.pipe(
  v.picklist(SEQUENCE_STATUSES, 'must be active or paused'),
  v.description('active or paused; active needs a published version'),
);

const TopicRef = v.pipe(
  v.nullable(Id),
  v.description(
    'The topic: readers who declined it are left out of its steps; required by {{topicOptOutUrl}}; null: none',
  ),
);

/** Body of POST /sequences. */
export const CreateSequenceBody = v.object({
  name: Name,
  triggerType: v.pipe(
    v.picklist(
      TRIGGER_TYPES,
      'must be list_joined or tag_added (a fixed date is a series: POST /series)',
    ),
    v.description(
      'What enrols a contact: joining the list (list_joined) or receiving the tag (tag_added)',
    ),
  ),
  triggerTargetId: v.pipe(
    Id,
    v.description('The list id (list_joined) or the tag id (tag_added)'),
  ),
});
export type CreateSequenceInput = v.InferOutput<typeof CreateSequenceBody>;

/** Body of PATCH /sequences/{sequenceId}: at least one field. */
export const UpdateSequenceBody = v.pipe(
  v.object({
    name: v.optional(Name),
    status: v.optional(Status),
    topicId: v.optional(TopicRef),
  }),
  v.check(hasSomeField, 'must change at least one of name, status, topicId'),
);
export type UpdateSequenceInput = v.InferOutput<typeof UpdateSequenceBody>;

const StartsAt = v.pipe(
  InstantWithOffset,
  v.description(
    'Day 1 of the series: its first step goes out then (ISO 8601 with an explicit offset); required to publish, and in the future then',
  ),
);

const SegmentRef = v.pipe(
  v.nullable(Id),
  v.description('A segment of the list narrowing the audience; null: none'),
);
const TagRef = v.pipe(
  v.nullable(Id),
  v.description('A tag narrowing the audience further; null: none'),
);

/** Body of POST /series (a `triggerType` sent along changes nothing). */
export const CreateSeriesBody = v.object({
  name: Name,
  listId: v.pipe(Id, v.description('The list the series sends to')),
  startsAt: v.optional(StartsAt),
  audienceSegmentId: v.optional(SegmentRef, null),
  audienceTagId: v.optional(TagRef, null),
  topicId: v.optional(TopicRef, null),
});
export type CreateSeriesInput = v.InferOutput<typeof CreateSeriesBody>;

/** The fields of PATCH /series written on the open draft. */
export const CALENDAR_FIELDS = [
  'startsAt',
  'listId',
  'audienceSegmentId',
  'audienceTagId',
] as const;

/** Body of PATCH /series/{seriesId}: at least one field. */
export const UpdateSeriesBody = v.pipe(
  v.object({
    name: v.optional(Name),
    status: v.optional(Status),
    topicId: v.optional(TopicRef),
    startsAt: v.optional(v.nullable(StartsAt)),
    listId: v.optional(Id),
    audienceSegmentId: v.optional(SegmentRef),
    audienceTagId: v.optional(TagRef),
  }),
  v.check(
    hasSomeField,
    `must change at least one of name, status, topicId, ${CALENDAR_FIELDS.join(', ')}`,
  ),
);
export type UpdateSeriesInput = v.InferOutput<typeof UpdateSeriesBody>;

const WaitHours = v.pipe(
  v.number('must be a number of hours'),
  v.integer('must be a whole number of hours'),
  v.minValue(1, 'must be at least 1 hour'),
  v.maxValue(MAX_WAIT_HOURS, `must be at most ${MAX_WAIT_HOURS} hours`),
  v.description(`Hours to wait before the next step (1 to ${MAX_WAIT_HOURS})`),
);

/** Body of POST /sequences/{sequenceId}/versions/{versionId}/nodes. */
export const CreateNodeBody = v.variant(
  'type',
  [
    v.object({
      type: v.literal('send_email'),
      templateId: v.optional(
        v.pipe(
          Id,
          v.description(
            'Starts from this template: its content and default subject. Left out: a starter content with an unsubscribe link, and no subject',
          ),
        ),
      ),
    }),
    v.object({ type: v.literal('wait'), waitHours: WaitHours }),
  ],
  'must be send_email or wait',
);
export type CreateNodeInput = v.InferOutput<typeof CreateNodeBody>;

/** The families of node fields: one family per PATCH. */
export const NODE_FAMILIES = {
  message: ['subject', 'content'],
  timing: ['sendTimeMinutes'],
  wait: ['waitHours'],
} as const;

/** Body of PATCH …/nodes/{nodeId}: the fields of one family. */
export const UpdateNodeBody = v.pipe(
  v.object({
    subject: v.optional(Subject),
    content: v.optional(
      v.pipe(HtmlContent, v.description("The step's HTML (Liquid)")),
    ),
    sendTimeMinutes: v.optional(
      v.pipe(
        v.nullable(
          v.pipe(
            v.number('must be a number of minutes'),
            v.integer('must be a whole number of minutes'),
            v.minValue(0, 'must be at least 0 (midnight)'),
            v.maxValue(
              MINUTES_PER_DAY - 1,
              `must be at most ${MINUTES_PER_DAY - 1} (23:59)`,
            ),
          ),
        ),
        v.description(
          "Minutes from midnight in the organization's time zone (540 = 09:00): the step waits for the next such minute; null: as soon as the wait before it ends",
        ),
      ),
    ),
    waitHours: v.optional(WaitHours),
  }),
  v.check(
    hasSomeField,
    'must change one family of fields: {subject, content}, {sendTimeMinutes} or {waitHours}',
  ),
  // One family a call (refused by the service, naming the fields).
  inJsonSchema({
    oneOf: Object.values(NODE_FAMILIES).map((fields) =>
      fields.length === 1
        ? { required: fields }
        : { anyOf: fields.map((field) => ({ required: [field] })) },
    ),
  }),
);
export type UpdateNodeInput = v.InferOutput<typeof UpdateNodeBody>;

/** Query of GET /sequences and GET /series. */
export const SequenceListQuery = PageQuery;
