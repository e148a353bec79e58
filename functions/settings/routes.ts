/**
 * Routes of the `settings` group: sending settings, the address book of
 * sender identities, and the double opt-in settings.
 */

import * as v from 'valibot';
import {
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  sendingSetup,
  table,
} from '../../shared/bindings.ts';
import { created, ok } from '../../shared/http/responses.ts';
import { json, routeFor } from '../../shared/http/route.ts';
import { hasSomeField } from '../../shared/schema-notes.ts';
import {
  createIdentity,
  DeletedIdentity,
  deleteIdentity,
  IdentityView,
  listIdentities,
  updateIdentity,
} from '../../shared/sending/identities.ts';
import { OptinSettings } from '../../shared/settings/optin.ts';
import {
  OptinTestResult,
  OptinTestSendBody,
  testSendOptin,
  UpdateOptinBody,
  updateOptinSettings,
} from '../../shared/settings/optin-settings.ts';
import {
  getSettings,
  SenderName,
  SettingsView,
  UpdateSendingBody,
  updateSendingSettings,
} from '../../shared/settings/settings.ts';
import { EmailAddress, idParams } from '../../shared/validation.ts';

/** What the `settings` group's function may use. */
export const settingsBindings = [
  table({
    stores: [
      ...PIPELINE_STORES,
      'appSettings',
      'optinSettings',
      'identities',
      'domains',
      'campaignReferences',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
  }),
  // Opt-in test sends; the address book provisions the tenant.
  mail,
  linkSecret,
  sendingSetup,
  endpoints,
] as const;

/** The deps of the `settings` group's function. */
export type SettingsDeps = DepsOf<typeof settingsBindings>;

const route = routeFor<SettingsDeps>({ scope: 'settings' });

const IdentityParams = idParams('identityId');

const CreateIdentityBody = v.object({
  senderEmail: EmailAddress,
  senderName: v.optional(SenderName),
  isDefault: v.optional(v.boolean('must be true or false')),
});

const UpdateIdentityBody = v.pipe(
  v.object({
    senderEmail: v.optional(EmailAddress),
    senderName: v.optional(v.nullable(SenderName)),
    isDefault: v.optional(v.boolean('must be true or false')),
  }),
  v.check(
    hasSomeField,
    'must change at least one of senderEmail, senderName, isDefault',
  ),
);

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** The sender address rules, wherever an address is set. */
const SENDER_ADDRESS_RULE =
  'Sender address rule: once the organization has a verified domain, the address must be on it or on one of its subdomains, otherwise 400 `sender.notOnVerifiedDomain` naming both the verified domain and the address; before any domain is verified it is set freely. ' +
  "Whatever the domains, two addresses are refused (400 naming `senderEmail`): one on the application's own domain or a subdomain of it (`sender.applicationDomain`), and one on or under a domain another organization proved (`sender.domainOfAnotherOrganization`).";

/** Every change of the address book is one conditional write. */
const BOOK_RACE =
  'The address book changes by one conditional write: a change that races another is retried, and answers 409 `identities.changed` if it keeps losing.';

/** Every route of the settings group. */
export const settingsRoutes = [
  route({
    method: 'GET',
    path: '/settings',
    role: 'member',
    summary: 'Sending settings, opt-in settings and readiness',
    description: md(
      'The settings object: the sending settings, the double opt-in settings, and the readiness object (the same as `sending` of GET /me).',
      "`sending.senderEmail` and `sending.senderName` are those of the default identity (null without one); `sending.postalAddress` is kept on the organization. `sending.effectiveSender` is what really goes out, fallback included: the default identity once its address is on a verified domain of the organization (and the provider does not pause it), otherwise the application's own address with the default's name as display name. `sending.effectiveReplyTo` is our addition: the default address while mail goes out from the application's address, otherwise null.",
    ),
    responses: { 200: json(SettingsView, 'The settings object') },
    errors: ['organization.notFound'],
    handle: async (deps, { caller }) =>
      ok(await getSettings(deps, caller.orgId)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/sending',
    role: 'admin',
    summary:
      'Default sender address and name, postal address, time zone (null clears)',
    description: md(
      'Changes the default sender address, its name, the postal address and the time zone; at least one field. A field left out is unchanged; a field sent as null is cleared.',
      [
        "- `senderEmail` non-null sets the default address: it creates the identity when the address book is empty, promotes the identity of that address if there is one, or changes the default's address.",
        '- `senderEmail` null removes the default, and sending falls back to the application address; 400 `sending.severalAddresses` when the book holds more than one address, 400 `identity.usedByCampaigns` when a campaign names the default.',
        '- `senderName` alone renames the default; 400 `sending.noDefault` when no default exists.',
        '- `postalAddress` (at most 500 characters, newlines allowed) stays on the organization and feeds `{{postalAddress}}` in mail footers.',
        '- `timezone` is the IANA name of the zone sending times are read in (`Europe/Paris`, `America/New_York`, `UTC`): a sequence step’s `sendTimeMinutes` and a series’ days. An offset (`+02:00`) or an unknown name is 400 naming `timezone`; the case is corrected (`europe/paris` → `Europe/Paris`); null puts it back to `UTC`, the default.',
      ].join('\n'),
      SENDER_ADDRESS_RULE,
      BOOK_RACE,
      'The spec leaves the answer unstated: ours is the settings object after the change, as GET /settings reads it.',
    ),
    body: UpdateSendingBody,
    responses: {
      200: json(SettingsView, 'The settings object, after the change'),
    },
    errors: [
      'organization.notFound',
      'sender.applicationDomain',
      'sender.domainOfAnotherOrganization',
      'sender.notOnVerifiedDomain',
      'sending.severalAddresses',
      'sending.noDefault',
      'identity.usedByCampaigns',
      'identities.changed',
    ],
    handle: async (deps, { caller, body }) =>
      ok(await updateSendingSettings(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/settings/identities',
    role: 'member',
    summary: 'The address book, default first',
    description: md(
      'The whole address book, the default first, then in order of creation; an empty array when the book is empty.',
      'Exactly one identity is the default whenever the book is not empty (rule 5: sequences, sign-up confirmations and campaigns without `sendingIdentityId` are signed by it).',
    ),
    responses: {
      200: json(v.array(IdentityView), 'The address book, default first'),
    },
    errors: [],
    handle: async (deps, { caller }) =>
      ok(await listIdentities(deps, caller.orgId)),
  }),
  route({
    method: 'POST',
    path: '/settings/identities',
    role: 'admin',
    summary:
      'Add an address (the first one, or isDefault true, becomes the default)',
    description: md(
      'Adds an address to the book. The first address, or one added with `isDefault: true`, becomes the default. An address already in the book (compared case-insensitively) is 409 `identity.duplicate`.',
      SENDER_ADDRESS_RULE,
      BOOK_RACE,
    ),
    body: CreateIdentityBody,
    responses: { 201: json(IdentityView, 'The identity, added') },
    errors: [
      'sender.applicationDomain',
      'sender.domainOfAnotherOrganization',
      'sender.notOnVerifiedDomain',
      'identity.duplicate',
      'identities.changed',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createIdentity(deps, caller.orgId, body)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/identities/{identityId}',
    role: 'admin',
    summary: 'Change an address or name, or promote it with isDefault true',
    description: md(
      'Changes the address or the name (null clears the name), or promotes the identity to default with `isDefault: true`; at least one field. Another identity of the same address is 409 `identity.duplicate`.',
      'Rule 2: `isDefault: false` is refused with 400 `identity.cannotUnsetDefault` naming the address; make another address the default instead.',
      SENDER_ADDRESS_RULE,
      BOOK_RACE,
    ),
    params: IdentityParams,
    body: UpdateIdentityBody,
    responses: { 200: json(IdentityView, 'The identity, after the change') },
    errors: [
      'identity.notFound',
      'identity.cannotUnsetDefault',
      'identity.duplicate',
      'sender.applicationDomain',
      'sender.domainOfAnotherOrganization',
      'sender.notOnVerifiedDomain',
      'identities.changed',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateIdentity(deps, caller.orgId, params.identityId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/settings/identities/{identityId}',
    role: 'admin',
    summary: 'Remove an address (rules 1, 3 and 4)',
    description: md(
      'Removes an address from the book; answers its id.',
      [
        '1. The default cannot be deleted while other addresses remain: 400 `identity.defaultInUse` naming the address.',
        '3. Deleting the last address is allowed; sending falls back to the application address and `no_sender_identity` is reported (next to a real blocker).',
        '4. An address named by any campaign (any status) cannot be deleted: 400 `identity.usedByCampaigns` naming the campaigns. Point them elsewhere, or to the default with `sendingIdentityId` null, then delete.',
      ].join('\n'),
      BOOK_RACE,
    ),
    params: IdentityParams,
    responses: { 200: json(DeletedIdentity, 'The identity, removed') },
    errors: [
      'identity.notFound',
      'identity.defaultInUse',
      'identity.usedByCampaigns',
      'identities.changed',
    ],
    handle: async (deps, { caller, params }) =>
      ok(await deleteIdentity(deps, caller.orgId, params.identityId)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/optin',
    role: 'admin',
    summary:
      'Double opt-in: required, subject, content (must contain {{confirmationUrl}})',
    description: md(
      'Changes the double opt-in settings; at least one field. `required`: when true, double opt-in is forced, and `doubleOptIn: false` sent to the contact API has no effect. `subject` and `content`: the subject and HTML of the confirmation email.',
      '`content` must contain `{{confirmationUrl}}`, otherwise 400 `optin.confirmationUrlMissing` naming the missing variable. Variables available: `{{confirmationUrl}}` (required), `{{firstName}}`, `{{lastName}}`, `{{email}}`, `{{postalAddress}}`, `{{currentYear}}`; there is no unsubscribe variable.',
      "A content identical to the default is stored as empty, and `customized` is then false. A subject or content that does not parse, or does not render with sample values within the engine's limits, is 400 `template.invalid` naming the field, and nothing is stored.",
      'The spec leaves the answer unstated: ours is the opt-in settings after the change.',
    ),
    body: UpdateOptinBody,
    responses: {
      200: json(OptinSettings, 'The opt-in settings, after the change'),
    },
    errors: ['optin.confirmationUrlMissing', 'template.invalid'],
    handle: async (deps, { caller, body }) =>
      ok(await updateOptinSettings(deps, caller.orgId, body)),
  }),
  route({
    method: 'POST',
    path: '/settings/optin/test-send',
    role: 'admin',
    summary:
      'Send the confirmation email to one address, through the real guards',
    description: md(
      'Sends the confirmation email (the stored one, or the `subject` and `content` of the body) to one address, its subject prefixed with `[Test] `. It is a real send and passes the same guards; its confirmation link is a test link.',
      'Instead of failing, it answers a `status`: `sent` (our value for a success), `blocked` (sending switched off application-wide), `not_allowed` (any other blocker: organization not allowed, domain not verified, provider suspension) or `send_refused` (the provider refused the send).',
      'A `content` without `{{confirmationUrl}}` is 400 `optin.confirmationUrlMissing`; a subject or content that does not parse or render, 400 `template.invalid` naming the field.',
    ),
    body: OptinTestSendBody,
    responses: { 200: json(OptinTestResult, 'What became of the test send') },
    errors: [
      'optin.confirmationUrlMissing',
      'template.invalid',
      'organization.notFound',
    ],
    handle: async (deps, { caller, body }) =>
      ok(await testSendOptin(deps, caller.orgId, body)),
  }),
];
