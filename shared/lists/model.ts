/**
 * List model: a named audience of contacts within an organization.
 */
import type { ContactStatus } from '../audience/model.ts';

/** A list of contacts. */
export interface List {
  id: string;
  name: string;
  createdAt: string;
  /** Contacts in the list, any status; maintained as a counter. */
  contactCount: number;
  /** Contacts per status; maintained as counters with the total. */
  statusCounts: Record<ContactStatus, number>;
}
