/**
 * The API view of contacts: fields with explicit nulls, tags named.
 */
import * as v from 'valibot';
import { inJsonSchema } from '../schema-notes.ts';
import { Timestamp, ViewId } from '../validation.ts';
import { CONTACT_STATUSES, type Contact, TagRef } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** An optional instant of a contact: null until it happens. */
const When = (meaning: string) =>
  v.pipe(v.nullable(Timestamp), v.description(meaning));

/**
 * An IP address a contact was seen at (as checked when given, or as the
 * gateway saw it): null when unknown.
 */
const SeenAt = (meaning: string) =>
  v.pipe(
    v.nullable(
      v.pipe(
        v.string(),
        inJsonSchema({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }),
      ),
    ),
    v.description(meaning),
  );

/** One sign-up through a hosted page, as the contact keeps it. */
export const ConsentView = v.pipe(
  v.object({
    pageId: v.pipe(
      ViewId,
      v.description('The sign-up page (it may be deleted since)'),
    ),
    pageVersion: v.pipe(
      v.number(),
      v.description('The version of the page the visitor saw'),
    ),
    consentText: v.pipe(
      v.string(),
      v.description('The consent wording shown, as shown'),
    ),
    ip: SeenAt('The address the form was sent from'),
    userAgent: v.nullable(v.string()),
    referrer: v.pipe(
      v.nullable(v.string()),
      v.description('The Referer header the browser sent, if any'),
    ),
    askedFields: v.pipe(
      v.array(
        v.object({
          key: v.pipe(v.string(), v.description('The field key')),
          label: v.pipe(v.string(), v.description('Its label, as shown')),
          required: v.boolean(),
        }),
      ),
      v.description(
        'The custom fields the form asked (see /fields), in order; empty when it asked none',
      ),
    ),
    signedUpAt: Timestamp,
    confirmedAt: When(
      'When the confirmation link of this sign-up was followed',
    ),
  }),
  v.title('ConsentRecord'),
);

/** A contact as the API shows it: every field present, null when unset. */
export const ContactView = v.pipe(
  v.object({
    id: ViewId,
    listId: v.pipe(
      ViewId,
      v.description('The list of the contact: one contact per list and email'),
    ),
    email: v.pipe(
      v.string(),
      v.email(),
      v.description('Trimmed and lower-cased; unique in the list'),
    ),
    firstName: v.nullable(v.string()),
    lastName: v.nullable(v.string()),
    status: v.pipe(
      v.picklist(CONTACT_STATUSES),
      v.description(
        [
          'Where the contact stands with its list:',
          '- `pending`: awaiting its double opt-in confirmation; receives nothing;',
          '- `subscribed`: on the list, receives its emails;',
          '- `unsubscribed`: left the list (a link, or the API);',
          '- `bounced`, `complained`: the address bounced or complained; it cannot be subscribed again.',
        ].join('\n'),
      ),
    ),
    tags: v.pipe(
      v.array(TagRef),
      v.description('The tags the contact carries (at most 50)'),
    ),
    optinAt: When('When the contact signed up (the add, or an imported date)'),
    optinIp: SeenAt('The IP address the contact signed up from, if known'),
    confirmedAt: When('When the contact confirmed its double opt-in'),
    confirmedIp: SeenAt(
      'The IP address the confirmation link was opened from, if known',
    ),
    joinedAt: When(
      'When the contact first became subscribed to the list; set once',
    ),
    unsubscribedAt: When('When the contact last unsubscribed'),
    consents: v.pipe(
      v.array(ConsentView),
      v.description(
        'Its sign-ups through hosted sign-up pages, oldest first (the last 10): the proof of its consent. Empty for a contact added by the API or imported.',
      ),
    ),
    fields: v.pipe(
      v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
      v.description(
        'Its custom field values by field key (see /fields); empty when it holds none',
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('Contact'),
);
export type ContactView = v.InferOutput<typeof ContactView>;

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
  consents: (contact.consents ?? []).map((consent) => ({
    pageId: consent.pageId,
    pageVersion: consent.pageVersion,
    consentText: consent.consentText,
    ip: consent.ip ?? null,
    userAgent: consent.userAgent ?? null,
    referrer: consent.referrer ?? null,
    askedFields: (consent.askedFields ?? []).map(
      ({ key, label, required }) => ({ key, label, required }),
    ),
    signedUpAt: consent.signedUpAt,
    confirmedAt: consent.confirmedAt ?? null,
  })),
  fields: { ...contact.fields },
  createdAt: contact.createdAt,
  updatedAt: contact.updatedAt,
});

/** The views of contacts, with one read for all their tags' names. */
export const contactViews = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  contacts: Contact[],
): Promise<ContactView[]> => {
  const byId = await deps.tags.refs(
    orgId,
    contacts.flatMap((c) => c.tagIds),
  );
  return contacts.map((contact) => contactView(contact, byId));
};

/** The view of one contact, its tags named. */
export const contactViewOf = async (
  deps: Pick<Deps, 'tags'>,
  orgId: string,
  contact: Contact,
): Promise<ContactView> => {
  return contactView(contact, await deps.tags.refs(orgId, contact.tagIds));
};
