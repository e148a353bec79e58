/**
 * Schemas of the topic endpoints.
 */
import * as v from 'valibot';
import { hasSomeField } from '../schema-notes.ts';
import { Id, multilineText, requiredName } from '../validation.ts';

const Name = requiredName(100);

const Description = v.pipe(
  multilineText(2_000),
  v.trim(),
  v.maxLength(500, 'must be at most 500 characters'),
);

/** Body of POST /topics. */
export const CreateTopicBody = v.object({
  name: Name,
  description: v.optional(Description),
});
export type CreateTopicInput = v.InferOutput<typeof CreateTopicBody>;

/** Body of PATCH /topics/{topicId}: null or "" clears the description. */
export const UpdateTopicBody = v.pipe(
  v.object({
    name: v.optional(Name),
    description: v.optional(v.nullable(Description)),
  }),
  v.check(hasSomeField, 'must change at least one of name, description'),
);
export type UpdateTopicInput = v.InferOutput<typeof UpdateTopicBody>;

/** Body of POST /topics/{topicId}/opt-outs. */
export const OptOutBody = v.object({ contactId: Id });
