/**
 * List model: a named audience of contacts within an organization.
 */

/** A list of contacts. */
export interface List {
  id: string;
  name: string;
  createdAt: string;
  /** Contacts currently in the list, maintained as a counter. */
  contactCount: number;
}
