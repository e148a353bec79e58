/**
 * Schemas of the audience endpoints: contacts, tags and the bulk import.
 */
import * as v from 'valibot';
import { FieldValuesInput } from '../fields/values.ts';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  EmailAddress,
  Id,
  IsoDateOrInstant,
  lineText,
  PageQuery,
} from '../validation.ts';
import { CONTACT_STATUSES } from './model.ts';

/** Longest first or last name (spec, Limits). */
export const MAX_NAME_LENGTH = 100;
/**
 * Most tags one contact may carry, on every path (single add, tag call,
 * bulk line). With it, any change of one contact writes at most 53 items
 * (the contact, its id pointer, its list's counters, 50 tag counters), so it
 * always fits one 100-item transaction.
 */
export const MAX_TAGS_PER_CONTACT = 50;
/** Most tags one request line may name. */
export const MAX_TAGS_PER_LINE = MAX_TAGS_PER_CONTACT;
/** Longest name in UTF-8 bytes (100 characters of any script fit). */
export const MAX_NAME_BYTES = 400;

/**
 * A person's or a tag's name: one line (no control character, no line
 * break, no lone surrogate), at most 100 characters and 400 bytes.
 */
const nameText = () =>
  v.pipe(
    lineText(MAX_NAME_BYTES),
    v.trim(),
    v.maxLength(
      MAX_NAME_LENGTH,
      `must be at most ${MAX_NAME_LENGTH} characters`,
    ),
  );

const Name = nameText();

/** A tag name: 1 to 100 characters once trimmed, one line. */
export const TagName = v.pipe(nameText(), v.minLength(1, 'must not be empty'));

const TagNames = v.pipe(
  v.array(TagName, 'must be an array of tag names'),
  v.maxLength(MAX_TAGS_PER_LINE, `must hold at most ${MAX_TAGS_PER_LINE} tags`),
);

const Status = v.picklist(
  CONTACT_STATUSES,
  `must be one of ${CONTACT_STATUSES.join(', ')}`,
);

/** An ISO 8601 date or date-time, stored as a full UTC timestamp. */
const IsoDate = IsoDateOrInstant;

const Ip = v.pipe(
  v.string('must be an IP address'),
  v.ip('must be an IP address'),
);

/** Body of POST /lists/{listId}/contacts. */
export const AddContactBody = v.object({
  email: EmailAddress,
  firstName: v.optional(Name),
  lastName: v.optional(Name),
  tags: v.optional(TagNames),
  /** Ask for a confirmation first; forced when the organization requires it. */
  doubleOptIn: v.optional(v.boolean('must be true or false')),
  /** The subscriber's IP address at sign-up, if the caller knows it. */
  optinIp: v.optional(Ip),
  fields: v.optional(FieldValuesInput),
});
export type AddContactInput = v.InferOutput<typeof AddContactBody>;

/** Body of PATCH /contacts/{contactId}: null clears a name. */
export const UpdateContactBody = v.pipe(
  v.object({
    firstName: v.optional(v.nullable(Name)),
    lastName: v.optional(v.nullable(Name)),
    status: v.optional(Status),
    fields: v.optional(FieldValuesInput),
  }),
  v.check(
    hasSomeField,
    'must change at least one of firstName, lastName, status, fields',
  ),
);
export type UpdateContactInput = v.InferOutput<typeof UpdateContactBody>;

/** Query of GET /contacts. */
export const ContactQuery = v.object({
  ...PageQuery.entries,
  listId: v.pipe(
    v.string('must be a string'),
    v.uuid('must be a valid id (UUID)'),
  ),
  status: v.optional(Status),
  tagId: v.optional(Id),
  search: v.optional(
    v.pipe(
      lineText(MAX_NAME_BYTES),
      v.trim(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(100, 'must be at most 100 characters'),
    ),
  ),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1024, 'is not a cursor this API gave'),
    ),
  ),
});
export type ContactQueryInput = v.InferOutput<typeof ContactQuery>;

/** Body of POST /tags and POST /contacts/{contactId}/tags. */
export const TagBody = v.object({ name: TagName });

/** One entry of a bulk import. */
export const ImportEntry = v.object({
  email: EmailAddress,
  firstName: v.optional(Name),
  lastName: v.optional(Name),
  tags: v.optional(TagNames),
  status: v.optional(Status),
  optinAt: v.optional(IsoDate),
  optinIp: v.optional(Ip),
  confirmedAt: v.optional(IsoDate),
  confirmedIp: v.optional(Ip),
  fields: v.optional(FieldValuesInput),
});
export type ImportEntryInput = v.InferOutput<typeof ImportEntry>;

/** Most entries of one bulk import (spec, Limits). */
export const MAX_IMPORT_ENTRIES = 500;

/** Body of POST /lists/{listId}/contacts/bulk; entries are checked one by one. */
export const BulkImportBody = v.object({
  contacts: v.pipe(
    v.array(v.unknown(), 'must be an array'),
    // An entry is checked on its own (a bad one is refused in the report,
    // more than 500 answer 413): the document still says what each takes.
    inJsonSchema({
      items: v.pipe(
        ImportEntry,
        inJsonSchema({ properties: { doubleOptIn: false } }),
      ),
      maxItems: MAX_IMPORT_ENTRIES,
    }),
  ),
});
