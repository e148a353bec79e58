/**
 * Ports of the audience: lists, their contacts (with the counters a change
 * moves), the organization's tags, and where audience events go. Sending a
 * confirmation also needs the settings (opt-in, sending setup); a topic
 * link needs the topics.
 */
import type { FieldsDeps } from '../fields/ports.ts';
import type { Page, PageRequest, ReadOptions } from '../ports.ts';
import type { SettingsDeps } from '../settings/ports.ts';
import type { TopicsDeps } from '../topics/ports.ts';
import type { AudienceEvent } from './events.ts';
import type {
  Contact,
  ContactStatus,
  ContactWriteOrigin,
  List,
  Tag,
  TagRef,
} from './model.ts';

/** Lists of contacts. */
export interface ListRepository {
  /** Creates the list; `ConflictError` when the name is taken in the organization. */
  create(orgId: string, list: List): Promise<void>;
  get(orgId: string, listId: string): Promise<List | undefined>;
  /** Newest first. */
  page(orgId: string, request: PageRequest): Promise<Page<List>>;
}

/** A change of one contact: `before` undefined for a new contact. */
export interface ContactChange {
  before?: Contact;
  after: Contact;
  /**
   * The path writing it (default `change`: unsaid). The stored contact
   * remembers the origin of its last write, so that the write of an import
   * starts no automation and the next write by any other path does, and
   * its activity says how each change came.
   */
  origin?: ContactWriteOrigin;
}

/** Where a listing resumes: after this email, that many matches before. */
export interface ContactPosition {
  after: string;
  before: number;
}

/** A page of contacts, and whether its total is the whole count. */
export interface ContactPage extends Page<Contact> {
  /**
   * False when a counted listing stopped at the read budget: `total` then
   * counts the matches up to `scannedThrough`, the last email read.
   */
  exact: boolean;
  scannedThrough?: string;
}

/** Filters of a contact listing. */
export interface ContactFilter {
  status?: ContactStatus;
  tagId?: string;
  /** Case-insensitive substring of the email, first or last name. */
  search?: string;
  /**
   * Keeps only the contacts it accepts, applied as they are read (a
   * segment's conditions): the listing is then a counted one.
   */
  matches?: (contact: Contact) => boolean;
}

/** Contacts of lists, with the list and tag counters they move. */
export interface ContactRepository {
  /** The contact of a list with this normalized email (strongly consistent). */
  get(
    orgId: string,
    listId: string,
    email: string,
  ): Promise<Contact | undefined>;
  /**
   * Several contacts of one list by email, keyed by email: strongly
   * consistent, 100 keys a request, a few requests in flight.
   */
  getMany(
    orgId: string,
    listId: string,
    emails: string[],
  ): Promise<Map<string, Contact>>;
  findById(orgId: string, contactId: string): Promise<Contact | undefined>;
  /**
   * Whether the organization has a contact of this id (its id pointer
   * alone, strongly consistent: one small read).
   */
  exists(orgId: string, contactId: string): Promise<boolean>;
  /**
   * Stores a few changes and moves every counter they imply (list totals
   * per status, tag carriers) in one transaction; each write is conditional
   * on the version read. `ConflictError` when a contact changed meanwhile.
   */
  save(orgId: string, changes: ContactChange[]): Promise<void>;
  /**
   * Stores many changes in as few transactions as fit, each as `save` does.
   * Returns the changes that conflicted: those, and only those, were not
   * written (re-read them and try again).
   */
  saveMany(orgId: string, changes: ContactChange[]): Promise<ContactChange[]>;
  /**
   * A page of a list's contacts, by email. With `knownTotal` (from the
   * list's or the tag's counters) it reads only up to the page's end: a tag
   * filter through the tag index. Without, it counts the matches, reading
   * at most `CONTACT_SCAN_BUDGET` (model.ts) contacts (or tag index entries) per call.
   */
  page(
    orgId: string,
    listId: string,
    filter: ContactFilter,
    request: PageRequest,
    knownTotal?: number,
    /** Start after this position (a cursor): the offset is not read. */
    position?: ContactPosition,
  ): Promise<ContactPage>;
  /**
   * Brings the tag index in line with a committed write of a contact: an
   * entry for each tag it gained, none for each it lost (all of them when
   * `after` is undefined: the contact was removed). Idempotent.
   */
  indexTags(
    orgId: string,
    before: Contact | undefined,
    after: Contact | undefined,
  ): Promise<void>;
  /**
   * Removes a contact (an erasure) and moves every counter it held — its
   * list's, its tags', its address's declined topics' — off by one, in one
   * transaction conditional on the version read: `ConflictError` when it
   * changed meanwhile (read it again).
   */
  remove(orgId: string, contact: Contact): Promise<void>;
  /** The contacts of an address in every list of the organization, oldest first. */
  ofAddress(orgId: string, email: string): Promise<Contact[]>;
}

/** The organization's tags. */
export interface TagRepository {
  /** Creates a tag; `ConflictError` when the name is taken, case-insensitively. */
  create(orgId: string, tag: Tag): Promise<void>;
  get(orgId: string, tagId: string): Promise<Tag | undefined>;
  /** Tags by id; unknown ids are left out. */
  getMany(orgId: string, tagIds: string[]): Promise<Tag[]>;
  /**
   * How many contacts of a list carry a tag, exact at once; undefined when
   * the organization has no such tag.
   */
  countInList(
    orgId: string,
    tagId: string,
    listId: string,
    /** Only its subscribed carriers (a kept counter too). */
    options?: { subscribed?: boolean },
  ): Promise<number | undefined>;
  /**
   * The names of tags by id (unknown ids left out). A tag is never renamed
   * nor deleted, so a container may keep the names it has read.
   */
  refs(orgId: string, tagIds: string[]): Promise<Map<string, TagRef>>;
  /** Tags by name, keyed by the normalized name; unknown names are left out. */
  findByNames(orgId: string, names: string[]): Promise<Map<string, TagRef>>;
  /** Newest first, with contact counts. */
  page(orgId: string, request: PageRequest): Promise<Page<Tag>>;
}

/**
 * Where audience events go: the hooks automation plugs into. Fed from
 * committed writes (the table's change stream), at least once: a record
 * delivered again publishes its events again.
 */
export interface AudienceEvents {
  publish(events: AudienceEvent[]): Promise<void>;
}

/**
 * The organization's suppressed addresses (kept by delivery, from SES's
 * bounces and complaints, imports and its own list): nothing is sent to
 * them, and they are never subscribed again while suppressed.
 */
export interface SuppressionLookup {
  /**
   * The suppressions among these normalized addresses, by email (one key
   * read per address); strongly consistent unless `consistent` is false.
   */
  suppressions(
    orgId: string,
    emails: readonly string[],
    options?: ReadOptions,
  ): Promise<Map<string, Suppression>>;
}

/** Why an address is suppressed. */
export const SUPPRESSION_REASONS = [
  /** A permanent bounce: SES's, or a contact set or imported `bounced`. */
  'bounce',
  /** A complaint: SES's, or a contact set or imported `complained`. */
  'complaint',
  /** Added by hand (`POST /suppressions`). */
  'manual',
  /** Brought from another provider's list (`POST /suppressions`). */
  'imported',
  /** The person was erased: only the address key remains. */
  'erased',
] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * Who said so, where not SES: a bulk import line, or a call (a contact's
 * status set by hand, `POST /suppressions`, an erase).
 */
export type SuppressionSource = 'import' | 'api';

/** An address nothing is sent to again, in one organization. */
export interface Suppression {
  /** Normalized (trimmed, lower-cased). */
  email: string;
  reason: SuppressionReason;
  /** When SES reported it, or when the import or call that said so ran. */
  at: string;
  /** The message that bounced or was complained about (SES's reports). */
  messageId?: string;
  /** Set when not SES but a bulk import or a call set it. */
  source?: SuppressionSource;
  /**
   * Set when read, once the person was erased: the item keeps no address
   * (its reason stays, `erased` only when it had none).
   */
  erased?: true;
}

/** The suppressions, read and written (delivery's store). */
export interface SuppressionStore extends SuppressionLookup {
  /**
   * Suppresses the addresses not suppressed yet; one already suppressed
   * keeps its first reason (the first entry of an address wins). Each
   * suppression is written with its log entry and the log's count, in one
   * transaction. Idempotent: answers the addresses it suppressed now, and
   * the suppression each address has after the call.
   */
  suppress(
    orgId: string,
    suppressions: readonly Suppression[],
  ): Promise<{ added: string[]; stored: Map<string, Suppression> }>;
  /**
   * An erased person's address: its suppression stays, under the address
   * key alone — its reason if it had one, else `erased` (at `at`) — and
   * neither it, its log entry nor its lifts keep the address. Idempotent;
   * answers how many items it wrote.
   */
  forgetAddress(orgId: string, email: string, at: string): Promise<number>;
}

/**
 * Where an unsubscribe through a campaign's link is counted (the campaign's
 * statistics, kept by campaigns).
 */
export interface CampaignUnsubscribeCounter {
  /**
   * Counts the unsubscribe of one recipient of a campaign, once per
   * recipient: false when it was counted before (or the contact was not a
   * recipient of that campaign).
   */
  recordUnsubscribe(
    orgId: string,
    campaignId: string,
    contactId: string,
    at: string,
  ): Promise<boolean>;
}

/** What the audience needs. */
export interface AudienceDeps extends SettingsDeps, TopicsDeps, FieldsDeps {
  lists: ListRepository;
  contacts: ContactRepository;
  tags: TagRepository;
  audienceEvents: AudienceEvents;
  delivery: SuppressionStore;
}
