/**
 * Routes of the `settings` group: sending settings, the address book of
 * sender identities, and the double opt-in settings.
 */
import * as v from 'valibot';
import { created, ok } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import {
  createIdentity,
  deleteIdentity,
  listIdentities,
  updateIdentity,
} from '../../shared/sending/identities.ts';
import {
  OptinTestSendBody,
  testSendOptin,
  UpdateOptinBody,
  updateOptinSettings,
} from '../../shared/settings/optin-settings.ts';
import {
  getSettings,
  SenderName,
  UpdateSendingBody,
  updateSendingSettings,
} from '../../shared/settings/settings.ts';
import { EmailAddress, idParams } from '../../shared/validation.ts';

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
    (body) => Object.values(body).some((value) => value !== undefined),
    'must change at least one of senderEmail, senderName, isDefault',
  ),
);

/** Every route of the settings group. */
export const settingsRoutes = [
  route({
    method: 'GET',
    path: '/settings',
    role: 'member',
    summary: 'Sending settings, opt-in settings and readiness',
    handle: async (deps, { caller }) =>
      ok(await getSettings(deps, caller.orgId)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/sending',
    role: 'admin',
    summary: 'Default sender address and name, postal address (null clears)',
    body: UpdateSendingBody,
    handle: async (deps, { caller, body }) =>
      ok(await updateSendingSettings(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/settings/identities',
    role: 'member',
    summary: 'The address book, default first',
    handle: async (deps, { caller }) =>
      ok(await listIdentities(deps, caller.orgId)),
  }),
  route({
    method: 'POST',
    path: '/settings/identities',
    role: 'admin',
    summary:
      'Add an address (the first one, or isDefault true, becomes the default)',
    body: CreateIdentityBody,
    handle: async (deps, { caller, body }) =>
      created(await createIdentity(deps, caller.orgId, body)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/identities/{identityId}',
    role: 'admin',
    summary: 'Change an address or name, or promote it with isDefault true',
    params: IdentityParams,
    body: UpdateIdentityBody,
    handle: async (deps, { caller, params, body }) =>
      ok(await updateIdentity(deps, caller.orgId, params.identityId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/settings/identities/{identityId}',
    role: 'admin',
    summary: 'Remove an address (rules 1, 3 and 4)',
    params: IdentityParams,
    handle: async (deps, { caller, params }) =>
      ok(await deleteIdentity(deps, caller.orgId, params.identityId)),
  }),
  route({
    method: 'PATCH',
    path: '/settings/optin',
    role: 'admin',
    summary:
      'Double opt-in: required, subject, content (must contain {{confirmationUrl}})',
    body: UpdateOptinBody,
    handle: async (deps, { caller, body }) =>
      ok(await updateOptinSettings(deps, caller.orgId, body)),
  }),
  route({
    method: 'POST',
    path: '/settings/optin/test-send',
    role: 'admin',
    summary:
      'Send the confirmation email to one address, through the real guards',
    body: OptinTestSendBody,
    handle: async (deps, { caller, body }) =>
      ok(await testSendOptin(deps, caller.orgId, body)),
  }),
];
