/**
 * Application logic of tags: create, list, get-or-create by name, put on and
 * take off a contact.
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import { MAX_TAGS_PER_CONTACT } from './contact.schema.ts';
import { changeContact } from './contact-changes.ts';
import { ContactView, contactViewOf } from './contact-view.ts';
import { type Tag, TagRef, tagNameKey } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** A tag as the API shows it. */
export const TagView = v.pipe(
  v.object({
    id: ViewId,
    name: v.string(),
    contactCount: v.pipe(
      Count,
      v.description('Contacts carrying the tag, in any list and status'),
    ),
    createdAt: Timestamp,
  }),
  v.title('Tag'),
);
export type TagView = v.InferOutput<typeof TagView>;

/** The answer of POST /contacts/{contactId}/tags. */
export const TagContactResult = v.pipe(
  v.object({
    added: v.pipe(
      v.boolean(),
      v.description(
        'True when the contact gained the tag (201), false when it already carried it (200)',
      ),
    ),
    // The tag of that name, created if it did not exist.
    tag: TagRef,
    // The contact after the call.
    contact: ContactView,
  }),
  v.title('TagContactResult'),
);
export type TagContactResult = v.InferOutput<typeof TagContactResult>;

/** The answer of DELETE /contacts/{contactId}/tags/{tagId}. */
export const UntagContactResult = v.pipe(
  v.object({
    removed: v.pipe(
      v.boolean(),
      v.description(
        'True when the contact carried the tag, false when it did not (nothing changed)',
      ),
    ),
    tag: TagRef,
    // The contact after the call.
    contact: ContactView,
  }),
  v.title('UntagContactResult'),
);
export type UntagContactResult = v.InferOutput<typeof UntagContactResult>;

const view = (tag: Tag): TagView => ({
  id: tag.id,
  name: tag.name,
  contactCount: tag.contactCount,
  createdAt: tag.createdAt,
});

/** Creates a tag; a name taken case-insensitively answers 409. */
export const createTag = async (
  deps: Pick<Deps, 'tags' | 'ids' | 'clock'>,
  orgId: string,
  input: { name: string },
): Promise<TagView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun ? await deps.tags.get(orgId, id) : undefined;
  if (earlier) return view(earlier);
  const tag: Tag = {
    id,
    name: input.name,
    createdAt: deps.clock.now().toISOString(),
    contactCount: 0,
  };
  await deps.tags.create(orgId, tag);
  return view(tag);
};

/** A page of the organization's tags, newest first, with carrier counts. */
export const listTags = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<TagView>> => {
  const page = await deps.tags.page(orgId, request);
  return { total: page.total, items: page.items.map(view) };
};

/**
 * The tags of these names, created when missing (get-or-create). Names are
 * matched case-insensitively; a new tag keeps the first spelling given.
 */
export const resolveTags = async (
  deps: Pick<Deps, 'tags' | 'ids' | 'clock'>,
  orgId: string,
  names: string[],
): Promise<TagRef[]> => {
  const wanted = new Map<string, string>();
  for (const name of names) {
    if (!wanted.has(tagNameKey(name))) wanted.set(tagNameKey(name), name);
  }
  if (wanted.size === 0) return [];
  const found = await deps.tags.findByNames(orgId, [...wanted.values()]);
  for (const [key, name] of wanted) {
    if (found.has(key)) continue;
    try {
      const tag = await createTag(deps, orgId, { name });
      found.set(key, tag);
    } catch (error) {
      // Created meanwhile by someone else: take theirs.
      if (!(error instanceof ConflictError)) throw error;
      const again = await deps.tags.findByNames(orgId, [name]);
      const tag = again.get(key);
      if (!tag) throw error;
      found.set(key, tag);
    }
  }
  return [...wanted.keys()].flatMap((key) => {
    const tag = found.get(key);
    return tag ? [{ id: tag.id, name: tag.name }] : [];
  });
};

/**
 * Refuses a change that would bring a contact past the tag cap: a 400
 * naming `field`, raised before anything is written (tags included). A
 * change that adds no tag is never refused, so a contact stored over the
 * cap by older code can still be changed, untagged and unsubscribed.
 */
export const checkTagCap = (
  email: string,
  carried: number,
  count: number,
  field: string,
): void => {
  if (count <= MAX_TAGS_PER_CONTACT || count <= carried) return;
  const message = `a contact carries at most ${MAX_TAGS_PER_CONTACT} tags; this would bring ${email} to ${count}`;
  throw new ValidationError(`Invalid request: ${field}: ${message}`, [
    { field, message },
  ]);
};

/**
 * The tags a contact would carry with `names` added: ids of known tags,
 * and a stand-in for each name not yet a tag. Reads only.
 */
export const tagsWith = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  carried: string[],
  names: string[],
): Promise<Set<string>> => {
  const known = names.length
    ? await deps.tags.findByNames(orgId, names)
    : new Map<string, TagRef>();
  return new Set([
    ...carried,
    ...names.map(
      (name) => known.get(tagNameKey(name))?.id ?? `new:${tagNameKey(name)}`,
    ),
  ]);
};

/** Puts a tag (by name, get-or-create) on a contact; `added` false if it had it. */
export const tagContact = async (
  deps: Pick<Deps, 'tags' | 'contacts' | 'ids' | 'clock'>,
  orgId: string,
  contactId: string,
  input: { name: string },
): Promise<TagContactResult> => {
  // The contact first: a missing contact, or one at the tag cap, must not
  // leave a new tag behind.
  const found = await deps.contacts.findById(orgId, contactId);
  if (!found) {
    throw new NotFoundError('contact.notFound', `No contact ${contactId}`);
  }
  const wanted = await tagsWith(deps, orgId, found.tagIds, [input.name]);
  checkTagCap(found.email, found.tagIds.length, wanted.size, 'name');
  const [tag] = await resolveTags(deps, orgId, [input.name]);
  if (!tag) throw new Error('tag resolution returned nothing');
  const { before, after } = await changeContact(
    deps,
    orgId,
    () => deps.contacts.findById(orgId, contactId),
    (contact, now) => {
      if (contact.tagIds.includes(tag.id)) return contact;
      // Tagged meanwhile by others: the cap holds all the same.
      checkTagCap(
        contact.email,
        contact.tagIds.length,
        contact.tagIds.length + 1,
        'name',
      );
      return {
        ...contact,
        tagIds: [...contact.tagIds, tag.id].sort(),
        updatedAt: now,
      };
    },
    'api',
  );
  return {
    added: before !== after,
    tag,
    contact: await contactViewOf(deps, orgId, after),
  };
};

/** Takes a tag off a contact; `removed` false if it did not carry it. */
export const untagContact = async (
  deps: Pick<Deps, 'tags' | 'contacts' | 'clock'>,
  orgId: string,
  contactId: string,
  tagId: string,
): Promise<UntagContactResult> => {
  const tag = await deps.tags.get(orgId, tagId);
  if (!tag) throw new NotFoundError('tag.notFound', `No tag ${tagId}`);
  const { before, after } = await changeContact(
    deps,
    orgId,
    () => deps.contacts.findById(orgId, contactId),
    (contact, now) =>
      contact.tagIds.includes(tagId)
        ? {
            ...contact,
            tagIds: contact.tagIds.filter((id) => id !== tagId),
            updatedAt: now,
          }
        : contact,
    'api',
  );
  return {
    removed: before !== after,
    tag: { id: tag.id, name: tag.name },
    contact: await contactViewOf(deps, orgId, after),
  };
};
