/**
 * Schemas of the template and rendering endpoints.
 */
import * as v from 'valibot';
import { Id } from '../http/schemas.ts';
import { EmailAddress } from '../validation.ts';

/** Largest template HTML: a DynamoDB item holds at most 400 KB. */
export const MAX_CONTENT_BYTES = 300_000;

const Name = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'must be at most 100 characters'),
);

const Subject = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
);

const Content = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.check(
    (html) => Buffer.byteLength(html) <= MAX_CONTENT_BYTES,
    `must be at most ${MAX_CONTENT_BYTES} bytes`,
  ),
);

/** Body of POST /templates. */
export const CreateTemplateBody = v.object({
  name: Name,
  defaultSubject: Subject,
  content: Content,
});
export type CreateTemplateInput = v.InferOutput<typeof CreateTemplateBody>;

/** Body of PATCH /templates/{templateId}: at least one field. */
export const UpdateTemplateBody = v.pipe(
  v.object({
    name: v.optional(Name),
    defaultSubject: v.optional(Subject),
    content: v.optional(Content),
  }),
  v.check(
    (body) => Object.values(body).some((value) => value !== undefined),
    'must change at least one of name, defaultSubject, content',
  ),
);
export type UpdateTemplateInput = v.InferOutput<typeof UpdateTemplateBody>;

/** Merge values given for a preview or a test send. */
export const MergeValues = v.pipe(
  v.record(
    v.pipe(v.string(), v.maxLength(100)),
    v.union(
      [v.pipe(v.string(), v.maxLength(10_000)), v.number(), v.boolean()],
      'must be a string, a number or a boolean',
    ),
  ),
  v.check(
    (values) => Object.keys(values).length <= 100,
    'must hold at most 100 values',
  ),
);

/** Body of POST /render. */
export const RenderBody = v.object({
  templateId: Id,
  variables: v.optional(MergeValues, {}),
});

/** Body of POST /templates/{templateId}/test-send. */
export const TestSendBody = v.object({
  email: EmailAddress,
  variables: v.optional(MergeValues, {}),
});
