/**
 * Audience model: lists, their contacts (one per list and email, as in
 * Mailchimp's audiences) and the organization's tags.
 */
import * as v from 'valibot';
import type { FieldValue } from '../fields/model.ts';
import { ViewId } from '../validation.ts';

/** Where a contact stands with its list. */
export const CONTACT_STATUSES = [
  'pending',
  'subscribed',
  'unsubscribed',
  'bounced',
  'complained',
] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/** One sign-up through a hosted page: the proof of consent kept on the contact. */
export interface ConsentRecord {
  pageId: string;
  pageVersion: number;
  /** The consent wording the visitor saw, as shown. */
  consentText: string;
  ip?: string;
  userAgent?: string;
  referrer?: string;
  /**
   * The custom fields the form asked, as shown (label) and whether each
   * was required; absent when it asked none.
   */
  askedFields?: { key: string; label: string; required: boolean }[];
  signedUpAt: string;
  /** Set when the confirmation link of this sign-up is followed. */
  confirmedAt?: string;
}

/** The names a contact carries. */
export type ContactName = 'firstName' | 'lastName';

/**
 * `contact` with `given` names written by a caller with a key: they are no
 * longer a sign-up form's (see `Contact.signupNames`).
 */
export const withNamesGiven = (
  contact: Contact,
  given: readonly ContactName[],
): Contact => {
  const { signupNames, ...rest } = contact;
  const left = (signupNames ?? []).filter((name) => !given.includes(name));
  return left.length ? { ...rest, signupNames: left } : rest;
};

/** How many consent records a contact keeps (the most recent). */
export const MAX_CONSENT_RECORDS = 10;

/** A contact of one list. The email, normalized, is unique in the list. */
export interface Contact {
  id: string;
  listId: string;
  /** Trimmed and lower-cased. */
  email: string;
  firstName?: string;
  lastName?: string;
  status: ContactStatus;
  tagIds: string[];
  optinAt?: string;
  optinIp?: string;
  confirmedAt?: string;
  confirmedIp?: string;
  /**
   * When the contact first became subscribed to the list. Set once: the
   * list-joined hook fires exactly when it is set (never for imports).
   */
  joinedAt?: string;
  unsubscribedAt?: string;
  /** The nonce of the one confirmation link that may still confirm. */
  confirmationNonce?: string;
  /** Its sign-ups through hosted pages, oldest first (at most 10). */
  consents?: ConsentRecord[];
  /**
   * The names that were typed on a public sign-up form and that no caller
   * with a key has written since: a stranger's text, so a confirmation
   * email never merges them (they are shown, and merged once confirmed).
   */
  signupNames?: ContactName[];
  /** Custom field values by field key (see `shared/fields/`). */
  fields?: Record<string, FieldValue>;
  createdAt: string;
  updatedAt: string;
  /** Optimistic-lock version; every write checks and bumps it. */
  version: number;
}

/**
 * The paths that write a contact, as its stored item remembers the last
 * one: a call with an API key, a bulk import (which starts no automation),
 * a hosted sign-up form, the confirmation link, the unsubscribe page of an
 * email's link, a mail client's one-click unsubscribe (RFC 8058), or a
 * bounce or complaint SES reported. A contact's activity says which.
 */
export const CONTACT_WRITE_PATHS = [
  'api',
  'import',
  'form',
  'confirmation',
  'link',
  'one_click',
  'delivery',
] as const;
export type ContactWritePath = (typeof CONTACT_WRITE_PATHS)[number];

/**
 * The path that wrote a contact last: one of {@link CONTACT_WRITE_PATHS},
 * or `change` when the item does not say (written before the path was
 * recorded).
 */
export type ContactWriteOrigin = ContactWritePath | 'change';

/** A list of contacts: a named audience within an organization. */
export interface List {
  id: string;
  name: string;
  createdAt: string;
  /** Contacts in the list, any status; maintained as a counter. */
  contactCount: number;
  /** Contacts per status; maintained as counters with the total. */
  statusCounts: Record<ContactStatus, number>;
}

/** A tag of the organization. */
export interface Tag {
  id: string;
  name: string;
  createdAt: string;
  /** Contacts carrying the tag, in any list and status. */
  contactCount: number;
}

/** A tag's identity, without its counter (as contacts and tag calls name it). */
export const TagRef = v.pipe(
  v.object({ id: ViewId, name: v.string() }),
  v.title('TagRef'),
);
export type TagRef = v.InferOutput<typeof TagRef>;

/** Normalizes a tag or topic name for uniqueness (case-insensitive). */
export const tagNameKey = (name: string): string => name.trim().toLowerCase();

/**
 * Most contacts (or tag index entries) one counted listing reads in a call
 * (about 2.5 MB): a search, or a tag with a status, stops there and says
 * so, so that a call costs the same whatever the list's size.
 */
export const CONTACT_SCAN_BUDGET = 5000;
