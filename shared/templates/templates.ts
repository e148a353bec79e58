/**
 * Application logic of templates: CRUD, the preview (POST /render) and the
 * test send. Agnostic to how it is called and where data is stored.
 */

import * as v from 'valibot';
import {
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../errors.ts';
import type { Field } from '../fields/model.ts';
import { definitionsOf } from '../fields/values.ts';
import { composeMessage } from '../mail/compose.ts';
import { asTestMail, sendNow } from '../mail/send-now.ts';
import type { Page, PageRequest } from '../ports.ts';
import {
  checkRenders,
  type RenderCheckOptions,
} from '../rendering/check-renders.ts';
import { analyzeTemplate } from '../rendering/engine.ts';
import {
  FIELDS,
  MESSAGE_VARIABLES,
  unknownVariables,
} from '../rendering/variables.ts';
import { testSenderOf } from '../sending/sender.ts';
import { Timestamp, ViewId } from '../validation.ts';
import type { Template } from './model.ts';
import type { TemplatesDeps as Deps } from './ports.ts';
import {
  type CreateTemplateInput,
  SubjectMergeValue,
  type UpdateTemplateInput,
} from './template.schema.ts';

/** Constructs of the content that stay raw in the output. */
const UnsupportedTags = v.pipe(
  v.array(v.string()),
  v.description(
    "Constructs left raw in the output, each once, in order of appearance: other platforms' tags (Mailchimp's `*|FNAME|*`, Handlebars blocks, AMPscript) and Liquid tags we do not run (`include`, `render`, `layout`…)",
  ),
);

/** Variables of the template that no send fills. */
const UnknownVariables = v.pipe(
  v.array(v.string()),
  v.description(
    'Variables the subject or the content reads that no send fills (they render empty); a send fills `firstName`, `lastName`, `email`, `unsubscribeUrl`, `topicOptOutUrl`, `postalAddress`, `currentYear`, and `fields.<key>` for each custom field of the organization (see /fields): a key it does not define is listed as `fields.<key>`',
  ),
);

/** A template without its HTML (GET /templates rows). */
export const TemplateSummary = v.pipe(
  v.object({
    id: ViewId,
    name: v.string(),
    defaultSubject: v.pipe(
      v.string(),
      v.description(
        'The subject campaigns and steps created from the template start with (Liquid, one line)',
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('TemplateSummary'),
);
export type TemplateSummary = v.InferOutput<typeof TemplateSummary>;

/** A template as the API shows it, with its HTML and what its content uses. */
export const TemplateView = v.pipe(
  v.object({
    ...TemplateSummary.entries,
    content: v.pipe(
      v.string(),
      v.description('The HTML, with Liquid variables'),
    ),
    unsupportedTags: UnsupportedTags,
    unknownVariables: UnknownVariables,
  }),
  v.title('Template'),
);
export type TemplateView = v.InferOutput<typeof TemplateView>;

/** The answer of DELETE /templates/{templateId}. */
export const DeletedTemplate = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the template removed')),
  }),
  v.title('DeletedTemplate'),
);
export type DeletedTemplate = v.InferOutput<typeof DeletedTemplate>;

/**
 * Checks both parts of a template and reports on the content. The
 * organization's fields are read (one Query) only when a part reads a
 * field by its key: they say which keys are unknown.
 */
const analyze = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  template: Pick<Template, 'content' | 'defaultSubject'>,
) => {
  const subject = await analyzeTemplate(
    template.defaultSubject,
    'defaultSubject',
    'default subject',
  );
  const content = await analyzeTemplate(template.content);
  const fieldKeys = [...new Set([...subject.fieldKeys, ...content.fieldKeys])];
  const definitions =
    fieldKeys.length > 0 ? await definitionsOf(deps, orgId) : undefined;
  return {
    unsupportedTags: [
      ...new Set([...subject.unsupportedTags, ...content.unsupportedTags]),
    ],
    unknownVariables: unknownVariables(
      [...new Set([...subject.variables, ...content.variables])],
      MESSAGE_VARIABLES,
      { used: fieldKeys, defined: new Set(definitions?.keys()) },
    ),
    usesUnsubscribe: content.variables.includes('unsubscribeUrl'),
    subjectVariables: [
      ...subject.variables,
      ...subject.fieldKeys.map((key) => `${FIELDS}.${key}`),
    ],
    definitions,
  };
};

/**
 * Refuses merge values the subject uses that hold a line break or another
 * control character: 400 naming `variables.<name>`, before anything is
 * rendered or sent. (Whatever gets past, stored names included, is folded
 * to one line when the subject renders.)
 */
const checkSubjectValues = (
  subjectVariables: readonly string[],
  values: Record<string, unknown>,
) => {
  const details = subjectVariables
    .filter((name) => {
      const value = Object.hasOwn(values, name) ? values[name] : undefined;
      return typeof value === 'string' && !v.is(SubjectMergeValue, value);
    })
    .map((name) => ({
      field: `variables.${name}`,
      message:
        'is used by the subject: must not contain control characters or line breaks',
    }));
  if (details.length > 0) {
    const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
    throw new ValidationError(`Invalid request: ${summary}`, details);
  }
};

/**
 * How a template's parts are checked to render (`checkRenders`), after
 * `view` has analysed them: the errors name its `defaultSubject`.
 */
const ANALYSED_TEMPLATE: RenderCheckOptions = {
  subject: { field: 'defaultSubject', what: 'default subject' },
  analysed: true,
};

const view = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  template: Template,
): Promise<TemplateView> => {
  const { unsupportedTags, unknownVariables } = await analyze(
    deps,
    orgId,
    template,
  );
  return { ...template, unsupportedTags, unknownVariables };
};

const requireTemplate = async (
  deps: Pick<Deps, 'templates'>,
  orgId: string,
  templateId: string,
): Promise<Template> => {
  const template = await deps.templates.get(orgId, templateId);
  if (!template) {
    throw new NotFoundError('template.notFound', `No template ${templateId}`);
  }
  return template;
};

/**
 * Creates a template. A subject or content that does not parse, or does not
 * render with sample values, is a 400 naming it; nothing is stored then.
 */
export const createTemplate = async (
  deps: Pick<Deps, 'templates' | 'ids' | 'clock' | 'fields'>,
  orgId: string,
  input: CreateTemplateInput,
): Promise<TemplateView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun
    ? await deps.templates.get(orgId, id)
    : undefined;
  if (earlier) return view(deps, orgId, earlier);
  const now = deps.clock.now().toISOString();
  const template: Template = {
    id,
    ...input,
    createdAt: now,
    updatedAt: now,
  };
  const result = await view(deps, orgId, template);
  await checkRenders(
    { subject: template.defaultSubject, content: template.content },
    ANALYSED_TEMPLATE,
  );
  await deps.templates.create(orgId, template);
  return result;
};

/** One template with its HTML. */
export const getTemplate = async (
  deps: Pick<Deps, 'templates' | 'fields'>,
  orgId: string,
  templateId: string,
): Promise<TemplateView> =>
  view(deps, orgId, await requireTemplate(deps, orgId, templateId));

/** A page of templates, newest first, without HTML. */
export const listTemplates = (
  deps: Pick<Deps, 'templates'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<TemplateSummary>> => deps.templates.page(orgId, request);

/**
 * Changes name, default subject or HTML; a changed subject or HTML must
 * parse and render as on creation.
 */
export const updateTemplate = async (
  deps: Pick<Deps, 'templates' | 'clock' | 'fields'>,
  orgId: string,
  templateId: string,
  input: UpdateTemplateInput,
): Promise<TemplateView> => {
  const current = await requireTemplate(deps, orgId, templateId);
  const updated: Template = {
    ...current,
    ...Object.fromEntries(
      Object.entries(input).filter(([, value]) => value !== undefined),
    ),
    updatedAt: deps.clock.now().toISOString(),
  };
  const result = await view(deps, orgId, updated);
  await checkRenders(
    { subject: input.defaultSubject, content: input.content },
    ANALYSED_TEMPLATE,
  );
  await deps.templates.update(orgId, updated);
  return result;
};

/**
 * Deletes a template. Campaigns and sequence steps keep their own copy of
 * the content they were created from, so nothing else changes.
 */
export const deleteTemplate = async (
  deps: Pick<Deps, 'templates'>,
  orgId: string,
  templateId: string,
): Promise<DeletedTemplate> => {
  await deps.templates.delete(orgId, templateId);
  return { id: templateId };
};

/** The fields a preview read already, for the composer. */
const fieldsRead = (definitions: ReadonlyMap<string, Field> | undefined) =>
  definitions ? { fieldDefinitions: definitions } : {};

/**
 * The stand-in reader of previews and test sends: the names given, and no
 * field values (each field shows its default, unless `fields.<key>` is
 * given).
 */
const standIn = (email: string, variables: Record<string, unknown>) => ({
  id: 'test',
  email,
  firstName: typeof variables.firstName === 'string' ? variables.firstName : '',
  lastName: typeof variables.lastName === 'string' ? variables.lastName : '',
});

/** The rendered preview of POST /render. */
export const RenderedTemplate = v.pipe(
  v.object({
    subject: v.pipe(
      v.string(),
      v.description(
        'The default subject, rendered and folded to one line (line breaks and control characters become a space)',
      ),
    ),
    html: v.pipe(
      v.string(),
      v.description(
        'The HTML as a send would deliver it; its links lead to a test page and change nothing',
      ),
    ),
    text: v.pipe(
      v.string(),
      v.description('The plain-text part, derived from the HTML'),
    ),
    unknownVariables: UnknownVariables,
    unsupportedTags: UnsupportedTags,
  }),
  v.title('RenderedTemplate'),
);
export type RenderedTemplate = v.InferOutput<typeof RenderedTemplate>;

/**
 * Renders a template with merge values, as a send would (its links lead to
 * a test page). Writes nothing. A template without {{unsubscribeUrl}} is a
 * 400: no email may go out without a way to unsubscribe; so is a value the
 * subject uses that holds a line break (see `checkSubjectValues`).
 */
export const renderPreview = async (
  deps: Pick<
    Deps,
    'templates' | 'links' | 'endpoints' | 'clock' | 'organizations' | 'fields'
  >,
  orgId: string,
  input: { templateId: string; variables: Record<string, unknown> },
): Promise<RenderedTemplate> => {
  const template = await requireTemplate(deps, orgId, input.templateId);
  const analysis = await analyze(deps, orgId, template);
  checkSubjectValues(analysis.subjectVariables, input.variables);
  if (!analysis.usesUnsubscribe) {
    throw new RuleViolationError(
      'template.unsubscribeMissing',
      'The template has no {{unsubscribeUrl}}: every email must let its reader unsubscribe',
    );
  }
  const email =
    typeof input.variables.email === 'string'
      ? input.variables.email
      : 'reader@example.com';
  const postalAddress = (await deps.organizations.get(orgId))?.postalAddress;
  const message = await composeMessage(deps, {
    orgId,
    contact: standIn(email, input.variables),
    subject: template.defaultSubject,
    html: template.content,
    from: deps.endpoints.appFromAddress,
    ...(postalAddress ? { postalAddress } : {}),
    // A template has no topic of its own: preview its opt-out link too.
    topicId: 'test',
    test: true,
    variables: input.variables,
    ...fieldsRead(analysis.definitions),
  });
  return {
    subject: message.subject,
    html: message.html,
    text: message.text,
    unknownVariables: analysis.unknownVariables,
    unsupportedTags: analysis.unsupportedTags,
  };
};

/** What became of a test send of a template. */
export const TEST_SEND_STATUSES = [
  'sent',
  'blocked',
  'not_allowed',
  'send_refused',
] as const;

/** The answer of POST /templates/{templateId}/test-send. */
export const TestSendResult = v.pipe(
  v.object({
    status: v.pipe(
      v.picklist(TEST_SEND_STATUSES),
      v.description(
        '`sent`; `blocked`: sending is off application-wide; `not_allowed`: the organization is not on the sending allowlist; `send_refused`: the provider refused the send',
      ),
    ),
    to: v.pipe(v.string(), v.email(), v.description('The recipient')),
  }),
  v.title('TemplateTestSendResult'),
);
export type TestSendResult = v.InferOutput<typeof TestSendResult>;

/**
 * Sends one test email of a template to an address, From and Reply-To as
 * every send of the organization (see `senderOf`) but outside its tenant,
 * with "[Test]" before the subject. Writes nothing. Refused while
 * sending is off application-wide (blocked) or the organization is not on
 * the allowlist (not_allowed); a provider refusal answers send_refused.
 * A value the subject uses that holds a line break is a 400 naming it.
 */
export const testSendTemplate = async (
  deps: Pick<
    Deps,
    | 'templates'
    | 'links'
    | 'endpoints'
    | 'clock'
    | 'mailer'
    | 'appSettings'
    | 'organizations'
    | 'domains'
    | 'identities'
    | 'fields'
  >,
  orgId: string,
  templateId: string,
  input: { email: string; variables: Record<string, unknown> },
): Promise<TestSendResult> => {
  const template = await requireTemplate(deps, orgId, templateId);
  const analysis = await analyze(deps, orgId, template);
  checkSubjectValues(analysis.subjectVariables, input.variables);
  const to = input.email;
  if (!(await deps.appSettings.get()).sendingEnabled) {
    return { status: 'blocked', to };
  }
  const org = await deps.organizations.get(orgId);
  if (!org?.sendingAllowed) {
    return { status: 'not_allowed', to };
  }
  // The From and Reply-To of every send (effectiveSender), without the tenant.
  const { from, replyTo } = await testSenderOf(deps, orgId);
  const message = await composeMessage(deps, {
    orgId,
    contact: standIn(to, input.variables),
    subject: template.defaultSubject,
    html: template.content,
    from,
    ...(replyTo ? { replyTo } : {}),
    // Every marketing mail carries the legal mention, a test one too.
    ...(org.postalAddress ? { postalAddress: org.postalAddress } : {}),
    topicId: 'test',
    test: true,
    variables: input.variables,
    ...fieldsRead(analysis.definitions),
  });
  const status = await sendNow(deps, asTestMail(message, orgId), {
    refused: 'Test send refused by the provider',
    orgId,
  });
  return { status, to };
};
