/**
 * Routes of the `contacts` group: contacts of lists, single adds with
 * double opt-in, the bulk import, subscription status and contact tags.
 */
import * as v from 'valibot';
import { importContacts } from '../../shared/audience/bulk-import.ts';
import {
  AddContactBody,
  BulkImportBody,
  ContactQuery,
  TagBody,
  UpdateContactBody,
} from '../../shared/audience/contact.schema.ts';
import {
  addContact,
  getContact,
  listContacts,
  resubscribeContact,
  unsubscribeContact,
  updateContact,
} from '../../shared/audience/contacts.ts';
import { tagContact, untagContact } from '../../shared/audience/tags.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';
import { idParams } from '../../shared/validation.ts';

const ContactParams = idParams('contactId');

/** Every route of the contacts group. */
export const contactRoutes = [
  route({
    method: 'GET',
    path: '/contacts',
    role: 'member',
    summary:
      'Contacts of a list, by email; filters: status, tagId, search (email and names)',
    query: ContactQuery,
    handle: async (deps, { caller, query }) =>
      paginated(await listContacts(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/contacts/{contactId}',
    role: 'member',
    summary: 'One contact with its tags',
    params: ContactParams,
    handle: async (deps, { caller, params }) =>
      ok(await getContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'PATCH',
    path: '/contacts/{contactId}',
    role: 'admin',
    summary: 'Change first name, last name (null clears) or status',
    params: ContactParams,
    body: UpdateContactBody,
    handle: async (deps, { caller, params, body }) =>
      ok(await updateContact(deps, caller.orgId, params.contactId, body)),
  }),
  route({
    method: 'POST',
    path: '/lists/{listId}/contacts',
    role: 'admin',
    summary:
      'Add or upsert one contact; double opt-in sends a confirmation email, otherwise the contact joins at once',
    params: idParams('listId'),
    body: AddContactBody,
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
    params: idParams('listId'),
    body: BulkImportBody,
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
    params: ContactParams,
    handle: async (deps, { caller, params }) =>
      ok(await unsubscribeContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/resubscribe',
    role: 'admin',
    summary: 'Subscribe an unsubscribed contact again',
    params: ContactParams,
    handle: async (deps, { caller, params }) =>
      ok(await resubscribeContact(deps, caller.orgId, params.contactId)),
  }),
  route({
    method: 'POST',
    path: '/contacts/{contactId}/tags',
    role: 'admin',
    summary: 'Put a tag on a contact by name (get-or-create)',
    params: ContactParams,
    body: TagBody,
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
    params: v.object({
      ...ContactParams.entries,
      ...idParams('tagId').entries,
    }),
    handle: async (deps, { caller, params }) =>
      ok(
        await untagContact(deps, caller.orgId, params.contactId, params.tagId),
      ),
  }),
];
