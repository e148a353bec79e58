/**
 * Routes of the `contacts` group: contacts of lists, single adds with
 * double opt-in, the bulk import, subscription status, contact tags and
 * each contact's activity.
 */

import * as v from 'valibot';
import {
  ActivityQuery,
  ActivityView,
  listActivity,
} from '../../shared/activity/listing.ts';
import {
  ImportReport,
  importContacts,
} from '../../shared/audience/bulk-import.ts';
import {
  AddContactBody,
  BulkImportBody,
  TagBody,
  UpdateContactBody,
} from '../../shared/audience/contact.schema.ts';
import { ContactView } from '../../shared/audience/contact-view.ts';
import {
  AddedContact,
  addContact,
  getContact,
  resubscribeContact,
  unsubscribeContact,
  updateContact,
} from '../../shared/audience/contacts.ts';
import {
  TagContactResult,
  tagContact,
  UntagContactResult,
  untagContact,
} from '../../shared/audience/tags.ts';
import {
  addressKey,
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  ContactListingQuery,
  listContactsOf,
} from '../../shared/segments/segment-contacts.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `contacts` group's function may use. */
export const contactBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'lists',
      'contacts',
      'activity',
      'tags',
      'segments',
      'identities',
      'domains',
      'campaignReferences',
      'delivery',
      'optinSettings',
      'topics',
      'fields',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  // The confirmation email: its link, and the readiness guards it passes.
  mail,
  linkSecret,
  sendingStatus,
  endpoints,
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `contacts` group's function. */
export type ContactDeps = DepsOf<typeof contactBindings>;

const route = routeFor<ContactDeps>({ scope: 'audience' });

const ContactParams = idParams('contactId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** Authentication rule 5, for a contact named in the path. */
const CONTACT_TENANCY =
  'A contact of another organization answers 404 `contact.notFound`, as one that does not exist (Authentication, rule 5).';

/** The status rules every status change follows (our decisions). */
const STATUS_RULES =
  'Status rules (PATCH, unsubscribe, resubscribe and the confirmation link share them): nothing sets `pending` by hand (400 `contact.pendingIsSetByOptin`); a bounced or complained address cannot be subscribed again (409 `contact.cannotResubscribe`); an unsubscribed contact whose address is on the suppression list is not subscribed while it is (409 `contact.suppressed`; `DELETE /suppressions/{email}` lifts it); a pending contact becomes subscribed only by its confirmation link (409 `contact.awaitingConfirmation`); unsubscribing sets `unsubscribedAt`; the first time a contact becomes subscribed sets `joinedAt`, and only then does the list-joined automation hook fire.';

/** How a change of one contact is stored. */
const CONTACT_WRITE =
  'The change is one conditional write, retried when it races another change of the contact: 409 `contact.changed` if it keeps losing, 404 `audience.targetGone` if the list or a tag of the change was deleted meanwhile.';

/** The tag cap (our decision). */
const TAG_CAP =
  'A contact carries at most 50 tags: a call that would bring it past 50 answers 400 naming the field, before anything is written (no new tag is created).';

/** Every route of the contacts group. */
export const contactRoutes = [
  route({
    method: 'GET',
    path: '/contacts',
    role: 'member',
    summary:
      'Contacts of a list, by email; filters: status, tagId, search (email and names), segmentId',
    description: md(
      'The contacts of one list, sorted by email, paginated (`page` from 1, `limit` 1 to 100, default 20). A contact belongs to one list: the same email in two lists is two contacts, each with its own status.',
      [
        '- `listId` (required unless `segmentId` is given): the list; one of another organization answers 404 `list.notFound`, as an unknown one.',
        '- `status`: one of `pending`, `subscribed`, `unsubscribed`, `bounced`, `complained`.',
        '- `tagId`: contacts carrying this tag. A tag of another organization matches nothing (an empty page, exactly as an unknown id), never a 404.',
        '- `search`: a case-insensitive substring of the email, the first name or the last name (1 to 100 characters).',
        "- `segmentId`: the contacts of the segment's list that it matches; `listId` may then be left out, and one that is not the segment's list answers 400 `segment.listMismatch`. A segment of another organization answers 404 `segment.notFound`.",
      ].join('\n'),
      'Filters combine (AND). Without `tagId`, `search` and `segmentId` the total comes from the list’s counters; with them, the matches are counted. With `search` or `segmentId` (or `tagId` with `status`) a call reads at most 5,000 contacts: past them `pagination.totalExact` is false and `nextCursor` reads on.',
      'Page numbers read the contacts before the page again (page 250 reads 5,000 contacts). To walk a list, follow `pagination.nextCursor` instead: pass it as `cursor` (with the same filters and `limit`; other ones answer 400 naming `cursor`) and the next page starts where the last one ended, at the cost of that page alone; `pagination.page` then says which page it is, and `nextCursor` is null on the last page. With `cursor`, `page` is ignored.',
    ),
    query: ContactListingQuery,
    responses: { 200: page(ContactView, 'A page of contacts, by email') },
    errors: ['list.notFound', 'segment.notFound', 'segment.listMismatch'],
    handle: async (deps, { caller, query }) =>
      paginated(await listContactsOf(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/contacts/{contactId}',
    role: 'member',
    summary: 'One contact with its tags',
    description: md(
      'One contact, its tags named (`{id, name}`). Every field is present; one not set is null.',
      CONTACT_TENANCY,
    ),
    params: ContactParams,
    responses: { 200: json(ContactView, 'The contact') },
    errors: ['contact.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'GET',
    path: '/contacts/{contactId}/activity',
    role: 'member',
    summary:
      'What happened to a contact, newest first: its subscription, tags and field values, and each email sent to it and what became of it',
    description: md(
      'The events of one contact, newest first, walked by cursor (`limit` 1 to 100, default 20). Events of the contact itself, from its every write (an API call, a bulk import, a hosted sign-up page, the confirmation link, an unsubscribe link or a mail client’s one-click, a bounce or complaint SES reported; `via` says which): `subscribed`, `signed_up`, `confirmed` (with the consent record it confirmed), `unsubscribed`, `suppressed`, `tagged`, `untagged`, `fields_changed` (custom fields, old and new values). Events of each email sent to it (a campaign, a sequence or series step, a confirmation; `message` names it by ids), as SES reports them: `sent`, `delivered`, `delayed`, `rejected`, `opened`, `clicked` (which link), `bounced`, `complained`.',
      'Events follow the writes by a second or so (they are read from the table’s change stream and from SES’s events) and are kept 400 days. No event holds the contact’s email address (a link that merged it reads `[email]`).',
      'Follow `pagination.nextCursor`: pass it as `cursor` (with the same `limit`; another answers 400 naming `cursor`) for the next page, which costs that page alone. No total is counted: `total` counts the events up to this page and `totalExact` is true on the last one, where `nextCursor` is null. A full page may be followed by an empty last one.',
      CONTACT_TENANCY,
    ),
    params: ContactParams,
    query: ActivityQuery,
    responses: {
      200: page(ActivityView, 'A page of the contact’s events, newest first'),
    },
    errors: ['contact.notFound'],
    handle: async (deps, { caller, params, query }) =>
      paginated(
        await listActivity(deps, caller.orgId, params.contactId, query),
        { page: 1, limit: query.limit },
      ),
  }),
  route({
    method: 'PATCH',
    path: '/contacts/{contactId}',
    role: 'admin',
    summary: 'Change first name, last name (null clears) or status',
    description: md(
      'Changes the first name, the last name or the status; at least one of them (400 otherwise). A field left out is unchanged; a name sent as null or `""` is cleared.',
      STATUS_RULES,
      CONTACT_WRITE,
      CONTACT_TENANCY,
      'The spec leaves the answer unstated: ours is the contact after the change.',
    ),
    params: ContactParams,
    body: UpdateContactBody,
    responses: { 200: json(ContactView, 'The contact, after the change') },
    errors: [
      'contact.notFound',
      'fields.invalid',
      'contact.pendingIsSetByOptin',
      'contact.cannotResubscribe',
      'contact.suppressed',
      'contact.awaitingConfirmation',
      'contact.changed',
      'audience.targetGone',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateContact(deps, caller.orgId, params.contactId, body)),
  }),
  route({
    method: 'POST',
    path: '/lists/{listId}/contacts',
    role: 'admin',
    summary:
      'Add or upsert one contact; double opt-in sends a confirmation email, otherwise the contact joins at once',
    description: md(
      'Adds a contact to the list, or completes the contact of that email (compared after trimming and lower-casing). Unlike a bulk import this call has effects: it sends the confirmation email and fires the automation hooks (a first subscription, each new tag).',
      [
        '- Double opt-in applies when the organization requires it (`optin.required`: then `doubleOptIn: false` has no effect) or when the body says `doubleOptIn: true`. The contact is `pending` and a confirmation email goes out, signed by the default identity (Settings, rule 5), with a link that lasts 7 days, works once, and of which only the latest sent confirms.',
        '- Otherwise the contact is `subscribed` at once: the caller vouches for consent. This also subscribes an existing pending contact.',
        '- An existing contact keeps its status (except a pending one, above): its names are completed and its tags added; a pending one under double opt-in gets a new link.',
        '- `tags` are names, matched case-insensitively, created in the organization when missing.',
        "- An address on the organization's suppression list (it bounced for good, complained, was put there by hand or its person erased: `GET /suppressions/{email}`) is never subscribed and gets no email: the contact is stored (or kept) with the suppression's status — `bounced`, `complained`, else `unsubscribed` — as a bulk import stores it.",
      ].join('\n'),
      `Answers 201 when the contact was created, 200 when it existed. \`confirmation\` says what happened to the confirmation email: it is decided after the contact is stored, so a confirmation that cannot go out (\`blocked\`, with the blockers, or \`failed\`, with its reason) is part of the success, never an error; adding the contact again later sends a new link. ${TAG_CAP.replace('the field', '`tags`')}`,
      'A list of another organization answers 404 `list.notFound`, as an unknown one. The contact is stored by one conditional write, retried on a race: 409 `contact.changed` if it keeps losing, 404 `audience.targetGone` if the list or a tag was deleted meanwhile.',
    ),
    params: idParams('listId'),
    body: AddContactBody,
    responses: {
      201: json(AddedContact, 'The contact, created, and its confirmation'),
      200: json(AddedContact, 'The contact, completed, and its confirmation'),
    },
    errors: [
      'list.notFound',
      'fields.invalid',
      'contact.suppressed',
      'contact.changed',
      'audience.targetGone',
      'organization.notFound',
      'write.contended',
    ],
    handle: async (deps, { caller, params, body }) => {
      const result = await addContact(deps, caller.orgId, params.listId, body);
      const data = { ...result.contact, confirmation: result.confirmation };
      return result.created ? created(data) : ok(data);
    },
  }),
  route({
    method: 'POST',
    path: '/lists/{listId}/contacts/bulk',
    role: 'admin',
    summary:
      'Upsert up to 500 contacts; sends nothing, starts no automation; reports line by line',
    description: md(
      'Upserts up to 500 contacts by email within the list. Each entry takes `email` (required), `firstName` and `lastName` (up to 100 characters), `tags` (names, created in the organization if missing), `status` (applied on creation only; `subscribed` by default), and the consent fields `optinAt`, `confirmedAt` (ISO dates) and `optinIp`, `confirmedIp` (IP addresses). An entry with `doubleOptIn` (any value) is refused.',
      [
        '1. An import sends nothing, queues nothing and starts no automation: no confirmation email, no sequence enrolment, even for subscribed lines or added tags.',
        '2. Consent fields that are omitted keep their stored value; provided ones are written.',
        '3. An existing contact keeps its status; such a line counts as updated.',
        '4. One bad line rejects only that line; there is no global transaction.',
        '5. More than 500 entries: 413 `import.tooLarge`, nothing written, the message names the limit.',
      ].join('\n'),
      'Our decisions: lines of the same email apply one after the other (the first creates or updates the contact, each later one updates it and counts as updated); a line that would bring the import past 100 distinct tag names, or its contact past 50 tags, is rejected with its reason; a line whose contact kept changing while the import ran is rejected asking to retry it.',
      'The report: `total` = `created` + `updated` + `rejected`, and `errors` naming each refused line by its index. 400 when `contacts` is missing or not an array; a list of another organization answers 404 `list.notFound`, as an unknown one; 404 `audience.targetGone` if the list or a tag was deleted while the import ran.',
    ),
    params: idParams('listId'),
    body: BulkImportBody,
    responses: { 200: json(ImportReport, 'The report, line by line') },
    errors: [
      'list.notFound',
      'import.tooLarge',
      'audience.targetGone',
      'write.contended',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(
        await importContacts(deps, caller.orgId, params.listId, body.contacts),
      ),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/unsubscribe',
    role: 'admin',
    summary: 'Unsubscribe a contact (idempotent)',
    description: md(
      'Unsubscribes the contact: status `unsubscribed`, `unsubscribedAt` set. Idempotent: an unsubscribed contact is answered as it is. A pending contact may be unsubscribed.',
      CONTACT_WRITE,
      CONTACT_TENANCY,
      'The spec leaves the answer unstated: ours is the contact after the change.',
    ),
    params: ContactParams,
    responses: { 200: json(ContactView, 'The contact, unsubscribed') },
    errors: ['contact.notFound', 'contact.changed', 'audience.targetGone'],
    handle: async (deps, { caller, params }) =>
      ok(await unsubscribeContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/resubscribe',
    role: 'admin',
    summary: 'Subscribe an unsubscribed contact again',
    description: md(
      'Brings an unsubscribed contact back to `subscribed`; a subscribed contact is answered as it is. `joinedAt` keeps the first subscription, so the list-joined hook fires only for a contact never subscribed before.',
      "Refused with 409: a pending contact must confirm through its link (`contact.awaitingConfirmation`), a bounced or complained address cannot come back (`contact.cannotResubscribe`), and an address on the organization's suppression list is not subscribed while it is (`contact.suppressed`).",
      CONTACT_WRITE,
      CONTACT_TENANCY,
      'The spec leaves the answer unstated: ours is the contact after the change.',
    ),
    params: ContactParams,
    responses: { 200: json(ContactView, 'The contact, subscribed') },
    errors: [
      'contact.notFound',
      'contact.awaitingConfirmation',
      'contact.cannotResubscribe',
      'contact.suppressed',
      'contact.changed',
      'audience.targetGone',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await resubscribeContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/tags',
    role: 'admin',
    summary: 'Put a tag on a contact by name (get-or-create)',
    description: md(
      'Puts the tag of this name on the contact: the organization’s tag of that name (compared case-insensitively after trimming) or, when there is none, a new one (get-or-create).',
      'Answers 201 when the contact gains the tag (the tag-added automation hook fires), 200 with `added: false` when it already carried it.',
      TAG_CAP.replace('the field', '`name`'),
      CONTACT_WRITE,
      CONTACT_TENANCY,
    ),
    params: ContactParams,
    body: TagBody,
    responses: {
      201: json(TagContactResult, 'The contact gained the tag'),
      200: json(TagContactResult, 'The contact already carried the tag'),
    },
    errors: [
      'contact.notFound',
      'contact.changed',
      'audience.targetGone',
      'write.contended',
    ],
    handle: async (deps, { caller, params, body }) => {
      const result = await tagContact(
        deps,
        caller.orgId,
        params.contactId,
        body,
      );
      return result.added ? created(result) : ok(result);
    },
  }),
  route({
    method: 'DELETE',
    path: '/contacts/{contactId}/tags/{tagId}',
    role: 'admin',
    summary: 'Take a tag off a contact',
    description: md(
      'Takes the tag off the contact: 200 with `removed` true, or false when the contact did not carry it (nothing changes). The tag itself stays in the organization.',
      'An unknown tag id, or one of another organization, answers 404 `tag.notFound`; a contact likewise 404 `contact.notFound` (Authentication, rule 5).',
      CONTACT_WRITE,
    ),
    params: v.object({
      ...ContactParams.entries,
      ...idParams('tagId').entries,
    }),
    responses: { 200: json(UntagContactResult, 'The contact, after the call') },
    errors: [
      'tag.notFound',
      'contact.notFound',
      'contact.changed',
      'audience.targetGone',
    ],
    handle: async (deps, { caller, params }) =>
      ok(
        await untagContact(deps, caller.orgId, params.contactId, params.tagId),
      ),
  }),
];
