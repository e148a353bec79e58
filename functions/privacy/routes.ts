/**
 * Routes of the `privacy` group: a person's data on request (GDPR Art. 15
 * and 20): the export of everything the organization holds about one
 * address.
 */

import {
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { ok } from '../../shared/http/responses.ts';
import { json, routeFor } from '../../shared/http/route.ts';
import { ExportBody } from '../../shared/privacy/export.schema.ts';
import { exportPerson } from '../../shared/privacy/export.ts';
import { PersonExport } from '../../shared/privacy/export-document.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `privacy` group's function may use: the export only reads. */
export const privacyBindings = [
  table({
    stores: [...PIPELINE_STORES, 'tags', 'exportReader'],
    actions: [...PIPELINE_ACTIONS, 'dynamodb:Query'],
  }),
] as const;

/** The deps of the `privacy` group's function. */
export type PrivacyDeps = DepsOf<typeof privacyBindings>;

const route = routeFor<PrivacyDeps>();

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What an export holds (our design: the spec has none). */
const EXPORT = `A person is one address across the organization's lists. The export is one JSON document of everything the organization holds about it, read at the moment of the call (nothing is kept): \`contacts\` (one per list holding the address: names, status, custom fields, tags, the consent record of each sign-up through a hosted page — page, version, IP address, user agent, referrer, time, the wording shown — and the opt-in and confirmation instants and addresses), \`topics\` (the topics it declined), \`journeys\` (its journeys through sequences) and \`mail\` (each campaign sent to one of its contacts, series steps included, with what SES said of it: delivery, first open, first click and the links clicked, bounce, complaint, unsubscribe). Each part is ordered oldest first.`;

/** What an export costs, and its bound. */
const COST =
  "Cost: a Query page per 1 MB of the organization's lists, sequences and campaigns (projected), then keys read 100 a request: the address in each list, each sequence's enrolment of each of its contacts, and each started campaign to one of its lists (two keys: either layout of its recipients), half of those eventually consistent. An export larger than 5 MB (some 7,000 mails) answers 413 `export.tooLarge`.";

/** Every route of the privacy group. */
export const privacyRoutes = [
  route({
    method: 'POST',
    path: '/exports',
    role: 'admin',
    summary:
      'Export everything held about an address, across every list (GDPR access and portability)',
    description: md(
      EXPORT,
      'The address goes in the body, never in the URL, so that it stays out of access logs. The answer is 200 with the document: nothing is created or kept (a stored copy would be one more copy of the person to erase).',
      'An address the organization holds nothing about answers 404 `person.notFound`, exactly as an address only another organization holds (Authentication, rule 5).',
      COST,
    ),
    body: ExportBody,
    responses: { 200: json(PersonExport, 'Everything held about the address') },
    errors: ['person.notFound', 'export.tooLarge'],
    handle: async (deps, { caller, body }) =>
      ok(await exportPerson(deps, caller.orgId, { email: body.email })),
  }),
  route({
    method: 'GET',
    path: '/contacts/{contactId}/export',
    role: 'admin',
    summary:
      "Export everything held about a contact's address, across every list",
    description: md(
      EXPORT,
      "The contact names the address: the export is the address's, every list included, exactly as `POST /exports` with that address answers it.",
      'A contact of another organization answers 404 `contact.notFound`, as one that does not exist (Authentication, rule 5).',
      COST,
    ),
    params: idParams('contactId'),
    responses: { 200: json(PersonExport, 'Everything held about the address') },
    errors: ['contact.notFound', 'export.tooLarge'],
    handle: async (deps, { caller, params }) =>
      ok(
        await exportPerson(deps, caller.orgId, {
          contactId: params.contactId,
        }),
      ),
  }),
];
