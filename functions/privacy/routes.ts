/**
 * Routes of the `privacy` group: a person's rights over their data (GDPR
 * Art. 15, 17 and 20): the export of everything the organization holds
 * about one address, its erasure, and the record of erasures.
 */

import {
  addressKey,
  type DepsOf,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  scheduler,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  erasePerson,
  getErasure,
  listErasures,
} from '../../shared/privacy/erase.ts';
import {
  EraseBody,
  ErasureView,
  erasureView,
} from '../../shared/privacy/erasure.schema.ts';
import { ExportBody } from '../../shared/privacy/export.schema.ts';
import { exportPerson } from '../../shared/privacy/export.ts';
import { PersonExport } from '../../shared/privacy/export-document.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/**
 * What the `privacy` group's function may use: the export reads; an
 * erasure deletes and strips what the address touched across the areas,
 * cancels pending journey steps, and records itself.
 */
export const privacyBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'tags',
      'exportReader',
      'erasures',
      'activity',
      'contacts',
      'delivery',
      'topics',
      'sequences',
      'enrolments',
      'campaigns',
      'sends',
      'signupPages',
      'signupLimits',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  scheduler(STEPS_QUEUE),
  addressKey,
] as const;

/** The deps of the `privacy` group's function. */
export type PrivacyDeps = DepsOf<typeof privacyBindings>;

const route = routeFor<PrivacyDeps>({ scope: 'audience' });

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What an export holds (our design: the spec has none). */
const EXPORT = `A person is one address across the organization's lists. The export is one JSON document of everything the organization holds about it, read at the moment of the call (nothing is kept): \`contacts\` (one per list holding the address: names, status, custom fields, tags, the consent record of each sign-up through a hosted page — page, version, IP address, user agent, referrer, time, the wording shown — and the opt-in and confirmation instants and addresses), \`topics\` (the topics it declined), \`journeys\` (its journeys through sequences) \`mail\` (each campaign sent to one of its contacts, series steps included, with what SES said of it: delivery, first open, first click and the links clicked, bounce, complaint, unsubscribe), \`activity\` (each contact's whole activity, newest first) and \`suppression\` (why the address is suppressed, or null). The lists are oldest first, the activity newest first.`;

/** What an export costs, and its bound. */
const COST =
  "Cost: a Query page per 1 MB of the organization's lists, sequences and campaigns (projected), then keys read 100 a request: the address in each list, each sequence's enrolment of each of its contacts, and each started campaign to one of its lists (two keys: either layout of its recipients), half of those eventually consistent. An export larger than 5 MB (some 7,000 mails) answers 413 `export.tooLarge`.";

/** What an erasure does (our design: the spec has none). */
const ERASE = `A person is one address across the organization's lists. An erasure deletes everything the organization holds under it: each contact (names, custom fields, consent records, tags — every list, tag and topic counter moving with it), its topic opt-outs, its journeys through sequences (their pending steps cancelled), the sign-up form's counters and marks, and the address on the recipient records of the campaigns sent to it. What must survive survives without the address: the suppression, kept under a keyed hash of the address, so a later import or add of the same address is never mailed (an address that had none gets one, reason \`erased\`); the campaigns' statistics, as counts; and this erasure's own record (who erased, when, how much — never the person), listed by \`GET /erasures\`. Idempotent: erasing an address again completes an erasure cut short.`;

/** When an erasure must wait. */
const ERASE_RETRY =
  'A campaign send walking the list at exactly this address right now answers 409 `erasure.sendRunning` before anything is erased: retry a minute later.';

/** What the erasure records are. */
const ERASURES =
  'Each erasure leaves one record: when, which API key (and its user), how the person was named (`contact` or `email`), and how many contacts, journeys, topic opt-outs and items it erased. The record never holds the address or the names: it proves the erasure happened, not whom it was about.';

/** Every route of the privacy group. */
export const privacyRoutes = [
  route({
    method: 'POST',
    path: '/exports',
    role: 'admin',
    // A read: its answer is the person's data, kept nowhere (decision 0051).
    readOnly: true,
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
  route({
    method: 'POST',
    path: '/erasures',
    role: 'admin',
    summary:
      'Erase an address from every list of the organization (GDPR erasure)',
    description: md(
      ERASE,
      'The address goes in the body, never in the URL, so that it stays out of access logs. An address the organization holds nothing about (no contact, no declined topic, no suppression) answers 404 `person.notFound`, exactly as an address only another organization holds (Authentication, rule 5); an address erased before is still held (its suppression stays): erasing it again completes an erasure cut short.',

      ERASE_RETRY,
    ),
    body: EraseBody,
    responses: { 201: json(ErasureView, 'The erasure, done and recorded') },
    errors: [
      'person.notFound',
      'erasure.sendRunning',
      'contact.changed',
      'write.contended',
    ],
    handle: async (deps, { caller, body }) =>
      created(
        erasureView(await erasePerson(deps, caller, { email: body.email })),
      ),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/erase',
    role: 'admin',
    summary:
      "Erase a contact's address from every list of the organization (GDPR erasure)",
    description: md(
      ERASE,
      'The contact names the address: its address is erased in every list, exactly as `POST /erasures` with that address. A contact of another organization answers 404 `contact.notFound`, as one that does not exist (Authentication, rule 5); so does a contact already erased (erase its address again with `POST /erasures` to complete an erasure cut short).',
      ERASE_RETRY,
    ),
    params: idParams('contactId'),
    responses: { 201: json(ErasureView, 'The erasure, done and recorded') },
    errors: [
      'contact.notFound',
      'erasure.sendRunning',
      'contact.changed',
      'write.contended',
    ],
    handle: async (deps, { caller, params }) =>
      created(
        erasureView(
          await erasePerson(deps, caller, { contactId: params.contactId }),
        ),
      ),
  }),
  route({
    method: 'GET',
    path: '/erasures',
    role: 'admin',
    summary: "The organization's erasures, newest first (its audit record)",
    description: ERASURES,
    query: PageQuery,
    responses: { 200: page(ErasureView, 'A page of erasures') },
    errors: [],
    handle: async (deps, { caller, query }) => {
      const found = await listErasures(deps, caller.orgId, query);
      return paginated(
        { items: found.items.map(erasureView), total: found.total },
        query,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/erasures/{erasureId}',
    role: 'admin',
    summary: 'One erasure of the organization',
    description: ERASURES,
    params: idParams('erasureId'),
    responses: { 200: json(ErasureView, 'The erasure') },
    errors: ['erasure.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(erasureView(await getErasure(deps, caller.orgId, params.erasureId))),
  }),
];
