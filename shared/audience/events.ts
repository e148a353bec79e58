/**
 * Domain events of the audience, the hooks automation plugs into: a contact
 * joining a list starts `list_joined` sequences, a new tagging starts
 * `tag_added` sequences. Each comes from a committed write (`facts.ts`, fed
 * by the table's change stream), once per real change, never for a bulk
 * import; a stream record delivered again repeats its events.
 */

/** A contact became subscribed to a list for the first time. */
export interface ContactJoinedList {
  type: 'contact.joinedList';
  orgId: string;
  listId: string;
  contactId: string;
  at: string;
}

/** A contact received a tag it did not carry. */
export interface ContactTagged {
  type: 'contact.tagged';
  orgId: string;
  listId: string;
  contactId: string;
  tagId: string;
  at: string;
}

/** Any audience event. */
export type AudienceEvent = ContactJoinedList | ContactTagged;
