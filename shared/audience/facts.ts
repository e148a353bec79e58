/**
 * Application logic of audience facts: what a committed contact write
 * means for automation. Called once per write the table's change stream
 * delivers (never by the code that writes), so a crash between a write and
 * its events cannot lose them; agnostic to where the write is read from.
 */
import type { AudienceEvent } from './events.ts';
import type { Contact, ContactWriteOrigin } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** One committed write of a contact: the item before and after it. */
export interface ContactWrite {
  orgId: string;
  /** Undefined for a new contact. */
  before?: Contact;
  after: Contact;
  origin: ContactWriteOrigin;
}

/** The events a change implies: a first join, each new tagging. */
export const eventsOf = (
  orgId: string,
  before: Contact | undefined,
  after: Contact,
  at: string,
): AudienceEvent[] => {
  const events: AudienceEvent[] = [];
  if (after.joinedAt && !before?.joinedAt) {
    events.push({
      type: 'contact.joinedList',
      orgId,
      listId: after.listId,
      contactId: after.id,
      at,
    });
  }
  for (const tagId of after.tagIds) {
    if (!before?.tagIds.includes(tagId)) {
      events.push({
        type: 'contact.tagged',
        orgId,
        listId: after.listId,
        contactId: after.id,
        tagId,
        at,
      });
    }
  }
  return events;
};

/**
 * The events of one committed write. An import's write implies none (the
 * spec: an import starts no automation); the write after it, by any other
 * path, is compared with what the import left, so only what it adds counts.
 * Each event is dated by the write (`updatedAt`, the clock of the writer).
 */
export const factsOf = (write: ContactWrite): AudienceEvent[] =>
  write.origin === 'import'
    ? []
    : eventsOf(write.orgId, write.before, write.after, write.after.updatedAt);

/**
 * Publishes the events of one committed write. Idempotent as far as the
 * stream goes: a record delivered again publishes the same events again,
 * so `AudienceEvents` implementations must tolerate a repeat.
 */
export const publishContactFacts = async (
  deps: Pick<Deps, 'audienceEvents'>,
  write: ContactWrite,
): Promise<AudienceEvent[]> => {
  const events = factsOf(write);
  if (events.length > 0) await deps.audienceEvents.publish(events);
  return events;
};
