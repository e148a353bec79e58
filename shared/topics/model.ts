/**
 * Topic model: a lasting editorial theme a reader can decline on its own,
 * without leaving the list. Opt-outs are kept by email address, so a reader
 * who declines a topic stops receiving it from every list of the
 * organization.
 */

/** A topic of an organization. */
export interface Topic {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
  /** Addresses that declined the topic; maintained as a counter. */
  optOutCount: number;
}

/** One address that declined a topic. */
export interface TopicOptOut {
  email: string;
  /** The contact it was recorded from (by API or link). */
  contactId: string;
  optedOutAt: string;
}
