/**
 * The API view of contacts: fields with explicit nulls, tags named.
 */
import type { Contact, ContactStatus, TagRef } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** A contact as the API shows it. */
export interface ContactView {
  id: string;
  listId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: ContactStatus;
  tags: TagRef[];
  optinAt: string | null;
  optinIp: string | null;
  confirmedAt: string | null;
  confirmedIp: string | null;
  joinedAt: string | null;
  unsubscribedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Builds the API view of a contact, naming its tags. */
export const contactView = (
  contact: Contact,
  tagsById: Map<string, TagRef>,
): ContactView => ({
  id: contact.id,
  listId: contact.listId,
  email: contact.email,
  firstName: contact.firstName ?? null,
  lastName: contact.lastName ?? null,
  status: contact.status,
  tags: contact.tagIds.flatMap((id) => {
    const tag = tagsById.get(id);
    return tag ? [{ id: tag.id, name: tag.name }] : [];
  }),
  optinAt: contact.optinAt ?? null,
  optinIp: contact.optinIp ?? null,
  confirmedAt: contact.confirmedAt ?? null,
  confirmedIp: contact.confirmedIp ?? null,
  joinedAt: contact.joinedAt ?? null,
  unsubscribedAt: contact.unsubscribedAt ?? null,
  createdAt: contact.createdAt,
  updatedAt: contact.updatedAt,
});

/** The views of contacts, with one read for all their tags. */
export const contactViews = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  contacts: Contact[],
): Promise<ContactView[]> => {
  const tags = await deps.tags.getMany(
    orgId,
    contacts.flatMap((c) => c.tagIds),
  );
  const byId = new Map(tags.map((tag) => [tag.id, tag]));
  return contacts.map((contact) => contactView(contact, byId));
};

/** The view of one contact, its tags named. */
export const contactViewOf = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  contact: Contact,
): Promise<ContactView> => {
  const tags = await deps.tags.getMany(orgId, contact.tagIds);
  return contactView(contact, new Map(tags.map((tag) => [tag.id, tag])));
};
