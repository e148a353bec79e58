/**
 * Routes of the `templates` group: templates, the preview and test sends.
 */
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import {
  CreateTemplateBody,
  RenderBody,
  TestSendBody,
  UpdateTemplateBody,
} from '../../shared/templates/template.schema.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  renderPreview,
  testSendTemplate,
  updateTemplate,
} from '../../shared/templates/templates.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

const TemplateParams = idParams('templateId');

/** Every route of the templates group. */
export const templateRoutes = [
  route({
    method: 'POST',
    path: '/templates',
    role: 'admin',
    summary:
      'Create a template (name, defaultSubject, content HTML); reports unsupportedTags',
    body: CreateTemplateBody,
    handle: async (deps, { caller, body }) =>
      created(await createTemplate(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/templates',
    role: 'member',
    summary: 'Templates of the organization, newest first, without HTML',
    query: PageQuery,
    handle: async (deps, { caller, query }) =>
      paginated(await listTemplates(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/templates/{templateId}',
    role: 'member',
    summary: 'One template with its HTML',
    params: TemplateParams,
    handle: async (deps, { caller, params }) =>
      ok(await getTemplate(deps, caller.orgId, params.templateId)),
  }),
  route({
    method: 'PATCH',
    path: '/templates/{templateId}',
    role: 'admin',
    summary: 'Change name, default subject or HTML',
    params: TemplateParams,
    body: UpdateTemplateBody,
    handle: async (deps, { caller, params, body }) =>
      ok(await updateTemplate(deps, caller.orgId, params.templateId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/templates/{templateId}',
    role: 'admin',
    summary: 'Delete a template (campaigns keep their own copy of its content)',
    params: TemplateParams,
    handle: async (deps, { caller, params }) =>
      ok(await deleteTemplate(deps, caller.orgId, params.templateId)),
  }),
  route({
    method: 'POST',
    path: '/templates/{templateId}/test-send',
    role: 'admin',
    summary:
      'Send one test email of the template to an address; writes nothing',
    params: TemplateParams,
    body: TestSendBody,
    handle: async (deps, { caller, params, body }) =>
      ok(await testSendTemplate(deps, caller.orgId, params.templateId, body)),
  }),
  route({
    method: 'POST',
    path: '/render',
    role: 'member',
    summary:
      'Render a template with merge values: subject, html, text, unknownVariables; 400 without {{unsubscribeUrl}}',
    body: RenderBody,
    handle: async (deps, { caller, body }) =>
      ok(await renderPreview(deps, caller.orgId, body)),
  }),
];
