/**
 * Ports of the export of a person: what the organization holds about one
 * address, read across its lists, topics, sequences and campaigns. One
 * reader, since an export reads items that belong to many areas, each by
 * key or by a paged listing of the organization (never a scan).
 */
import type { ActivityRepository } from '../activity/ports.ts';
import type { Contact } from '../audience/model.ts';
import type { SuppressionLookup, TagRepository } from '../audience/ports.ts';
import type { OrganizationRepository } from '../organizations/ports.ts';
import type { CoreDeps } from '../ports.ts';
import type { Enrolment } from '../sequences/model.ts';

/** A contact of the address, with the name of its list. */
export interface ExportContactRecord {
  contact: Contact;
  listName: string;
}

/** A topic the address declined: the opt-out and the topic's name. */
export interface ExportTopicRecord {
  topicId: string;
  name: string;
  /** The contact it was recorded from (by the API or a link). */
  contactId: string;
  optedOutAt: string;
}

/** A journey of one of the contacts, with its sequence's name. */
export interface ExportJourneyRecord {
  sequenceName: string;
  enrolment: Enrolment;
}

/**
 * One campaign's mail to one of the contacts: the sender's claim and what
 * SES said of the message since (each kind of event at its first time).
 */
export interface ExportMailRecord {
  campaignId: string;
  campaignName: string;
  /** The campaign's subject as written (Liquid: rendered per recipient). */
  subject: string;
  /** The series whose step made the campaign, if one did. */
  seriesId: string | null;
  listId: string;
  contactId: string;
  /** When the sender claimed it, just before handing it to SES. */
  claimedAt?: string;
  /** SES's id of the message: it took it. */
  messageId?: string;
  /** SES refused it for this address, for good. */
  refused?: boolean;
  deliveredAt?: string;
  openedAt?: string;
  clickedAt?: string;
  bouncedAt?: string;
  complainedAt?: string;
  rejectedAt?: string;
  unsubscribedAt?: string;
  /** The URLs of the links it clicked (each once). */
  clickedLinks: string[];
}

/** Reads what the organization holds about one address. */
export interface ExportReader {
  /** The address a contact id names; undefined when it names none here. */
  addressOf(orgId: string, contactId: string): Promise<string | undefined>;
  /** The contacts of the address in every list of the organization. */
  contactsOf(orgId: string, email: string): Promise<ExportContactRecord[]>;
  /** The topics the address declined (opt-outs are kept by address). */
  topicOptOutsOf(orgId: string, email: string): Promise<ExportTopicRecord[]>;
  /** The journeys of these contacts through the organization's sequences. */
  journeysOf(
    orgId: string,
    contactIds: readonly string[],
  ): Promise<ExportJourneyRecord[]>;
  /**
   * The campaign mail of these contacts: every campaign of the
   * organization that started a send to the list of one of them.
   */
  mailOf(
    orgId: string,
    contacts: readonly { id: string; listId: string }[],
  ): Promise<ExportMailRecord[]>;
}

/** What an export needs. */
export interface ExportDeps extends Pick<CoreDeps, 'clock'> {
  exportReader: ExportReader;
  /** Each contact's activity, read whole. */
  activity: Pick<ActivityRepository, 'page'>;
  /** The address's suppression, if any. */
  delivery: Pick<SuppressionLookup, 'suppressions'>;
  tags: Pick<TagRepository, 'refs'>;
  organizations: Pick<OrganizationRepository, 'get'>;
}
