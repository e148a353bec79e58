/**
 * Routes of the `fields` group: the custom fields an organization defines
 * for its contacts.
 */

import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import {
  CreateFieldBody,
  UpdateFieldBody,
} from '../../shared/fields/field.schema.ts';
import {
  createField,
  DeletedField,
  deleteField,
  FieldView,
  getField,
  listFields,
  updateField,
} from '../../shared/fields/fields.ts';
import { MAX_FIELDS } from '../../shared/fields/model.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/** What the `fields` group's function may use. */
export const fieldBindings = [
  table({
    stores: [...PIPELINE_STORES, 'fields'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
] as const;

/** The deps of the `fields` group's function. */
export type FieldDeps = DepsOf<typeof fieldBindings>;

const route = routeFor<FieldDeps>({ scope: 'audience' });

const FieldParams = idParams('fieldId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What a field is (our design: the spec has none). */
const FIELDS = `A field is a value the organization keeps on its contacts besides their names: a plan, a company, a birthday. It has a \`key\` (lower-case letters, digits and \`_\`; the stable identifier templates name as \`{{ fields.<key> }}\`), a \`label\` for people, a \`type\` (\`text\`, \`number\`, \`date\`, \`boolean\`, \`option\`), the \`options\` of an option field, and an optional \`defaultValue\` a contact without a value shows. Fields belong to the organization, not to a list; an organization defines at most ${MAX_FIELDS}.`;

/** Every route of the fields group. */
export const fieldRoutes = [
  route({
    method: 'POST',
    path: '/fields',
    role: 'admin',
    summary: 'Define a custom field; a key taken answers 409',
    description: md(
      FIELDS,
      `Keys are unique in the organization: a taken key is 409 \`field.keyTaken\`. An option field needs \`options\` (1 to 100, no repeats) and other types take none; a \`defaultValue\` must fit the type (and be one of the options). Past ${MAX_FIELDS} fields: 400 \`field.limitReached\`.`,
    ),
    body: CreateFieldBody,
    responses: { 201: json(FieldView, 'The field, defined') },
    errors: [
      'field.keyTaken',
      'field.limitReached',
      'field.optionsRepeated',
      'field.defaultInvalid',
      'write.contended',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createField(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/fields',
    role: 'member',
    summary: 'Custom fields of the organization, newest first',
    description: FIELDS,
    query: PageQuery,
    responses: { 200: page(FieldView, 'A page of fields') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listFields(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/fields/{fieldId}',
    role: 'member',
    summary: 'One custom field',
    description: FIELDS,
    params: FieldParams,
    responses: { 200: json(FieldView, 'The field') },
    errors: ['field.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getField(deps, caller.orgId, params.fieldId)),
  }),
  route({
    method: 'PATCH',
    path: '/fields/{fieldId}',
    role: 'admin',
    summary: 'Relabel a field, add options, set or clear its default',
    description: md(
      'Changes `label`, adds `options` to an option field, sets `defaultValue` or clears it with null. The key and the type never change (templates and stored values name them): define a new field instead.',
      'Options may be added but never removed or renamed, since contacts hold them: 400 `field.optionsKept`. A default must fit the field as it will be: 400 `field.defaultInvalid`. A field changed by another request meanwhile: 409 `field.changed`.',
    ),
    params: FieldParams,
    body: UpdateFieldBody,
    responses: { 200: json(FieldView, 'The field, changed') },
    errors: [
      'field.notFound',
      'field.optionsKept',
      'field.optionsRepeated',
      'field.defaultInvalid',
      'field.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateField(deps, caller.orgId, params.fieldId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/fields/{fieldId}',
    role: 'admin',
    summary: 'Delete a custom field; its key is retired',
    description: md(
      'Deletes the field definition. Contacts keep the values they hold under its key for now (removing them is a later step of this extension), so the key is retired: a new field cannot take it (409 `field.keyTaken`).',
      'A field that the conditions of a segment name is kept, so that no segment silently widens its audience: 409 `field.inUse` naming each segment (name and id). Take the conditions out of them (or delete them) first.',
    ),
    params: FieldParams,
    responses: { 200: json(DeletedField, 'The field removed') },
    errors: ['field.notFound', 'field.inUse', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteField(deps, caller.orgId, params.fieldId)),
  }),
];
