/**
 * Schemas of the template and rendering endpoints.
 */
import * as v from 'valibot';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  EmailAddress,
  HtmlContent,
  Id,
  lineText,
  multilineText,
  requiredName,
  Subject,
} from '../validation.ts';

/** Longest template name, in characters (at most 4 bytes of UTF-8 each). */
export const MAX_TEMPLATE_NAME_CHARS = 100;

// A template's item holds name (400 bytes), subject (400) and content
// (300,000): far below DynamoDB's 400 KB for all its attributes together.
const Name = requiredName(MAX_TEMPLATE_NAME_CHARS);

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
    hasSomeField,
    'must change at least one of name, defaultSubject, content',
  ),
);
export type UpdateTemplateInput = v.InferOutput<typeof UpdateTemplateBody>;

/** Largest merge value of a preview or a test send, in UTF-8 bytes. */
export const MAX_MERGE_VALUE_BYTES = 10_000;

/**
 * The names no merge value may take: `fields` (the namespace of custom
 * fields, which the organization's fields fill), and `fields.` followed by
 * what no field key is (a field's value is named `fields.<key>`).
 */
const NOT_A_MERGE_NAME = /^fields(?:$|\.(?![a-z][a-z0-9_]{0,39}$))/;

/** The name of a merge value: one line, never in the fields' namespace but as `fields.<key>`. */
const MergeName = v.pipe(
  lineText(100),
  v.check(
    (name) => !NOT_A_MERGE_NAME.test(name),
    'must not be "fields" (the namespace of custom fields), and a name starting "fields." must end with a field key: lower-case letters, digits and "_", starting with a letter, 40 characters at most',
  ),
  inJsonSchema({ not: { pattern: NOT_A_MERGE_NAME.source } }),
);

/**
 * Merge values given for a preview or a test send: names one line, values
 * text without control characters (line breaks allowed: a value may fill
 * the HTML; one the subject uses is checked against it, see templates.ts).
 */
export const MergeValues = v.pipe(
  v.record(
    MergeName,
    v.union(
      [multilineText(MAX_MERGE_VALUE_BYTES), v.number(), v.boolean()],
      'must be a string, a number or a boolean',
    ),
  ),
  v.check(
    (values) => Object.keys(values).length <= 100,
    'must hold at most 100 values',
  ),
  inJsonSchema({ maxProperties: 100 }),
);

/**
 * A merge value the subject uses: one line, since the subject becomes a
 * mail header (a value with a line break is refused, naming it).
 */
export const SubjectMergeValue = lineText(MAX_MERGE_VALUE_BYTES);

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
