/**
 * Routes of the `templates` group: templates, the preview and test sends.
 */
import {
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  CreateTemplateBody,
  RenderBody,
  TestSendBody,
  UpdateTemplateBody,
} from '../../shared/templates/template.schema.ts';
import {
  createTemplate,
  DeletedTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  RenderedTemplate,
  renderPreview,
  TemplateSummary,
  TemplateView,
  TestSendResult,
  testSendTemplate,
  updateTemplate,
} from '../../shared/templates/templates.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** What the `templates` group's function may use. */
export const templateBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'templates',
      'identities',
      'domains',
      // Which keys a template reads are unknown; what previews merge.
      'fields',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
  // Test sends; previews sign (test) links.
  mail,
  linkSecret,
  endpoints,
] as const;

/** The deps of the `templates` group's function. */
export type TemplateDeps = DepsOf<typeof templateBindings>;

const route = routeFor<TemplateDeps>({ scope: 'campaigns' });

const TemplateParams = idParams('templateId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** How a subject or content is checked wherever it is set. */
const CONTENT_CHECKS =
  "The subject and the content are Liquid templates. One that does not parse is 400 `template.invalid` naming the field (`defaultSubject` or `content`); one past the engine's limits (more than 5,000 tags and outputs, or 30,000 characters of them), or that does not render with sample values (a loop past the render limit, an output over 1 MB of HTML or 2,000 bytes of subject), is a 400 naming it too; nothing is stored then. Limits are in UTF-8 bytes: name 100 characters and 400 bytes, subject 400 bytes, content 300,000 bytes.";

/** What the answer reports about the content. */
const CONTENT_REPORT =
  "`unsupportedTags` lists the constructs left raw in the output (other platforms' tags such as Mailchimp's `*|FNAME|*`, Handlebars blocks, AMPscript, and Liquid tags we do not run such as `include`); `unknownVariables` the variables no send fills (they render empty), a custom field the organization does not define (or no longer does) as `fields.<key>`. A template reading an unknown variable is saved all the same.";

/** How merge values of a preview or a test send are checked. */
const MERGE_VALUES =
  '`variables` (optional) holds at most 100 merge values, each a string (at most 10,000 bytes), a number or a boolean; a string the subject uses must be one line, otherwise 400 naming `variables.<name>` before anything is rendered. Links (`{{unsubscribeUrl}}`, `{{topicOptOutUrl}}`) cannot be overridden and lead to a test page that changes nothing (a template has no topic of its own: its opt-out link is a test link too). A merge value that makes the content fail to render (a loop past the render limit) is 400 `template.invalid`; one that makes the output too large is a 400 naming the field. Custom fields (`{{ fields.<key> }}`) show what a contact without values gets, each field its `defaultValue` or nothing; a value named `fields.<key>` (`{"fields.plan": "pro"}`) fills one instead. `fields` alone is the namespace, not a value, and a `fields.` name must end with a field key: otherwise 400 naming `variables.<name>`.';

/** Every route of the templates group. */
export const templateRoutes = [
  route({
    method: 'POST',
    path: '/templates',
    role: 'admin',
    summary:
      'Create a template (name, defaultSubject, content HTML); reports unsupportedTags',
    description: md(
      'Creates a template from `name`, `defaultSubject` and `content` (HTML). The answer carries its `id` and `unsupportedTags`, the constructs still raw in the HTML, as the spec requires; ours is the whole template, as GET /templates/{templateId} reads it.',
      CONTENT_REPORT,
      CONTENT_CHECKS,
      'Template names need not be unique.',
    ),
    body: CreateTemplateBody,
    responses: { 201: json(TemplateView, 'The template, created') },
    errors: ['template.invalid'],
    handle: async (deps, { caller, body }) =>
      created(await createTemplate(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/templates',
    role: 'member',
    summary: 'Templates of the organization, newest first, without HTML',
    description:
      'Every template of the organization, newest first, paginated; the rows carry no HTML (read one template for its `content`).',
    query: PageQuery,
    responses: { 200: page(TemplateSummary, 'A page of templates') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listTemplates(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/templates/{templateId}',
    role: 'member',
    summary: 'One template with its HTML',
    description: md(
      'One template with its HTML. A template of another organization answers 404, as one that does not exist.',
      CONTENT_REPORT,
    ),
    params: TemplateParams,
    responses: { 200: json(TemplateView, 'The template') },
    errors: ['template.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getTemplate(deps, caller.orgId, params.templateId)),
  }),
  route({
    method: 'PATCH',
    path: '/templates/{templateId}',
    role: 'admin',
    summary: 'Change name, default subject or HTML',
    description: md(
      'Changes `name`, `defaultSubject` or `content`; at least one of them, a field left out is unchanged. Campaigns and sequence steps created from the template keep their own copy of its content: they do not change.',
      CONTENT_CHECKS,
      'The answer is the template after the change, with its `unsupportedTags` and `unknownVariables`.',
    ),
    params: TemplateParams,
    body: UpdateTemplateBody,
    responses: { 200: json(TemplateView, 'The template, after the change') },
    errors: ['template.notFound', 'template.invalid'],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateTemplate(deps, caller.orgId, params.templateId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/templates/{templateId}',
    role: 'admin',
    summary: 'Delete a template (campaigns keep their own copy of its content)',
    description:
      'Deletes the template and answers its `id`. Campaigns and sequence steps keep their own copy of the content they were created from, so nothing else changes.',
    params: TemplateParams,
    responses: { 200: json(DeletedTemplate, 'The id of the template deleted') },
    errors: ['template.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteTemplate(deps, caller.orgId, params.templateId)),
  }),
  route({
    method: 'POST',
    path: '/templates/{templateId}/test-send',
    role: 'admin',
    summary:
      'Send one test email of the template to an address; writes nothing',
    description: md(
      'Sends one test email of the template to `email`, with "[Test] " before its subject, and writes nothing. From and Reply-To are those of every send of the organization (the default identity once its domain is verified, otherwise the application address with the default address as Reply-To).',
      'Instead of failing, it answers a `status`: `sent`; `blocked` while sending is switched off application-wide; `not_allowed` while the organization is not on the sending allowlist; `send_refused` when the provider refuses the send. The spec leaves the status of a successful test unstated: ours is `sent`, as for the opt-in test send.',
      MERGE_VALUES,
    ),
    params: TemplateParams,
    body: TestSendBody,
    responses: { 200: json(TestSendResult, 'What became of the test email') },
    errors: ['template.notFound', 'template.invalid'],
    handle: async (deps, { caller, params, body }) =>
      ok(await testSendTemplate(deps, caller.orgId, params.templateId, body)),
  }),
  route({
    method: 'POST',
    path: '/render',
    role: 'member',
    readOnly: true,
    summary:
      'Render a template with merge values: subject, html, text, unknownVariables; 400 without {{unsubscribeUrl}}',
    description: md(
      'Renders the template `templateId` with merge values as a send would, and writes nothing; every role may call it. The answer holds the rendered `subject` (one line), `html` and `text`, and `unknownVariables` and `unsupportedTags` as on the template.',
      'It answers 400 `template.unsubscribeMissing` when the HTML has no unsubscribe link (`{{unsubscribeUrl}}`): no email may go out without a way to unsubscribe.',
      MERGE_VALUES,
    ),
    body: RenderBody,
    responses: { 200: json(RenderedTemplate, 'The rendered preview') },
    errors: [
      'template.notFound',
      'template.unsubscribeMissing',
      'template.invalid',
    ],
    handle: async (deps, { caller, body }) =>
      ok(await renderPreview(deps, caller.orgId, body)),
  }),
];
