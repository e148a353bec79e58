/**
 * Schemas of the template and rendering endpoints.
 */
import * as v from 'valibot';
import { Id } from '../http/schemas.ts';
import { HtmlContent, Subject } from '../rendering/content.schema.ts';
import { EmailAddress, lineText } from '../validation.ts';

/** Largest template name, in UTF-8 bytes. */
export const MAX_TEMPLATE_NAME_BYTES = 200;

const Name = v.pipe(
  lineText(MAX_TEMPLATE_NAME_BYTES),
  v.trim(),
  v.minLength(1, 'must not be empty'),
);

/** Body of POST /templates. */
export const CreateTemplateBody = v.object({
  name: Name,
  defaultSubject: Subject,
  content: HtmlContent,
});
export type CreateTemplateInput = v.InferOutput<typeof CreateTemplateBody>;

/** Body of PATCH /templates/{templateId}: at least one field. */
export const UpdateTemplateBody = v.pipe(
  v.object({
    name: v.optional(Name),
    defaultSubject: v.optional(Subject),
    content: v.optional(HtmlContent),
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
